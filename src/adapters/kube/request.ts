/**
 * Every request ferry makes to a Kubernetes API server, any verb: one HTTP stack and one mapping of
 * its failures to ferry's errors (an HTTP answer: KubeRequestError with the server's Status; no
 * answer: KubeNetworkError, or an input error when the server's certificate is not trusted).
 * client-node supplies TLS and authentication (CA, client certificate, bearer token, exec plugin,
 * proxy agent); node:http(s) carries the request so that ferry controls the deadlines and receives
 * the raw JSON: client-node's typed deserializer turns timestamps into Date objects and drops fields
 * it does not know, and a snapshot must keep what the server said. client.ts is the typed client on
 * top.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import { FerryError, type Location } from '../../errors.js';
import { KubeApiError } from '../../ports/kube.js';
import type { LoadedKubeconfig } from './kubeconfig.js';

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
    continueToken?: string;
    retryAfterSeconds?: number;
  }) {
    super(opts);
    this.method = opts.method;
    this.causes = opts.causes;
    this.message = `${opts.address} ${opts.method} ${opts.path}: HTTP ${opts.status}${opts.reason ? ` ${opts.reason}` : ''}: ${opts.message}`;
    this.name = 'KubeRequestError';
  }
}

/** A request that never got an HTTP answer: refused, reset, timed out, TLS failure. */
export class KubeNetworkError extends FerryError {
  readonly code: string | undefined;
  constructor(
    message: string,
    opts: {
      code?: string;
      remediation: string;
      cause?: unknown;
      kind?: 'unreachable' | 'input';
      location?: Location;
    },
  ) {
    super(opts.kind ?? 'unreachable', message, {
      remediation: opts.remediation,
      cause: opts.cause,
      ...(opts.location && { location: opts.location }),
    });
    this.name = 'KubeNetworkError';
    this.code = opts.code;
  }
}

/** The one patch flavour ferry sends (RFC 7386): it needs no OpenAPI and touches only the fields named. */
export const MERGE_PATCH = 'application/merge-patch+json';

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Default application/json; patches name their flavour (MERGE_PATCH). */
  contentType?: string;
  timeoutMs?: number;
  /** Return the body as text instead of parsing JSON (e.g. /readyz). */
  raw?: boolean;
}

export interface KubeRequester {
  /** host:port of the API server, for messages. */
  readonly address: string;
  readonly server: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<unknown>;
}

export interface RequesterOptions {
  /** Whole request, connecting to last byte. Default 15 s. */
  timeoutMs?: number;
  /**
   * Connecting and the TLS handshake must finish within this. Default: only `timeoutMs` bounds
   * them. Node's socket `timeout` alone is not enough: through an Agent it fires only after twice
   * the value, and a server that accepts TCP but never finishes TLS must fail fast.
   */
  connectTimeoutMs?: number;
  /** A silent connection (no bytes either way) fails after this. Default: only `timeoutMs`. */
  idleTimeoutMs?: number;
  /**
   * Reuse connections between requests (default). client-node's agent closes each socket after its
   * answer, so every request would pay a TCP and TLS handshake with a client certificate (mgmt
   * restore: ~1,000 writes; a run: about 50 of 370 CPU-seconds of a rehearsal). `false` for the
   * probes only: they must see the server (the load balancer) as a new client does, every time.
   */
  keepAlive?: boolean;
}

export function addressOf(server: string): string {
  const u = new URL(server);
  const port = u.port || (u.protocol === 'http:' ? '80' : '443');
  return `${u.hostname}:${port}`;
}

/**
 * Idle kept-alive sockets close after this. Below the 5 s keep-alive timeout of a Node server (the
 * lab's API server) and far below Go's, so the client closes first; Node also honours a server's
 * `Keep-Alive: timeout=` hint. A close that races a request anyway is retried (`repeatable`).
 */
const IDLE_SOCKET_MS = 4_000;

/**
 * The TLS material of a request's options, as a key: credentials can change between requests (exec
 * plugins), and one agent or TLS context serves one set of them.
 */
function materialOf(o: https.RequestOptions): string {
  return [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.rejectUnauthorized, o.servername]
    .map((v) => String(v ?? ''))
    .join('\0');
}

// One agent per API server and credentials, shared by every requester of that kubeconfig in the
// process (the run builds several), so they share its open connections. Idle sockets are unref'd
// by Node's agent: they do not keep the process alive.
const agents = new Map<string, http.Agent>();
// Probes open a connection every few tens of ms: build the TLS context (parse the key) once per
// credentials, not per connection.
const contexts = new Map<string, SecureContext>();

function contextFor(o: https.RequestOptions, material: string): SecureContext {
  let ctx = contexts.get(material);
  if (!ctx) {
    ctx = createSecureContext({
      ...(o.ca !== undefined && { ca: o.ca }),
      ...(o.cert !== undefined && { cert: o.cert }),
      ...(o.key !== undefined && { key: o.key }),
      ...(o.pfx !== undefined && { pfx: o.pfx }),
      ...(o.passphrase !== undefined && { passphrase: o.passphrase }),
    });
    contexts.set(material, ctx);
  }
  return ctx;
}

/**
 * The agent a request goes through. client-node builds a new agent per call, without keep-alive:
 * with keep-alive its plain agent is replaced by one kept per server and credentials. A proxy agent
 * stays as client-node made it (one per requester).
 */
function agentFor(
  server: string,
  given: https.RequestOptions['agent'],
  material: string,
): http.Agent | undefined {
  const key = `${server}\0${material}`;
  const known = agents.get(key);
  if (known) return known;
  let agent: http.Agent | undefined;
  if (given instanceof https.Agent && given.constructor === https.Agent)
    agent = new https.Agent({
      ...(given as unknown as { options: https.AgentOptions }).options,
      keepAlive: true,
      timeout: IDLE_SOCKET_MS,
    });
  else if (given instanceof http.Agent && given.constructor === http.Agent)
    agent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  else return given as http.Agent | undefined;
  agents.set(key, agent);
  return agent;
}

/**
 * Whether a request that met a dead reused socket may be sent again (once, on a fresh
 * connection). A kept-alive socket the server closed while idle fails the next request written to it (ECONNRESET, EPIPE, "socket hang
 * up") before any byte of an answer; nothing tells that apart from a server that read the request,
 * acted and then died. So only requests whose repetition cannot do anything the first did not are
 * repeated: reads, PUT and DELETE (idempotent in HTTP), and merge patches (the same patch applied
 * twice gives the same object). A POST (a create, an eviction) is not: its caller decides (KubeAdmin
 * retries its own, knowing the verb; a create repeated answers 409).
 */
function repeatable(method: string, contentType: string | undefined): boolean {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
    case 'PUT':
    case 'DELETE':
      return true;
    case 'PATCH':
      return contentType === MERGE_PATCH;
    default:
      return false;
  }
}

const DEAD_SOCKET = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Only a socket that sat idle this long is taken for one the server closed for idleness (server
 * idle timeouts are seconds). A connection lost right after its last answer is a real failure (the
 * server or a load balancer going away) and is reported as one: the collection's retries announce
 * it, KubeAdmin's back off.
 */
const IDLE_CLOSE_MIN_MS = 1_000;
/** When each pooled socket last finished an answer. */
const lastAnswer = new WeakMap<object, number>();

export function createRequester(loaded: LoadedKubeconfig, defaults: RequesterOptions = {}): KubeRequester {
  const base = new URL(loaded.server);
  const address = addressOf(loaded.server);
  const lib = base.protocol === 'http:' ? http : https;
  const keepAlive = defaults.keepAlive ?? true;
  let ownAgent: http.Agent | undefined; // without keep-alive: client-node's, kept for the requester

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
    const url = new URL(base.href);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const reqOpts: https.RequestOptions = { method, headers: {} };
    await loaded.kc.applyToHTTPSOptions(reqOpts);
    const material = materialOf(reqOpts);
    if (keepAlive) reqOpts.agent = agentFor(loaded.server, reqOpts.agent, material);
    else reqOpts.agent = ownAgent ??= reqOpts.agent as http.Agent | undefined;
    if (lib === https)
      (reqOpts as { secureContext?: SecureContext }).secureContext = contextFor(reqOpts, material);
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
    const idleMs = defaults.idleTimeoutMs;
    if (idleMs !== undefined) reqOpts.timeout = idleMs;
    const timeoutMs = opts.timeoutMs ?? defaults.timeoutMs ?? 15_000;
    const shown = `${url.pathname}${url.search}`;
    const mayRepeat = repeatable(method, opts.contentType);

    const attempt = (fresh: boolean): Promise<unknown> =>
      new Promise((resolve, reject) => {
        let settled = false;
        let answered = false;
        let idleMs = 0; // how long the reused socket had been idle
        let sock: object | undefined;
        const finish = (fn: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          clearTimeout(connectDeadline);
          fn();
        };
        const fail = (err: Error) =>
          finish(() => {
            req.destroy();
            reject(err);
          });
        const timedOut = (ms: number, what: string) =>
          new KubeNetworkError(
            `the Kubernetes API server at ${address} did not answer ${method} ${shown}: no response within ${ms / 1000} s ${what}`,
            {
              code: 'ETIMEDOUT',
              remediation: `check that ${loaded.server} (the kubeconfig's server) is the right address, that the API server is running and that no firewall drops the connection`,
            },
          );
        const deadline = setTimeout(() => fail(timedOut(timeoutMs, 'to complete the request')), timeoutMs);
        const connectMs = defaults.connectTimeoutMs;
        const connectDeadline =
          connectMs === undefined
            ? undefined
            : setTimeout(
                () => fail(timedOut(connectMs, 'to complete the connection and TLS handshake')),
                connectMs,
              );
        const connected = () => clearTimeout(connectDeadline);
        // A retry goes on a connection of its own (`agent: false`), not on another pooled socket
        // that may be as dead as the first.
        const req = lib.request(url, fresh ? { ...reqOpts, agent: false } : reqOpts, (res) => {
          answered = true;
          connected();
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err) => fail(networkError(err, address, loaded.server)));
          res.on('end', () =>
            finish(() => {
              if (sock) lastAnswer.set(sock, Date.now());
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
        req.on('socket', (socket) => {
          sock = socket;
          if (req.reusedSocket) {
            idleMs = Date.now() - (lastAnswer.get(socket) ?? Date.now());
            connected();
          } else if (lib === https) socket.once('secureConnect', connected);
          else if (socket.connecting) socket.once('connect', connected);
          else connected();
        });
        // Without idleMs the socket's timeout is the agent's, which only closes idle pooled sockets.
        if (idleMs !== undefined) req.on('timeout', () => fail(timedOut(idleMs, 'to answer')));
        req.on('error', (err) => {
          const code = (err as NodeJS.ErrnoException).code;
          const idleClosed = req.reusedSocket && idleMs >= IDLE_CLOSE_MIN_MS;
          if (!fresh && mayRepeat && idleClosed && !answered && code && DEAD_SOCKET.has(code))
            return finish(() => attempt(true).then(resolve, reject));
          fail(networkError(err, address, loaded.server));
        });
        if (payload) req.write(payload);
        req.end();
      });

    return attempt(false);
  }

  return { address, server: loaded.server, request };
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

/**
 * No answer, as ferry says it: what happened in words, with Node's code where the words do not
 * name it (a log search finds either). A certificate the kubeconfig does not trust is bad input
 * (exit 2 like an unreachable server): waiting will not fix it.
 */
function networkError(err: Error, address: string, server: string): FerryError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && TLS_TRUST_CODES.has(code)) {
    return new KubeNetworkError(
      `TLS verification of the Kubernetes API server at ${address} failed: ${err.message} (${code})`,
      {
        code,
        kind: 'input',
        location: { field: 'clusters[].cluster.certificate-authority-data' },
        remediation:
          'check certificate-authority(-data) and tls-server-name in the kubeconfig match the API server certificate',
        cause: err,
      },
    );
  }
  const what =
    code === 'ECONNREFUSED'
      ? 'connection refused (ECONNREFUSED)'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `host name not found (${code})`
        : code === 'EHOSTUNREACH' || code === 'ENETUNREACH'
          ? `no route to host (${code})`
          : code === 'ECONNRESET'
            ? 'connection reset'
            : err.message;
  return new KubeNetworkError(`cannot reach the Kubernetes API server at ${address}: ${what}`, {
    ...(code !== undefined && { code }),
    remediation: `check that ${server} (the kubeconfig's server) is the right address and that the API server is running`,
    cause: err,
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
  let continueToken: string | undefined;
  let retryAfterSeconds = retryAfter !== undefined ? Number(retryAfter) : undefined;
  try {
    const body = JSON.parse(text) as {
      kind?: string;
      reason?: string;
      message?: string;
      metadata?: { continue?: string };
      details?: { causes?: StatusCause[]; retryAfterSeconds?: number };
    };
    if (body.kind === 'Status') {
      reason = body.reason;
      message = body.message ?? message;
      causes = body.details?.causes ?? [];
      continueToken = body.metadata?.continue;
      if (retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds))
        retryAfterSeconds = body.details?.retryAfterSeconds;
    }
  } catch {
    // not a Status: keep the start of the text
  }
  return new KubeRequestError({
    method,
    status,
    message,
    path,
    address,
    causes,
    ...(reason !== undefined && { reason }),
    ...(continueToken !== undefined && { continueToken }),
    ...(retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && { retryAfterSeconds }),
  });
}
