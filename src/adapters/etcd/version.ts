/**
 * GET /version on an etcd client URL: the only place the *cluster* version is visible
 * ({"etcdserver":"3.5.30","etcdcluster":"3.4.0"} in a mixed cluster). Trust is verified against
 * the etcd CA, with the client certificate kubeadm's etcd requires (--client-cert-auth).
 */
import * as https from 'node:https';
import type { RawVersion } from '../../ports/etcd.js';

export interface TlsMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export function fetchEtcdVersion(endpoint: string, tls: TlsMaterial, timeoutMs: number): Promise<RawVersion> {
  const url = new URL('/version', endpoint);
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | undefined, v?: RawVersion) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(v!);
    };
    const deadline = setTimeout(
      () => finish(new Error(`GET ${url.href}: no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const req = https.get(
      url,
      { ca: tls.ca, cert: tls.cert, key: tls.key, timeout: timeoutMs, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => finish(new Error(`GET ${url.href}: ${e.message}`, { cause: e })));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200)
            return finish(new Error(`GET ${url.href}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
          try {
            const v = JSON.parse(text) as Partial<RawVersion>;
            if (typeof v.etcdserver !== 'string' || typeof v.etcdcluster !== 'string') {
              return finish(new Error(`GET ${url.href}: no etcdserver/etcdcluster in ${text.slice(0, 200)}`));
            }
            finish(undefined, { etcdserver: v.etcdserver, etcdcluster: v.etcdcluster });
          } catch (e) {
            finish(new Error(`GET ${url.href}: the answer is not JSON`, { cause: e }));
          }
        });
      },
    );
    req.on('timeout', () => finish(new Error(`GET ${url.href}: no answer within ${timeoutMs / 1000} s`)));
    req.on('error', (e) => finish(new Error(`GET ${url.href}: ${e.message}`, { cause: e })));
  });
}
