import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';

/** Client TLS material for a lab cluster, as files (what other components are configured with). */
export type ClientTlsFiles = { caFile: string; certFile: string; keyFile: string };

export type ClientCredentials = { rootCertificate: Buffer; privateKey: Buffer; certChain: Buffer };

export async function readCredentials(tls: ClientTlsFiles): Promise<ClientCredentials> {
  const [rootCertificate, certChain, privateKey] = await Promise.all([
    readFile(tls.caFile),
    readFile(tls.certFile),
    readFile(tls.keyFile),
  ]);
  return { rootCertificate, certChain, privateKey };
}

/**
 * An etcd3 client with its fault handling switched off: its default circuit breaker turns repeated
 * `unhealthy cluster` answers into BrokenCircuitError, and its global retry would hop hosts behind
 * our back (test-infra.md). Callers retry themselves. Its host list is fixed: build a new client
 * after a membership change.
 */
export function etcdClient(endpoints: string[], creds: ClientCredentials, callTimeoutMs = 5_000): Etcd3 {
  return new Etcd3({
    hosts: endpoints,
    credentials: creds,
    dialTimeout: 3_000,
    faultHandling: { host: () => noop, global: noop },
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
  });
}

export async function withEtcdClient<T>(
  endpoints: string[],
  creds: ClientCredentials,
  fn: (client: Etcd3) => Promise<T>,
): Promise<T> {
  const client = etcdClient(endpoints, creds);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** `GET /version` on a client URL: `{"etcdserver":"3.5.30","etcdcluster":"3.4.0"}`. */
export type EtcdVersion = { etcdserver: string; etcdcluster: string };

export function fetchVersion(
  clientUrl: string,
  creds: ClientCredentials,
  timeoutMs = 5_000,
): Promise<EtcdVersion> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${clientUrl}/version`,
      {
        ca: creds.rootCertificate,
        cert: creds.certChain,
        key: creds.privateKey,
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) {
            reject(new Error(`GET ${clientUrl}/version: HTTP ${res.statusCode}: ${body.slice(0, 200)}`));
            return;
          }
          try {
            const v = JSON.parse(body) as Partial<EtcdVersion>;
            if (typeof v.etcdserver !== 'string' || typeof v.etcdcluster !== 'string') {
              throw new Error(`unexpected body ${body.slice(0, 200)}`);
            }
            resolve({ etcdserver: v.etcdserver, etcdcluster: v.etcdcluster });
          } catch (err) {
            reject(new Error(`GET ${clientUrl}/version: ${(err as Error).message}`, { cause: err }));
          }
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`GET ${clientUrl}/version: timed out after ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end();
  });
}
