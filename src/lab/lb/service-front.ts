/**
 * The lab's Service front: what kube-proxy makes of a Service, as a TCP load balancer on a lab
 * loopback address. It follows the Service's EndpointSlices through the API (polling, as a client
 * of the lab like every lab component) and routes new connections only to endpoints whose
 * condition is ready. Each change takes effect `propagationDelayMs` after it was seen, standing in
 * for the time a real kube-proxy takes to program its rules. The connections an endpoint already
 * has when it leaves are left to finish, as conntrack does; only new ones go elsewhere.
 *
 * Pod IPs of the lab are records (the nodes' pod CIDRs, not routable here): `resolve` maps an
 * endpoint's pod (targetRef uid) to where the lab runtime really listens for it, as the CNI would
 * route the pod IP.
 */
import type { KObj } from '../apiserver/object.js';
import type { LabKubeClient } from '../nodes/client.js';
import { SERVICE_NAME_LABEL } from '../nodes/endpoints.js';
import { apiPath, asArray, at } from '../nodes/world.js';
import { LabLoadBalancer } from './balancer.js';

export type ServiceFrontOptions = {
  client: LabKubeClient;
  namespace: string;
  service: string;
  host: string;
  /** Default 0: a free port. */
  port?: number;
  /** Pod uid → host:port of its listener (undefined: not listening). */
  resolve: (uid: string) => string | undefined;
  /** How long a change seen in the EndpointSlices takes to apply. Default 100 ms. */
  propagationDelayMs?: number;
  /** How often the EndpointSlices are read. Default 100 ms. */
  pollMs?: number;
};

export type FrontChange = { at: number; backends: string[] };

/** Ready endpoints of a Service's slices: their pods' uids, sorted. Pure. */
export function readyEndpoints(slices: KObj[]): string[] {
  const uids = new Set<string>();
  for (const s of slices) {
    for (const e of asArray(s.endpoints)) {
      // kube-proxy: a missing ready condition counts as ready; only false keeps traffic away.
      if (at(e, 'conditions', 'ready') === false) continue;
      const uid = at(e, 'targetRef', 'uid');
      if (typeof uid === 'string') uids.add(uid);
    }
  }
  return [...uids].sort();
}

export class ServiceFront {
  readonly lb: LabLoadBalancer;
  readonly #opts: ServiceFrontOptions;
  readonly #changes: FrontChange[] = [];
  readonly #pending = new Set<NodeJS.Timeout>();
  #seen = '';
  #running = true;
  #loop: Promise<void>;

  private constructor(lb: LabLoadBalancer, opts: ServiceFrontOptions) {
    this.lb = lb;
    this.#opts = opts;
    this.#loop = this.#run();
  }

  static async start(opts: ServiceFrontOptions): Promise<ServiceFront> {
    const lb = await LabLoadBalancer.start({
      host: opts.host,
      port: opts.port ?? 0,
      health: 'none',
      redispatch: false,
    });
    return new ServiceFront(lb, opts);
  }

  get url(): string {
    return `http://${this.lb.address}`;
  }

  /** Every backend set applied so far, with when. */
  changes(): FrontChange[] {
    return this.#changes.map((c) => ({ ...c, backends: [...c.backends] }));
  }

  async #run(): Promise<void> {
    const path = apiPath('discovery.k8s.io/v1', 'endpointslices', this.#opts.namespace);
    const selector = `${SERVICE_NAME_LABEL}=${this.#opts.service}`;
    while (this.#running) {
      try {
        const slices = await this.#opts.client.list<KObj>(path, { labelSelector: selector });
        this.#observe(readyEndpoints(slices));
      } catch {
        // The API is between instances: keep routing as last programmed, as kube-proxy does.
      }
      await new Promise((r) => setTimeout(r, this.#opts.pollMs ?? 100));
    }
  }

  #observe(uids: string[]): void {
    const backends = uids.map((u) => this.#opts.resolve(u)).filter((a): a is string => a !== undefined);
    const key = backends.join(',');
    if (key === this.#seen) return;
    this.#seen = key;
    const apply = () => {
      if (!this.#running) return;
      // As kube-proxy: an endpoint that leaves gets no new connection, but the connections it
      // has keep going (conntrack); they end when the request on them is answered.
      for (const b of this.lb.backends())
        if (!backends.includes(b.address)) this.lb.removeBackend(b.address, { drain: true });
      for (const b of backends) this.lb.addBackend(b);
      this.#changes.push({ at: Date.now(), backends });
    };
    const delay = this.#opts.propagationDelayMs ?? 100;
    if (delay <= 0) {
      apply();
      return;
    }
    const t = setTimeout(() => {
      this.#pending.delete(t);
      apply();
    }, delay);
    this.#pending.add(t);
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const t of this.#pending) clearTimeout(t);
    await this.#loop;
    await this.lb.stop();
  }
}
