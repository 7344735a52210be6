/**
 * GET-with-JSON against the API server named by a kubeconfig. client-node supplies the TLS and
 * authentication options (CA, client certificate, bearer token, exec plugin, proxy agent); the
 * request itself goes through node:https so that ferry controls the timeouts and receives the raw
 * JSON: client-node's typed deserializer turns timestamps into Date objects and drops fields it
 * does not know, and a snapshot must keep what the server said.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { FerryError, inputError } from '../../errors.js';
import { KubeApiError } from '../../ports/kube.js';
import type { LoadedKubeconfig } from './kubeconfig.js';

export interface TransportOptions {
  /** Connecting and the TLS handshake must finish within this. Default 5 s. */
  connectTimeoutMs?: number;
  /** A silent connection (no bytes either way) fails after this. Default 30 s. */
  idleTimeoutMs?: number;
  /** Whole request, headers to last byte. Default 120 s (a 500-pod page is well under a second). */
  requestTimeoutMs?: number;
}

export interface Transport {
  /** host:port of the API server, for messages. */
  readonly address: string;
  getJson(path: string, query?: Record<string, string | number | undefined>): Promise<unknown>;
}

/** A request that never got an HTTP answer: refused, reset, timed out, TLS failure. */
export class KubeNetworkError extends FerryError {
  readonly code: string | undefined;
  constructor(
    message: string,
    opts: { code?: string; remediation: string; cause?: unknown; kind?: 'unreachable' | 'input' },
  ) {
    super(opts.kind ?? 'unreachable', message, { remediation: opts.remediation, cause: opts.cause });
    this.name = 'KubeNetworkError';
    this.code = opts.code;
  }
}

const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
]);

export function addressOf(server: string): string {
  const u = new URL(server);
  const port = u.port || (u.protocol === 'http:' ? '80' : '443');
  return `${u.hostname}:${port}`;
}

export function createTransport(loaded: LoadedKubeconfig, opts: TransportOptions = {}): Transport {
  const base = new URL(loaded.server);
  const address = addressOf(loaded.server);
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
  const requestTimeoutMs = opts.requestTimeoutMs ?? 120_000;
  const lib = base.protocol === 'http:' ? http : https;
  // One agent for the whole collection: client-node builds a new one per call otherwise.
  let agent: http.Agent | undefined;

  async function getJson(
    path: string,
    query: Record<string, string | number | undefined> = {},
  ): Promise<unknown> {
    const url = new URL(base.href);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const reqOpts: https.RequestOptions = { method: 'GET', headers: {} };
    await loaded.kc.applyToHTTPSOptions(reqOpts);
    agent ??= reqOpts.agent as http.Agent | undefined;
    reqOpts.agent = agent;
    reqOpts.timeout = idleTimeoutMs;
    reqOpts.headers = { ...reqOpts.headers, Accept: 'application/json', 'User-Agent': 'ferry' };
    const shown = `${url.pathname}${url.search}`;

    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(connectDeadline);
        req.destroy();
        reject(err);
      };
      const deadline = setTimeout(
        () => fail(timeoutError(address, loaded.server, requestTimeoutMs, 'to complete the request')),
        requestTimeoutMs,
      );
      // Node's socket `timeout` alone is not enough: through an Agent it fires only after twice
      // the value, and a server that accepts TCP but never finishes TLS must fail fast.
      const connectDeadline = setTimeout(
        () =>
          fail(
            timeoutError(
              address,
              loaded.server,
              connectTimeoutMs,
              'to complete the connection and TLS handshake',
            ),
          ),
        connectTimeoutMs,
      );
      const connected = () => clearTimeout(connectDeadline);
      const req = lib.request(url, reqOpts, (res) => {
        connected();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => fail(networkError(err, address, loaded.server)));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          clearTimeout(connectDeadline);
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve(JSON.parse(text));
            } catch (err) {
              reject(new Error(`${address} GET ${shown}: the answer is not JSON`, { cause: err }));
            }
            return;
          }
          reject(apiError(status, text, shown, address, res.headers['retry-after']));
        });
      });
      req.on('socket', (socket) => {
        if (lib === https) socket.once('secureConnect', connected);
        else if (socket.connecting) socket.once('connect', connected);
        else connected();
      });
      req.on('timeout', () => fail(timeoutError(address, loaded.server, idleTimeoutMs, 'to answer')));
      req.on('error', (err) => fail(networkError(err, address, loaded.server)));
      req.end();
    });
  }

  return { address, getJson };
}

function apiError(
  status: number,
  text: string,
  path: string,
  address: string,
  retryAfter?: string,
): KubeApiError {
  let reason: string | undefined;
  let message = text.slice(0, 300);
  let continueToken: string | undefined;
  try {
    const body = JSON.parse(text) as {
      kind?: string;
      reason?: string;
      message?: string;
      metadata?: { continue?: string };
    };
    if (body.kind === 'Status') {
      reason = body.reason;
      message = body.message ?? message;
      continueToken = body.metadata?.continue;
    }
  } catch {
    // not a Status: keep the start of the text
  }
  const retryAfterSeconds = retryAfter !== undefined ? Number(retryAfter) : Number.NaN;
  return new KubeApiError({
    status,
    message,
    path,
    address,
    ...(reason !== undefined && { reason }),
    ...(continueToken !== undefined && { continueToken }),
    ...(Number.isFinite(retryAfterSeconds) && { retryAfterSeconds }),
  });
}

function timeoutError(address: string, server: string, ms: number, what: string): KubeNetworkError {
  return new KubeNetworkError(
    `the Kubernetes API server at ${address} did not answer: no response within ${ms / 1000} s ${what}`,
    {
      code: 'ETIMEDOUT',
      remediation: `check that ${server} (the kubeconfig's server) is the right address, that the API server is running and that no firewall drops the connection`,
    },
  );
}

function networkError(err: Error, address: string, server: string): FerryError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && TLS_TRUST_CODES.has(code)) {
    return inputError(
      `TLS verification of the Kubernetes API server at ${address} failed: ${err.message} (${code})`,
      { field: 'clusters[].cluster.certificate-authority-data' },
      'check certificate-authority(-data) and tls-server-name in the kubeconfig match the API server certificate',
      err,
    );
  }
  const what =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host name not found'
        : code === 'EHOSTUNREACH' || code === 'ENETUNREACH'
          ? 'no route to host'
          : code === 'ECONNRESET'
            ? 'connection reset'
            : err.message;
  return new KubeNetworkError(`cannot reach the Kubernetes API server at ${address}: ${what}`, {
    ...(code !== undefined && { code }),
    remediation: `check that ${server} (the kubeconfig's server) is the right address and that the API server is running`,
    cause: err,
  });
}
