/**
 * The active health check of the lab load balancer: HTTPS GET /readyz on a backend, trusting the
 * cluster CA and presenting a client certificate when given one. Healthy means HTTP 200.
 */
import { type RequestOptions, request } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';

export type HealthTls = { caPem: string; certPem?: string; keyPem?: string };

export type ProbeResult = { ok: boolean; detail: string };

/** One TLS context per credentials: checks run every few hundred ms and parsing the key each time is costly. */
const contexts = new WeakMap<HealthTls, SecureContext>();

function contextFor(tls: HealthTls): SecureContext {
  let ctx = contexts.get(tls);
  if (!ctx) {
    ctx = createSecureContext({
      ca: tls.caPem,
      ...(tls.certPem && tls.keyPem && { cert: tls.certPem, key: tls.keyPem }),
    });
    contexts.set(tls, ctx);
  }
  return ctx;
}

/** `address` is host:port. Never rejects. */
export function probeReadyz(address: string, tls: HealthTls, timeoutMs: number): Promise<ProbeResult> {
  const [host, port] = splitAddress(address);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    // tls.connect takes a ready context; the https typings do not list it.
    const options: RequestOptions & { secureContext: SecureContext } = {
      host,
      port,
      path: '/readyz',
      method: 'GET',
      secureContext: contextFor(tls),
      agent: false,
    };
    const req = request(options, (res) => {
      res.resume();
      res.on('end', () => done({ ok: res.statusCode === 200, detail: `HTTP ${res.statusCode}` }));
      res.on('error', (err) => done({ ok: false, detail: err.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, detail: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => done({ ok: false, detail: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end();
  });
}

export function splitAddress(address: string): [string, number] {
  const i = address.lastIndexOf(':');
  const port = Number(address.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RangeError(`backend address "${address}" is not host:port`);
  }
  return [address.slice(0, i), port];
}
