/**
 * LabApiServer: one kube-apiserver instance of a lab control plane, serving the Kubernetes REST
 * API over HTTPS on a loopback address with x509 client-certificate authentication (CN = user,
 * O = groups; anonymous access to the health and version endpoints, as kubeadm configures it).
 * Every request goes to its Store; with an EtcdStore on the node's own member it fails exactly
 * when that member does. `setDown` makes the instance unavailable on purpose.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { listenOn } from '../listen.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.js';
import { EvictionLog } from './eviction-log.js';
import { parseRoute, type Route, sendJson, sendStatus, sendText, toApiError } from './http.js';
import type { ListFault } from './list-fault.js';
import { type RbacObjects, rbacAllows } from './rbac.js';
import { Registry, type RequestUser } from './registry.js';
import { builtinDef, resourcePrefix } from './resources.js';
import { handleResource } from './rest.js';
import { ApiError, forbidden, forbiddenResource, serviceUnavailable, unauthorized } from './status.js';
import type { Store } from './store.js';
import type { EvictionFault } from './subresources.js';

export type LabApiServerOptions = {
  /** Instance name (usually the control-plane node's), in eviction records. */
  name?: string;
  /** A loopback address, e.g. 127.0.21.1. */
  host: string;
  /** Default 6443; 0 picks a free port. */
  port?: number;
  store: Store;
  /** Serving certificate and key, and the CA that client certificates must chain to. */
  tls: { certPem: string; keyPem: string; clientCaPem: string };
  /** Anonymous requests may read /healthz, /livez, /readyz and /version (kubeadm's default). Default true. */
  anonymousAuth?: boolean;
  /** gitVersion served by /version. Default v1.32.4. */
  kubernetesVersion?: string;
  /** Shared by the instances of one lab so that tests see every decision. */
  evictionLog?: EvictionLog;
  clock?: () => Date;
  /** Create default, kube-system, kube-public and kube-node-lease at start. Default true. */
  bootstrapNamespaces?: boolean;
  /** Deadline of the /readyz store check. Default 1 s. */
  readyzTimeoutMs?: number;
  /**
   * Like kube-apiserver's --etcd-compaction-interval: every interval the store is compacted to the
   * revision seen one interval earlier (continue tokens and watches older than that expire). Default
   * 5 min; 0 turns it off.
   */
  compactionIntervalMs?: number;
};

/** `error`: answer 503 (500 on health endpoints); `refuse`: drop every connection. */
export type DownMode = 'error' | 'refuse';

const PUBLIC_ROUTES = new Set<Route['type']>(['health', 'version']);
const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

type Identity = { kind: 'user'; user: RequestUser } | { kind: 'anonymous' } | { kind: 'invalid' };

/** Who the client certificate of a connection names (kube-apiserver's x509 authenticator: CN user, O groups). */
function identifyPeer(sock: TLSSocket): Identity {
  const cert = sock.getPeerCertificate();
  const presented = cert !== null && typeof cert === 'object' && Object.keys(cert).length > 0;
  if (!presented) return { kind: 'anonymous' };
  if (!sock.authorized) return { kind: 'invalid' };
  const cn = asList(cert.subject?.CN)[0];
  if (!cn) return { kind: 'invalid' };
  return { kind: 'user', user: { name: cn, groups: [...asList(cert.subject?.O), 'system:authenticated'] } };
}

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export class LabApiServer {
  readonly name: string;
  readonly host: string;
  readonly registry: Registry;
  readonly store: Store;
  readonly evictionLog: EvictionLog;
  readonly #server: Server;
  readonly #opts: LabApiServerOptions;
  readonly #sockets = new Set<Socket>();
  readonly #watches = new Set<() => void>();
  #port = 0;
  #down: DownMode | undefined;
  #evictionFault: EvictionFault | undefined;
  #listFault: ListFault | undefined;
  #forbidden = new Set<string>();
  #forbiddenUser: string | undefined;
  #rbacUsers = new Set<string>();
  #stopped = false;
  #compactor: NodeJS.Timeout | undefined;

  private constructor(opts: LabApiServerOptions) {
    this.#opts = opts;
    this.name = opts.name ?? opts.host;
    this.host = opts.host;
    this.store = opts.store;
    this.registry = new Registry(opts.store, opts.clock ? { clock: opts.clock } : {});
    this.evictionLog = opts.evictionLog ?? new EvictionLog();
    this.#server = createServer(
      {
        cert: opts.tls.certPem,
        key: opts.tls.keyPem,
        ca: opts.tls.clientCaPem,
        requestCert: true,
        // Verified per request: anonymous health checks must still get through the handshake.
        rejectUnauthorized: false,
        minVersion: 'TLSv1.2',
      },
      (req, res) => void this.#handle(req, res),
    );
    this.#server.on('connection', (s: Socket) => {
      if (this.#down === 'refuse' || this.#stopped) {
        s.destroy();
        return;
      }
      this.#sockets.add(s);
      s.once('close', () => this.#sockets.delete(s));
    });
    this.#server.on('tlsClientError', () => undefined);
  }

  static async start(opts: LabApiServerOptions): Promise<LabApiServer> {
    const s = new LabApiServer(opts);
    s.#port = await listenOn(s.#server, opts.port ?? 6443, opts.host);
    try {
      if (opts.bootstrapNamespaces !== false) await s.registry.ensureNamespaces(DEFAULT_NAMESPACES);
    } catch (err) {
      await s.stop();
      throw err;
    }
    s.#startCompactor(opts.compactionIntervalMs ?? 5 * 60_000);
    return s;
  }

  #startCompactor(intervalMs: number): void {
    if (intervalMs <= 0) return;
    let seen: number | undefined;
    this.#compactor = setInterval(() => {
      void (async () => {
        const now = await this.store.revision();
        if (seen !== undefined) await this.store.compact(seen);
        seen = now;
      })().catch(() => undefined); // an unavailable store is /readyz's business
    }, intervalMs);
    this.#compactor.unref();
  }

  get port(): number {
    return this.#port;
  }

  /** host:port, as a load balancer backend is named. */
  get address(): string {
    return `${this.host}:${this.#port}`;
  }

  get url(): string {
    return `https://${this.address}`;
  }

  get down(): DownMode | undefined {
    return this.#down;
  }

  /** Fault injection: take the instance out of service (all requests, /readyz included) or back. */
  setDown(down: boolean, mode: DownMode = 'error'): void {
    this.#down = down ? mode : undefined;
    if (!down) return;
    for (const close of [...this.#watches]) close();
    if (mode === 'refuse') for (const s of this.#sockets) s.destroy();
  }

  /**
   * Fault injection: RBAC that does not let the client read a resource (`group/plural`, the core
   * group as `""/nodes`): every request for it is answered 403 Forbidden as kube-apiserver does
   * (a Status, reason Forbidden, its message naming user, verb, resource, group and scope). With
   * `user`, only that user's requests are refused (a ServiceAccount token without bindings, a
   * `view` user) and every other client reads as before.
   */
  setForbidden(
    resources: readonly { group: string; resource: string }[],
    opts: { user?: string } = {},
  ): void {
    this.#forbidden = new Set(resources.map((r) => `${r.group}/${r.resource}`));
    this.#forbiddenUser = opts.user;
  }

  /**
   * Authorizes these users' resource requests by the RBAC objects the lab stores (rbac.ts), as
   * kube-apiserver's RBAC authorizer does: what no binding grants is 403. Other users (the lab's
   * admin) are not checked; discovery and /version stay open to every authenticated user.
   */
  enforceRbacFor(users: readonly string[]): void {
    this.#rbacUsers = new Set(users);
  }

  async #rbac(): Promise<RbacObjects> {
    const all = async (plural: string) => {
      const d = builtinDef('rbac.authorization.k8s.io', 'v1', plural)!;
      // biome-ignore lint/suspicious/noExplicitAny: RBAC objects as stored; rbac.ts reads the fields it needs
      return (await this.store.list(resourcePrefix(d))).items.map((i) => i.value as any);
    };
    const [clusterRoles, roles, clusterRoleBindings, roleBindings] = await Promise.all(
      ['clusterroles', 'roles', 'clusterrolebindings', 'rolebindings'].map(all),
    );
    return {
      clusterRoles: clusterRoles!,
      roles: roles!,
      clusterRoleBindings: clusterRoleBindings!,
      roleBindings: roleBindings!,
    };
  }

  /** Fault injection: refuse chosen evictions with 429 whatever their budget says. */
  setEvictionFault(fault: EvictionFault | undefined): void {
    this.#evictionFault = fault;
  }

  /** Fault injection (tests): how to answer each page of a collection list; undefined = normally. */
  setListFault(fault: ListFault | undefined): void {
    this.#listFault = fault;
  }

  /** Stops serving and drops every connection. The store stays open: whoever created it closes it. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#compactor);
    for (const close of [...this.#watches]) close();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const s of this.#sockets) s.destroy();
    await closed;
  }

  /** Per connection: the peer certificate cannot change, and parsing it per request is costly. */
  readonly #identities = new WeakMap<TLSSocket, Identity>();

  #identify(req: IncomingMessage): Identity {
    const sock = req.socket as TLSSocket;
    let who = this.#identities.get(sock);
    if (!who) {
      who = identifyPeer(sock);
      this.#identities.set(sock, who);
    }
    return who;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://lab.invalid');
    const route = parseRoute(url.pathname);
    try {
      if (this.#down) {
        if (route.type === 'health')
          return sendText(res, 500, `[-]shutdown failed: reason withheld\n${route.check} check failed\n`);
        throw serviceUnavailable('the lab API server instance is down (fault injection)');
      }
      const who = this.#identify(req);
      if (who.kind === 'invalid') throw unauthorized();
      if (who.kind === 'anonymous') {
        if (this.#opts.anonymousAuth === false) throw unauthorized();
        if (!PUBLIC_ROUTES.has(route.type)) {
          throw forbidden(
            'system:anonymous',
            (req.method ?? 'get').toLowerCase(),
            { group: '', resource: '' },
            url.pathname,
          );
        }
      }
      const user: RequestUser =
        who.kind === 'user' ? who.user : { name: 'system:anonymous', groups: ['system:unauthenticated'] };
      if (
        route.type === 'resource' &&
        this.#forbidden.has(`${route.group}/${route.plural}`) &&
        (this.#forbiddenUser === undefined || this.#forbiddenUser === user.name)
      ) {
        throw forbiddenResource(
          user.name,
          resourceVerb(req.method ?? 'GET', route.name !== undefined, url.searchParams.get('watch')),
          { group: route.group, resource: route.plural },
          { namespace: route.namespace, name: route.name },
        );
      }
      if (route.type === 'resource' && this.#rbacUsers.has(user.name)) {
        const verb = resourceVerb(
          req.method ?? 'GET',
          route.name !== undefined,
          url.searchParams.get('watch'),
        );
        const a = {
          verb,
          group: route.group,
          resource: route.plural,
          sub: route.sub,
          namespace: route.namespace,
          name: route.name,
        };
        if (!rbacAllows(await this.#rbac(), user, a))
          throw forbiddenResource(
            user.name,
            verb,
            { group: route.group, resource: route.plural },
            { namespace: route.namespace, name: route.name },
          );
      }
      await this.#route(route, req, res, url, user);
    } catch (err) {
      const e = toApiError(err);
      if (!res.headersSent) sendStatus(res, e);
      else res.destroy();
    }
  }

  async #route(
    route: Route,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    user: RequestUser,
  ): Promise<void> {
    const reg = this.registry;
    switch (route.type) {
      case 'health':
        return this.#health(route.check, url, res);
      case 'version':
        return sendJson(res, 200, versionInfo(this.#opts.kubernetesVersion ?? 'v1.32.4'));
      case 'apiVersions':
        return sendJson(res, 200, apiVersions(this.address));
      case 'groupList':
        return sendJson(res, 200, apiGroupList(await reg.allDefs()));
      case 'group': {
        const doc = apiGroup(await reg.allDefs(), route.group);
        if (!doc) throw notFoundPath();
        return sendJson(res, 200, doc);
      }
      case 'resourceList': {
        const doc = apiResourceList(await reg.allDefs(), route.group, route.version);
        if (!doc) throw notFoundPath();
        return sendJson(res, 200, doc);
      }
      case 'resource':
        return handleResource(
          {
            registry: reg,
            user,
            instance: this.name,
            evictionLog: this.evictionLog,
            evictionFault: this.#evictionFault,
            listFault: this.#listFault,
            trackWatch: (close) => {
              this.#watches.add(close);
              return () => this.#watches.delete(close);
            },
          },
          route,
          req,
          res,
          url,
        );
      case 'notFound':
        throw notFoundPath();
    }
  }

  /** /livez answers while the process runs; /readyz and /healthz also need a linearizable store read. */
  async #health(check: 'livez' | 'readyz' | 'healthz', url: URL, res: ServerResponse): Promise<void> {
    const verbose = url.searchParams.has('verbose');
    const lines = ['[+]ping ok', '[+]log ok'];
    let ok = true;
    if (check !== 'livez') {
      try {
        await this.store.revision(this.#opts.readyzTimeoutMs ?? 1_000);
        lines.push('[+]etcd ok');
      } catch {
        ok = false;
        lines.push('[-]etcd failed: reason withheld');
      }
      if (check === 'readyz')
        lines.push(ok ? '[+]etcd-readiness ok' : '[-]etcd-readiness failed: reason withheld');
    }
    if (ok) return sendText(res, 200, verbose ? `${lines.join('\n')}\n${check} check passed\n` : 'ok');
    return sendText(res, 500, `${lines.join('\n')}\n${check} check failed\n`);
  }
}

function notFoundPath(): ApiError {
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });
}

/**
 * The RBAC verb of a resource request, as kube-apiserver's request-info resolver names it: GET is
 * get, list or watch, POST create, PUT update, PATCH patch, DELETE delete or deletecollection.
 */
function resourceVerb(method: string, named: boolean, watch: string | null): string {
  switch (method) {
    case 'GET':
      return watch === 'true' || watch === '1' ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
