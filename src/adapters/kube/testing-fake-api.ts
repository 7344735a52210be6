/**
 * A small HTTPS server that replays recorded Kubernetes API responses (src/adapters/kube/fixtures/kube-api),
 * with client-certificate authentication like a kubeadm apiserver. Deliberately dumb: the lab API
 * server replaces it for anything with semantics.
 */
import { readFileSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';

export const KUBE_API_FIXTURES = join(import.meta.dirname, 'fixtures', 'kube-api');

export interface Route {
  path: string;
  /** Query parameters to match: a string must be equal, null must be absent, others are ignored. */
  query?: Record<string, string | null>;
  status?: number;
  file: string;
  /** Serve this route only this many times, then let later routes match. */
  times?: number;
}

export interface FakeKubeApi {
  url: string;
  port: number;
  /** Every request seen, as path?query. */
  requests: string[];
  close(): Promise<void>;
}

export async function startFakeKubeApi(opts: {
  certPem: string;
  keyPem: string;
  /** CA that signs accepted client certificates. */
  clientCaPem: string;
  fixturesDir?: string;
  /** `{{NAME}}` in fixtures is replaced by vars[NAME]. */
  vars?: Record<string, string>;
}): Promise<FakeKubeApi> {
  const dir = opts.fixturesDir ?? KUBE_API_FIXTURES;
  const routes = (JSON.parse(readFileSync(join(dir, 'routes.json'), 'utf8')) as Route[]).map((r) => ({
    ...r,
  }));
  const requests: string[] = [];
  const render = (file: string) =>
    readFileSync(join(dir, file), 'utf8').replace(
      /\{\{(\w+)\}\}/g,
      (m, name: string) => opts.vars?.[name] ?? m,
    );

  const server = https.createServer(
    {
      cert: opts.certPem,
      key: opts.keyPem,
      ca: opts.clientCaPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://fake');
      requests.push(`${url.pathname}${url.search}`);
      const route = routes.find(
        (r) =>
          r.path === url.pathname &&
          (r.times === undefined || r.times > 0) &&
          Object.entries(r.query ?? {}).every(([k, v]) =>
            v === null ? !url.searchParams.has(k) : url.searchParams.get(k) === v,
          ),
      );
      res.setHeader('Content-Type', 'application/json');
      if (req.method !== 'GET' || !route) {
        res.statusCode = 404;
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: 'the server could not find the requested resource',
            reason: 'NotFound',
            details: {},
            code: 404,
          }),
        );
        return;
      }
      if (route.times !== undefined) route.times--;
      res.statusCode = route.status ?? 200;
      res.end(render(route.file));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TLS server that only completes handshakes (an apiserver seen from the outside). */
export async function startTlsServer(
  certPem: string,
  keyPem: string,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = tls.createServer({ cert: certPem, key: keyPem }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Accepts TCP connections and never sends a byte: a hung server or a black-holing proxy. */
export async function startBlackhole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A kubeconfig with client-certificate auth, as `kubeadm init` writes admin.conf. */
export function kubeconfigYaml(opts: {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  clusterName?: string;
  extraContexts?: string[];
}): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const cluster = opts.clusterName ?? 'kubernetes';
  const contexts = [`kubernetes-admin@${cluster}`, ...(opts.extraContexts ?? [])];
  return `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64(opts.caPem)}
    server: ${opts.server}
  name: ${cluster}
contexts:
${contexts.map((c) => `- context:\n    cluster: ${cluster}\n    user: kubernetes-admin\n  name: ${c}`).join('\n')}
current-context: kubernetes-admin@${cluster}
kind: Config
preferences: {}
users:
- name: kubernetes-admin
  user:
    client-certificate-data: ${b64(opts.certPem)}
    client-key-data: ${b64(opts.keyPem)}
`;
}
