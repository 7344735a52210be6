/**
 * A thin HTTPS JSON client for the lab's Kubernetes API, authenticated with a client certificate
 * (the lab admin kubeconfig's). The lab controllers talk to the API only through it, never to a
 * server's store. On a 5xx answer or a network error its connections are dropped, so that the
 * next request goes through the load balancer afresh and reaches a healthy instance. A connection
 * lost before any answer is retried once when that cannot apply a change twice (see `request`).
 */
import { readFile } from 'node:fs/promises';
import * as https from 'node:https';
import { parse as parseYaml } from 'yaml';
import { FerryError, inputError } from '../../errors.js';
import { PATCH_CONTENT_TYPES } from '../apiserver/patch.js';

export type ClientCredentials = {
  /** https://HOST:PORT */
  server: string;
  /** PEM: the cluster CA, the client certificate and its key. */
  ca: string | Buffer;
  cert: string | Buffer;
  key: string | Buffer;
};

/** An answer that is not 2xx, with the Kubernetes Status fields when the server sent one. */
export class LabApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  readonly body: unknown;
  constructor(method: string, path: string, status: number, body: unknown) {
    const st = body as { reason?: string; message?: string } | undefined;
    super(`${method} ${path}: HTTP ${status}${st?.message ? `: ${st.message}` : ''}`);
    this.name = 'LabApiError';
    this.status = status;
    this.reason = st?.reason;
    this.body = body;
  }
}

/** The connection failed before any answer came back (reset, closed, TLS handshake cut). */
export class ConnectionLost extends Error {
  /** The request went out on a pooled keep-alive connection. */
  readonly reused: boolean;
  constructor(message: string, reused: boolean, cause: unknown) {
    super(message, { cause });
    this.name = 'ConnectionLost';
    this.reused = reused;
  }
}

export type RequestOptions = {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
};

export type ListResult<T> = { items: T[]; metadata: { resourceVersion?: string; continue?: string } };

export class LabKubeClient {
  readonly server: string;
  readonly #creds: ClientCredentials;
  readonly #timeoutMs: number;
  #agent: https.Agent;
  readonly #retired = new Set<https.Agent>();

  constructor(creds: ClientCredentials, opts: { timeoutMs?: number } = {}) {
    this.server = creds.server.replace(/\/+$/, '');
    this.#creds = creds;
    this.#timeoutMs = opts.timeoutMs ?? 5_000;
    this.#agent = this.#newAgent();
  }

  /** Reads server, CA and client certificate from a kubeconfig with embedded (`*-data`) credentials. */
  static async fromKubeconfig(path: string, opts: { timeoutMs?: number } = {}): Promise<LabKubeClient> {
    return new LabKubeClient(await credentialsFromKubeconfig(path), opts);
  }

  #newAgent(): https.Agent {
    return new https.Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: this.#creds.ca,
      cert: this.#creds.cert,
      key: this.#creds.key,
    });
  }

  /**
   * New requests open new connections. Idle pooled connections are closed at once; the old pool
   * is destroyed only once requests still in flight on it have had their time (another caller
   * sharing this client must not lose its request because of someone else's error).
   */
  resetConnections(): void {
    const old = this.#agent;
    this.#agent = this.#newAgent();
    for (const sockets of Object.values(old.freeSockets)) for (const s of sockets ?? []) s.destroy();
    this.#retired.add(old);
    setTimeout(() => {
      old.destroy();
      this.#retired.delete(old);
    }, this.#timeoutMs + 1_000).unref();
  }

  close(): void {
    this.#agent.destroy();
    for (const a of this.#retired) a.destroy();
    this.#retired.clear();
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = new URL(`${this.server}${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'ferry-lab' };
    if (payload) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
    const send = () => this.#send<T>(method, url, headers, payload, timeoutMs);
    try {
      return await send();
    } catch (err) {
      if (err instanceof LabApiError && err.status < 500) throw err;
      this.resetConnections();
      // A connection that died under the request, before any answer: the keep-alive race (the
      // server or the load balancer closed an idle connection as it was reused), or a backend that
      // failed between two health checks. Retried once on a fresh connection when that cannot
      // apply a change twice: a reused connection (the request never reached a live server) or a read.
      if (!(err instanceof ConnectionLost) || !(err.reused || method === 'GET')) throw err;
      return await send();
    }
  }

  #send<T>(
    method: string,
    url: URL,
    headers: Record<string, string>,
    payload: Buffer | undefined,
    timeoutMs: number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const req = https.request(url, { method, headers, agent: this.#agent }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text === '' ? undefined : JSON.parse(text);
          } catch {
            // Not JSON: keep the text for the error.
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve(body as T);
          else reject(new LabApiError(method, url.pathname, code, body));
        });
      });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error(`${method} ${url.pathname}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(
          answered || timedOut
            ? err
            : new ConnectionLost(`${method} ${url.pathname}: ${err.message}`, req.reusedSocket, err),
        );
      });
      req.end(payload);
    });
  }

  get<T = unknown>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  /** Every item of a collection, following `continue`. */
  async list<T = unknown>(path: string, query: RequestOptions['query'] = {}): Promise<T[]> {
    const items: T[] = [];
    let cont: string | undefined;
    do {
      const page: ListResult<T> = await this.get(path, { limit: 500, ...query, continue: cont });
      items.push(...(page.items ?? []));
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return items;
  }

  create<T = unknown>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  replace<T = unknown>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  patch<T = unknown>(
    path: string,
    patch: unknown,
    type: 'merge' | 'strategic' | 'json' = 'merge',
  ): Promise<T> {
    const contentType = Object.keys(PATCH_CONTENT_TYPES).find((t) => PATCH_CONTENT_TYPES[t] === type);
    return this.request<T>('PATCH', path, { body: patch, contentType });
  }

  delete<T = unknown>(path: string, opts: { gracePeriodSeconds?: number; uid?: string } = {}): Promise<T> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.uid !== undefined) body.preconditions = { uid: opts.uid };
    return this.request<T>('DELETE', path, { body });
  }
}

/** True for the answers a controller shrugs off and retries on its next pass. */
export function isTransient(err: unknown): boolean {
  if (err instanceof LabApiError)
    return err.status === 404 || err.status === 409 || err.status === 429 || err.status >= 500;
  return true;
}

type Kubeconfig = {
  'current-context'?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
};

/** Credentials of the current context of a kubeconfig that embeds them (as the lab writes it). */
export async function credentialsFromKubeconfig(path: string): Promise<ClientCredentials> {
  let doc: Kubeconfig;
  try {
    doc = parseYaml(await readFile(path, 'utf8')) as Kubeconfig;
  } catch (err) {
    throw inputError(
      `cannot read kubeconfig ${path}`,
      { file: path },
      'give the kubeconfig `ferry lab up` wrote',
      err,
    );
  }
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context']) ?? doc.contexts?.[0];
  const cluster = doc.clusters?.find((c) => c.name === ctx?.context.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.context.user)?.user;
  const b64 = (v: string | undefined) => (v ? Buffer.from(v, 'base64') : undefined);
  const ca = b64(cluster?.['certificate-authority-data']);
  const cert = b64(user?.['client-certificate-data']);
  const key = b64(user?.['client-key-data']);
  if (!cluster?.server || !ca || !cert || !key) {
    throw new FerryError('input', `kubeconfig ${path} does not embed a server, CA and client certificate`, {
      location: { file: path, field: 'current-context' },
      remediation: 'use the kubeconfig written by `ferry lab up` (credentials embedded as *-data fields)',
    });
  }
  return { server: cluster.server, ca, cert, key };
}
