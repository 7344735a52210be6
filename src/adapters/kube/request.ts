/**
 * Any-verb requests to the API server of a kubeconfig (transport.ts is GET-only, for collection).
 * client-node supplies TLS and authentication; node:https carries the request so ferry controls the
 * deadline and reads the raw JSON and the Status of a refusal (e.g. the DisruptionBudget cause of
 * a 429 eviction).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import { KubeApiError } from '../../ports/kube.js';
import type { LoadedKubeconfig } from './kubeconfig.js';
import { KubeNetworkError } from './transport.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** An HTTP error answer of any verb, with the Status details the server sent. */
export class KubeRequestError extends KubeApiError {
  readonly method: string;
  readonly causes: StatusCause[];

  constructor(opts: {
    method: string;
    status: number;
    reason?: string;
    message: string;
    path: string;
    address: string;
    causes: StatusCause[];
    retryAfterSeconds?: number;
  }) {
    super(opts);
    this.method = opts.method;
    this.causes = opts.causes;
    this.message = `${opts.address} ${opts.method} ${opts.path}: HTTP ${opts.status}${opts.reason ? ` ${opts.reason}` : ''}: ${opts.message}`;
    this.name = 'KubeRequestError';
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Default application/json; patches name their flavour. */
  contentType?: string;
  timeoutMs?: number;
  /** Return the body as text instead of parsing JSON (e.g. /readyz). */
  raw?: boolean;
}

export interface KubeRequester {
  readonly address: string;
  readonly server: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<unknown>;
}

export interface RequesterOptions {
  timeoutMs?: number;
  /**
   * Reuse connections between requests. client-node's agent closes each socket after its answer,
   * so every request pays a TLS handshake with a client certificate (mgmt restore: ~1,000 writes).
   * Off by default: probes and load-balancer checks must see a fresh connection each time.
   */
  keepAlive?: boolean;
}

export function createRequester(loaded: LoadedKubeconfig, defaults: RequesterOptions = {}): KubeRequester {
  const base = new URL(loaded.server);
  const address = `${base.hostname}:${base.port || (base.protocol === 'http:' ? '80' : '443')}`;
  const lib = base.protocol === 'http:' ? http : https;
  let agent: http.Agent | undefined;
  // Probes open a connection every few tens of ms: build the TLS context (parse the key) once per
  // credentials, not per connection. Credentials can change (exec plugins): keyed by their bytes.
  let context: { material: string; ctx: SecureContext } | undefined;
  const contextFor = (o: https.RequestOptions): SecureContext => {
    const material = [o.ca, o.cert, o.key, o.pfx, o.passphrase].map((v) => String(v ?? '')).join('\0');
    if (context?.material !== material) {
      context = {
        material,
        ctx: createSecureContext({
          ...(o.ca !== undefined && { ca: o.ca }),
          ...(o.cert !== undefined && { cert: o.cert }),
          ...(o.key !== undefined && { key: o.key }),
          ...(o.pfx !== undefined && { pfx: o.pfx }),
          ...(o.passphrase !== undefined && { passphrase: o.passphrase }),
        }),
      };
    }
    return context.ctx;
  };

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
    const url = new URL(base.href);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const reqOpts: https.RequestOptions = { method, headers: {} };
    await loaded.kc.applyToHTTPSOptions(reqOpts);
    agent ??= defaults.keepAlive ? keepAliveAgent(reqOpts.agent) : (reqOpts.agent as http.Agent | undefined);
    reqOpts.agent = agent;
    if (lib === https) (reqOpts as { secureContext?: SecureContext }).secureContext = contextFor(reqOpts);
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    reqOpts.headers = {
      ...reqOpts.headers,
      Accept: 'application/json',
      'User-Agent': 'ferry',
      ...(payload && {
        'Content-Type': opts.contentType ?? 'application/json',
        'Content-Length': payload.length,
      }),
    };
    const timeoutMs = opts.timeoutMs ?? defaults.timeoutMs ?? 15_000;
    const shown = `${url.pathname}${url.search}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        fn();
      };
      const deadline = setTimeout(() => {
        finish(() =>
          reject(
            new KubeNetworkError(`${address} ${method} ${shown}: no answer within ${timeoutMs} ms`, {
              code: 'ETIMEDOUT',
              remediation: `check that ${loaded.server} answers`,
            }),
          ),
        );
        req.destroy();
      }, timeoutMs);
      const req = lib.request(url, reqOpts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => finish(() => reject(err)));
        res.on('end', () =>
          finish(() => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              if (opts.raw) return resolve(text);
              try {
                resolve(text === '' ? {} : JSON.parse(text));
              } catch (err) {
                reject(new Error(`${address} ${method} ${shown}: the answer is not JSON`, { cause: err }));
              }
              return;
            }
            reject(requestError(method, status, text, shown, address, res.headers['retry-after']));
          }),
        );
      });
      req.on('error', (err) =>
        finish(() =>
          reject(
            new KubeNetworkError(`cannot reach the Kubernetes API server at ${address}: ${err.message}`, {
              ...((err as NodeJS.ErrnoException).code !== undefined && {
                code: (err as NodeJS.ErrnoException).code!,
              }),
              remediation: `check that ${loaded.server} (the kubeconfig's server) is the right address and that the API server is running`,
              cause: err,
            }),
          ),
        ),
      );
      if (payload) req.write(payload);
      req.end();
    });
  }

  return { address, server: loaded.server, request };
}

/**
 * The same agent with connections kept open. Only client-node's plain agent is replaced: a proxy
 * agent stays as it is. Node closes an idle socket before the server's announced keep-alive
 * timeout, so a write does not meet a socket the server is closing.
 */
function keepAliveAgent(given: https.RequestOptions['agent']): http.Agent | undefined {
  if (!(given instanceof https.Agent) || given.constructor !== https.Agent)
    return given as http.Agent | undefined;
  return new https.Agent({
    ...(given as unknown as { options: https.AgentOptions }).options,
    keepAlive: true,
  });
}

function requestError(
  method: string,
  status: number,
  text: string,
  path: string,
  address: string,
  retryAfter: string | undefined,
): KubeRequestError {
  let reason: string | undefined;
  let message = text.slice(0, 300);
  let causes: StatusCause[] = [];
  let retryAfterSeconds = retryAfter !== undefined ? Number(retryAfter) : undefined;
  try {
    const body = JSON.parse(text) as {
      kind?: string;
      reason?: string;
      message?: string;
      details?: { causes?: StatusCause[]; retryAfterSeconds?: number };
    };
    if (body.kind === 'Status') {
      reason = body.reason;
      message = body.message ?? message;
      causes = body.details?.causes ?? [];
      retryAfterSeconds ??= body.details?.retryAfterSeconds;
    }
  } catch {
    // not a Status
  }
  return new KubeRequestError({
    method,
    status,
    message,
    path,
    address,
    causes,
    ...(reason !== undefined && { reason }),
    ...(retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && { retryAfterSeconds }),
  });
}
