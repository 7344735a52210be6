/**
 * LabLoadBalancer: the cluster endpoint of a lab (e.g. 127.0.20.10:6443) as a TCP proxy in front
 * of the API server instances, like the haproxy or cloud LB of a kubeadm cluster. TLS passes
 * through untouched (clients keep their client certificates); new connections go round-robin to
 * backends whose HTTPS /readyz answers 200; connections to a backend are closed when it turns
 * unhealthy or is removed, so clients reconnect to a healthy one.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { listenOn } from '../listen.js';
import { type HealthTls, probeReadyz, splitAddress } from './health.js';

export type LabLoadBalancerOptions = {
  host: string;
  /** Default 6443; 0 picks a free port. */
  port?: number;
  /** host:port of each API server instance. */
  backends?: string[];
  /**
   * The active HTTPS /readyz check. `none`: no check; a backend is up from when it is added until
   * it is removed, as a kube-proxy endpoint is (the Service front: its endpoints come from
   * EndpointSlices, which carry readiness).
   */
  health:
    | 'none'
    | (HealthTls & {
        /** Default 200 ms. */
        intervalMs?: number;
        /** Default 1000 ms. */
        timeoutMs?: number;
        /** Consecutive successes that bring an unhealthy backend back. Default 2. */
        rise?: number;
        /** Consecutive failures that take a healthy backend out. Default 2. */
        fall?: number;
      });
  /** Close a backend's connections when it turns unhealthy (haproxy `on-marked-down shutdown-sessions`). Default true. */
  closeSessionsOnDown?: boolean;
  /** A backend that does not accept within this counts as a failed connect. Default 1000 ms. */
  connectTimeoutMs?: number;
  /**
   * A failed connect moves on to the next healthy backend (haproxy `option redispatch`). Default
   * true; false fails the client's connection instead, as a kube-proxy rule pointing at an
   * endpoint that no longer listens does.
   */
  redispatch?: boolean;
};

export type BackendState = {
  address: string;
  /** `unknown` until the first check answers; only `up` backends get connections. */
  state: 'unknown' | 'up' | 'down';
  /** Connections proxied to it so far. */
  connections: number;
  /** Connections open now. */
  active: number;
  failedConnects: number;
  lastCheck: { at: string; ok: boolean; detail: string } | undefined;
};

export type BalancerStats = {
  backends: BackendState[];
  /** Client connections closed because no backend was healthy or reachable. */
  rejected: number;
};

type Backend = BackendState & {
  successes: number;
  failures: number;
  timer: NodeJS.Timeout | undefined;
  probing: boolean;
  sessions: Set<Socket>;
};

/**
 * A session whose last bytes were the backend's answer and that has been quiet this long is between
 * two exchanges: the client has its response and has not sent the next request.
 */
const IDLE_CLOSE_MS = 5;
/** A session still busy after this long (a watch) is cut. */
const IDLE_CLOSE_MAX_MS = 5_000;

export class LabLoadBalancer {
  readonly host: string;
  readonly #opts: LabLoadBalancerOptions;
  readonly #server: Server;
  readonly #backends = new Map<string, Backend>();
  readonly #clients = new Set<Socket>();
  /** When bytes last moved on a client session, and which side sent them. */
  readonly #lastActivity = new WeakMap<Socket, { at: number; from: 'client' | 'backend' }>();
  #port = 0;
  #next = 0;
  #rejected = 0;
  #stopped = false;

  private constructor(opts: LabLoadBalancerOptions) {
    this.#opts = opts;
    this.host = opts.host;
    this.#server = createServer({ pauseOnConnect: true }, (client) => this.#accept(client));
  }

  static async start(opts: LabLoadBalancerOptions): Promise<LabLoadBalancer> {
    const lb = new LabLoadBalancer(opts);
    lb.#port = await listenOn(lb.#server, opts.port ?? 6443, opts.host);
    for (const b of opts.backends ?? []) lb.addBackend(b);
    return lb;
  }

  get port(): number {
    return this.#port;
  }

  get address(): string {
    return `${this.host}:${this.#port}`;
  }

  get url(): string {
    return `https://${this.address}`;
  }

  // ---- backends --------------------------------------------------------------------------------

  addBackend(address: string): void {
    splitAddress(address);
    if (this.#backends.has(address) || this.#stopped) return;
    const b: Backend = {
      address,
      state: 'unknown',
      connections: 0,
      active: 0,
      failedConnects: 0,
      lastCheck: undefined,
      successes: 0,
      failures: 0,
      timer: undefined,
      probing: false,
      sessions: new Set(),
    };
    this.#backends.set(address, b);
    const h = this.#opts.health;
    if (h === 'none') {
      b.state = 'up';
      return;
    }
    void this.#check(b);
    b.timer = setInterval(() => void this.#check(b), h.intervalMs ?? 200);
    b.timer.unref();
  }

  /** Takes a backend out; its open connections are closed unless `drain` keeps them. */
  removeBackend(address: string, opts: { drain?: boolean } = {}): void {
    const b = this.#backends.get(address);
    if (!b) return;
    clearInterval(b.timer);
    this.#backends.delete(address);
    if (!opts.drain) for (const s of b.sessions) this.#closeWhenIdle(s);
  }

  /**
   * Closes a session between two exchanges rather than in the middle of one, as an operator's
   * "disable server, shut down idle sessions" does: cutting a keep-alive connection mid-request
   * would fail a client request the migration promised not to fail. Busy sessions (watches) are
   * cut after `IDLE_CLOSE_MAX_MS`; clients reconnect through a remaining backend.
   */
  #closeWhenIdle(client: Socket): void {
    const started = Date.now();
    const timer = setInterval(() => {
      const last = this.#lastActivity.get(client) ?? { at: 0, from: 'backend' };
      if (client.destroyed) clearInterval(timer);
      else if (last.from === 'backend' && Date.now() - last.at >= IDLE_CLOSE_MS) {
        clearInterval(timer);
        client.end();
      } else if (Date.now() - started >= IDLE_CLOSE_MAX_MS) {
        clearInterval(timer);
        client.destroy();
      }
    }, 2);
    timer.unref();
  }

  /** Replaces the backend list: new ones are added, missing ones removed. */
  setBackends(addresses: string[]): void {
    for (const a of [...this.#backends.keys()]) if (!addresses.includes(a)) this.removeBackend(a);
    for (const a of addresses) this.addBackend(a);
  }

  backends(): BackendState[] {
    return [...this.#backends.values()].map((b) => ({
      address: b.address,
      state: b.state,
      connections: b.connections,
      active: b.active,
      failedConnects: b.failedConnects,
      lastCheck: b.lastCheck && { ...b.lastCheck },
    }));
  }

  /** Addresses of the backends that get new connections. */
  healthy(): string[] {
    return [...this.#backends.values()].filter((b) => b.state === 'up').map((b) => b.address);
  }

  stats(): BalancerStats {
    return { backends: this.backends(), rejected: this.#rejected };
  }

  /** Resolves when `pred` holds for the backend states; rejects after `timeoutMs`. */
  async waitFor(pred: (backends: BackendState[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.backends())) {
      if (Date.now() > deadline) {
        throw new Error(
          `load balancer ${this.address}: condition not met within ${timeoutMs} ms: ${JSON.stringify(this.backends())}`,
        );
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async #check(b: Backend): Promise<void> {
    const h = this.#opts.health;
    if (b.probing || this.#stopped || h === 'none') return;
    b.probing = true;
    const r = await probeReadyz(b.address, h, h.timeoutMs ?? 1_000);
    b.probing = false;
    if (!this.#backends.has(b.address)) return;
    b.lastCheck = { at: new Date().toISOString(), ok: r.ok, detail: r.detail };
    if (r.ok) {
      b.successes++;
      b.failures = 0;
      if (b.state === 'unknown' || (b.state === 'down' && b.successes >= (h.rise ?? 2))) b.state = 'up';
    } else {
      b.failures++;
      b.successes = 0;
      if (b.state === 'unknown' || (b.state === 'up' && b.failures >= (h.fall ?? 2))) this.#markDown(b);
    }
  }

  #markDown(b: Backend): void {
    b.state = 'down';
    if (this.#opts.closeSessionsOnDown !== false) for (const s of b.sessions) s.destroy();
  }

  // ---- proxying --------------------------------------------------------------------------------

  #accept(client: Socket): void {
    if (this.#stopped) {
      client.destroy();
      return;
    }
    this.#clients.add(client);
    client.once('close', () => this.#clients.delete(client));
    client.on('error', () => undefined);
    const up = [...this.#backends.values()].filter((b) => b.state === 'up');
    if (up.length === 0) {
      this.#rejected++;
      client.destroy();
      return;
    }
    const start = this.#next++ % up.length;
    const order = [...up.slice(start), ...up.slice(0, start)];
    this.#tryBackend(client, order, 0);
  }

  /** Connects to order[i]; a refused or slow connect moves on to the next healthy backend. */
  #tryBackend(client: Socket, order: Backend[], i: number): void {
    const b = order[i];
    if (!b || client.destroyed) {
      if (!client.destroyed) {
        this.#rejected++;
        client.destroy();
      }
      return;
    }
    const [host, port] = splitAddress(b.address);
    const upstream = connect({ host, port });
    const timer = setTimeout(
      () => upstream.destroy(new Error('connect timeout')),
      this.#opts.connectTimeoutMs ?? 1_000,
    );
    const failed = () => {
      clearTimeout(timer);
      b.failedConnects++;
      this.#tryBackend(client, this.#opts.redispatch === false ? [] : order, i + 1);
    };
    upstream.once('error', failed);
    upstream.once('connect', () => {
      clearTimeout(timer);
      upstream.off('error', failed);
      upstream.on('error', () => undefined);
      if (client.destroyed) {
        upstream.destroy();
        return;
      }
      b.connections++;
      b.active++;
      b.sessions.add(client);
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.once('close', closeBoth);
      client.once('close', () => {
        closeBoth();
        b.sessions.delete(client);
        b.active--;
      });
      const touch = (from: 'client' | 'backend') => () =>
        this.#lastActivity.set(client, { at: Date.now(), from });
      touch('backend')();
      client.on('data', touch('client'));
      upstream.on('data', touch('backend'));
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const b of this.#backends.values()) clearInterval(b.timer);
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const c of this.#clients) c.destroy();
    await closed;
  }
}
