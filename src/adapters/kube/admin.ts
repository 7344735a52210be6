/**
 * The Kubernetes writes a run makes: cordon, drain through the Eviction API only (a pod is never
 * deleted by ferry: PodDisruptionBudgets decide, and a refusal names the budget), node delete, and
 * the coordination.k8s.io/v1 Lease that keeps two runs off one cluster.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isKubeApiError } from '../../ports/kube.js';
import type {
  EvictOutcome,
  KubeAdminPort,
  LeaseView,
  LeaseWrite,
  NodeView,
  PdbView,
  PodView,
} from '../../ports/run.js';
import { pinnedNodes } from '../../util/node-pins.js';
import { loadKubeconfig } from './kubeconfig.js';
import {
  createRequester,
  KubeNetworkError,
  KubeRequestError,
  type KubeRequester,
  MERGE_PATCH,
  type RequestOptions,
} from './request.js';

const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

function transient(err: unknown): boolean {
  if (isKubeApiError(err)) return TRANSIENT_STATUS.has(err.status);
  return err instanceof KubeNetworkError && err.code !== undefined && TRANSIENT_CODES.has(err.code);
}

type Obj = Record<string, unknown>;
type Meta = {
  name?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  deletionTimestamp?: string;
  ownerReferences?: { kind?: string; name?: string; controller?: boolean }[];
};

const meta = (o: Obj): Meta => (o['metadata'] as Meta | undefined) ?? {};
const enc = encodeURIComponent;

export function nodeView(o: Obj): NodeView {
  const status = (o['status'] ?? {}) as {
    conditions?: { type?: string; status?: string }[];
    addresses?: { address?: string }[];
    nodeInfo?: { osImage?: string };
  };
  const spec = (o['spec'] ?? {}) as { unschedulable?: boolean };
  return {
    name: meta(o).name ?? '',
    ready: (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    unschedulable: spec.unschedulable === true,
    labels: meta(o).labels ?? {},
    addresses: (status.addresses ?? []).flatMap((a) => (a.address ? [a.address] : [])),
    osImage: status.nodeInfo?.osImage,
  };
}

export function podView(o: Obj): PodView {
  const m = meta(o);
  const owners = m.ownerReferences ?? [];
  const mirror = m.annotations?.['kubernetes.io/config.mirror'] !== undefined;
  const ctl = owners.find((r) => r.controller === true);
  const spec = (o['spec'] ?? {}) as { nodeName?: string };
  const status = (o['status'] ?? {}) as {
    phase?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  };
  const unplaced = (status.conditions ?? []).find(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
  return {
    namespace: m.namespace ?? '',
    name: m.name ?? '',
    uid: m.uid ?? '',
    terminating: m.deletionTimestamp !== undefined,
    ignoredByDrain: mirror || owners.some((r) => r.kind === 'DaemonSet' && r.controller !== false),
    node: spec.nodeName ?? '',
    ready: (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    finished: status.phase === 'Succeeded' || status.phase === 'Failed',
    controller: ctl ? { kind: ctl.kind ?? '', name: ctl.name ?? '' } : null,
    labels: m.labels ?? {},
    pinnedTo: pinnedNodes(o['spec']),
    ...(unplaced && { unschedulable: unplaced.message ?? 'Unschedulable' }),
  };
}

export function pdbView(o: Obj): PdbView {
  const spec = (o['spec'] ?? {}) as { selector?: unknown };
  const status = (o['status'] ?? {}) as Record<string, unknown>;
  const count = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    namespace: meta(o).namespace ?? '',
    name: meta(o).name ?? '',
    selector: spec.selector ?? null,
    disruptionsAllowed: count(status['disruptionsAllowed']),
    currentHealthy: count(status['currentHealthy']),
    desiredHealthy: count(status['desiredHealthy']),
  };
}

/** The eviction subresource's answer for a pod two budgets select (eviction.go, HTTP 500). */
export const SEVERAL_BUDGETS = 'This pod has more than one PodDisruptionBudget';

/** "The disruption budget web needs 2 healthy pods and has 2 currently" → "web". */
export function blockingBudget(err: KubeRequestError, namespace: string): string | undefined {
  for (const c of err.causes) {
    const m = /disruption budget (\S+)/i.exec(c.message ?? '');
    if (c.reason === 'DisruptionBudget' && m) return `${namespace}/${m[1]}`;
  }
  return undefined;
}

function leaseView(o: Obj): LeaseView {
  const spec = (o['spec'] ?? {}) as {
    holderIdentity?: string;
    renewTime?: string;
    leaseDurationSeconds?: number;
  };
  return {
    holderIdentity: spec.holderIdentity ?? null,
    renewTime: spec.renewTime ?? null,
    leaseDurationSeconds: spec.leaseDurationSeconds ?? null,
    resourceVersion: meta(o).resourceVersion ?? '',
    annotations: meta(o).annotations ?? {},
  };
}

/** MicroTime as the API wants it: RFC 3339 with microseconds. */
function microTime(iso: string): string {
  return iso.replace(/\.(\d{3})Z$/, '.$1000Z');
}

function leaseBody(namespace: string, name: string, l: LeaseWrite, resourceVersion?: string): Obj {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, annotations: l.annotations, ...(resourceVersion && { resourceVersion }) },
    spec: {
      holderIdentity: l.holderIdentity,
      leaseDurationSeconds: l.leaseDurationSeconds,
      renewTime: microTime(l.renewTime),
      ...(l.acquireTime && { acquireTime: microTime(l.acquireTime) }),
    },
  };
}

function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (k === 'endpoints') return k;
  if (/(s|x|ch|sh)$/.test(k)) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

function collectionPath(apiVersion: string, plural: string, namespace?: string): string {
  const prefix = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace === undefined ? `${prefix}/${plural}` : `${prefix}/namespaces/${enc(namespace)}/${plural}`;
}

export interface KubeAdminOptions {
  kubeconfig: string;
  context?: string;
  /** Per request. Default 15 s. */
  timeoutMs?: number;
}

export class KubeAdmin implements KubeAdminPort {
  readonly #r: KubeRequester;

  constructor(requester: KubeRequester) {
    this.#r = requester;
  }

  static fromKubeconfig(opts: KubeAdminOptions): KubeAdmin {
    const loaded = loadKubeconfig(opts.kubeconfig, opts.context);
    return new KubeAdmin(
      createRequester(loaded, opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    );
  }

  get server(): string {
    return this.#r.server;
  }

  /**
   * A request, retried on answers that say "not now": a 5xx from an instance going out of service,
   * a connection refused or reset while the load balancer has not noticed yet.
   */
  async #call(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#r.request(method, path, opts);
      } catch (err) {
        if (attempt >= 4 || !transient(err)) throw err;
        await sleep(250 * 2 ** (attempt - 1));
      }
    }
  }

  /** An eviction POST: retried like #call, except a 500 that says two budgets select the pod. */
  async #callEviction(path: string, body: unknown): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#r.request('POST', path, { body });
      } catch (err) {
        const final = err instanceof KubeRequestError && err.message.includes(SEVERAL_BUDGETS);
        if (final || attempt >= 4 || !transient(err)) throw err;
        await sleep(250 * 2 ** (attempt - 1));
      }
    }
  }

  async #get(path: string, query?: Record<string, string | number | undefined>): Promise<Obj | undefined> {
    try {
      return (await this.#call('GET', path, query ? { query } : {})) as Obj;
    } catch (err) {
      if (isKubeApiError(err, 404)) return undefined;
      throw err;
    }
  }

  async #list(path: string, query: Record<string, string | undefined> = {}): Promise<Obj[]> {
    const out: Obj[] = [];
    let token: string | undefined;
    do {
      const page = (await this.#call('GET', path, {
        query: { ...query, limit: 500, continue: token },
      })) as {
        items?: Obj[];
        metadata?: { continue?: string };
      };
      out.push(...(page.items ?? []));
      token = page.metadata?.continue || undefined;
    } while (token);
    return out;
  }

  // ---- nodes -----------------------------------------------------------------------------------

  async getNode(name: string): Promise<NodeView | undefined> {
    const o = await this.#get(`/api/v1/nodes/${enc(name)}`);
    return o && nodeView(o);
  }

  async listNodes(): Promise<NodeView[]> {
    return (await this.#list('/api/v1/nodes')).map(nodeView);
  }

  async setUnschedulable(name: string, unschedulable: boolean): Promise<void> {
    await this.#call('PATCH', `/api/v1/nodes/${enc(name)}`, {
      body: { spec: { unschedulable: unschedulable ? true : null } },
      contentType: MERGE_PATCH,
    });
  }

  async deleteNode(name: string): Promise<void> {
    try {
      await this.#call('DELETE', `/api/v1/nodes/${enc(name)}`);
    } catch (err) {
      if (!isKubeApiError(err, 404)) throw err;
    }
  }

  // ---- workloads ---------------------------------------------------------------------------------

  async scaleWorkload(
    kind: 'Deployment' | 'StatefulSet',
    namespace: string,
    name: string,
    replicas: number,
  ): Promise<void> {
    const plural = kind === 'Deployment' ? 'deployments' : 'statefulsets';
    // The scale subresource: what `kubectl scale` uses, and all an HPA-managed workload allows.
    await this.#call('PATCH', `/apis/apps/v1/namespaces/${enc(namespace)}/${plural}/${enc(name)}/scale`, {
      body: { spec: { replicas } },
      contentType: MERGE_PATCH,
    });
  }

  // ---- pods and drain ----------------------------------------------------------------------------

  async podsOnNode(node: string): Promise<PodView[]> {
    return (await this.#list('/api/v1/pods', { fieldSelector: `spec.nodeName=${node}` })).map(podView);
  }

  async listPods(namespace: string): Promise<PodView[]> {
    return (await this.#list(`/api/v1/namespaces/${enc(namespace)}/pods`)).map(podView);
  }

  async listPdbs(namespace?: string): Promise<PdbView[]> {
    const path =
      namespace === undefined
        ? '/apis/policy/v1/poddisruptionbudgets'
        : `/apis/policy/v1/namespaces/${enc(namespace)}/poddisruptionbudgets`;
    return (await this.#list(path)).map(pdbView);
  }

  async getPdb(namespace: string, name: string): Promise<PdbView | undefined> {
    const o = await this.#get(
      `/apis/policy/v1/namespaces/${enc(namespace)}/poddisruptionbudgets/${enc(name)}`,
    );
    return o && pdbView(o);
  }

  /**
   * One eviction: evicted, already gone, refused with the budget that refused it, or refused for
   * good because two budgets select the pod.
   */
  async evict(namespace: string, name: string): Promise<EvictOutcome> {
    const path = `/api/v1/namespaces/${enc(namespace)}/pods/${enc(name)}/eviction`;
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } };
    try {
      // Not #call: its retry of a 500 would repeat the "more than one budget" answer as if it
      // were an instance going away. Network-level failures still get the usual retries.
      await this.#callEviction(path, body);
      return { kind: 'evicted' };
    } catch (err) {
      if (isKubeApiError(err, 404)) return { kind: 'gone' };
      if (err instanceof KubeRequestError && err.status === 500 && err.message.includes(SEVERAL_BUDGETS))
        return { kind: 'several-budgets', message: err.message.replace(/^.*HTTP 500 \w*: /, '') };
      if (err instanceof KubeRequestError && err.status === 429) {
        const detail = err.causes
          .map((c) => c.message)
          .filter(Boolean)
          .join('; ');
        return {
          kind: 'blocked',
          pdb: blockingBudget(err, namespace),
          message: detail ? `${err.message.replace(/^.*HTTP 429 \w*: /, '')} ${detail}` : err.message,
        };
      }
      throw err;
    }
  }

  // ---- endpoint -----------------------------------------------------------------------------------

  async apiserverAddresses(): Promise<string[] | undefined> {
    let slices: Obj[];
    try {
      slices = await this.#list('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        labelSelector: 'kubernetes.io/service-name=kubernetes',
      });
    } catch (err) {
      if (isKubeApiError(err, 404)) return undefined;
      throw err;
    }
    if (slices.length === 0) return undefined;
    return slices.flatMap((s) =>
      ((s['endpoints'] ?? []) as { addresses?: string[]; conditions?: { ready?: boolean } }[])
        .filter((e) => e.conditions?.ready !== false)
        .flatMap((e) => e.addresses ?? []),
    );
  }

  async getObject(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<Obj | undefined> {
    return this.#get(`${collectionPath(apiVersion, pluralOf(kind), namespace)}/${enc(name)}`);
  }

  async mergePatchObject(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    patch: Obj,
  ): Promise<void> {
    await this.#call('PATCH', `${collectionPath(apiVersion, pluralOf(kind), namespace)}/${enc(name)}`, {
      body: patch,
      contentType: MERGE_PATCH,
    });
  }

  async readyz(): Promise<boolean> {
    try {
      await this.#r.request('GET', '/readyz', { raw: true, timeoutMs: 3_000 });
      return true;
    } catch {
      return false;
    }
  }

  // ---- Lease ------------------------------------------------------------------------------------

  #leasePath(namespace: string, name?: string): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${enc(namespace)}/leases`;
    return name === undefined ? base : `${base}/${enc(name)}`;
  }

  async getLease(namespace: string, name: string): Promise<LeaseView | undefined> {
    const o = await this.#get(this.#leasePath(namespace, name));
    return o && leaseView(o);
  }

  async createLease(namespace: string, name: string, lease: LeaseWrite): Promise<LeaseView> {
    return leaseView(
      (await this.#call('POST', this.#leasePath(namespace), {
        body: leaseBody(namespace, name, lease),
      })) as Obj,
    );
  }

  async replaceLease(
    namespace: string,
    name: string,
    resourceVersion: string,
    lease: LeaseWrite,
  ): Promise<LeaseView> {
    return leaseView(
      (await this.#call('PUT', this.#leasePath(namespace, name), {
        body: leaseBody(namespace, name, lease, resourceVersion),
      })) as Obj,
    );
  }

  async deleteLease(namespace: string, name: string, resourceVersion: string): Promise<void> {
    await this.#call('DELETE', this.#leasePath(namespace, name), {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } },
    });
  }
}
