/**
 * What one pass of the lab nodes controller sees (the World, listed from the API) and what it
 * decides to do (Actions, executed against the API by the controller). Deciding is pure: each
 * part of the controller (workloads, scheduler, kubelet, node lifecycle) is a function from the
 * World and the controller's memory to Actions, so it can be tested without a server.
 */
import { isPlainObject, type KObj, metaOf, type OwnerReference } from '../apiserver/object.js';

export type World = {
  /** Milliseconds since the epoch at which the lists were taken. */
  now: number;
  nodes: KObj[];
  pods: KObj[];
  deployments: KObj[];
  replicasets: KObj[];
  statefulsets: KObj[];
  daemonsets: KObj[];
  /** Leases in kube-node-lease. */
  leases: KObj[];
  /** Services and EndpointSlices (the EndpointSlice controller); absent: none. */
  services?: KObj[];
  endpointslices?: KObj[];
  /**
   * Pod uid → the state of its containers where the lab runs them for real (canary pods: HTTP
   * listeners, runtime.ts). The kubelet posts such a pod Ready only once its listener answered,
   * and finishes its deletion only once the listener stopped. Pods not in it are records only.
   */
  containers?: ReadonlyMap<string, ContainerState>;
};

/** A real container of the lab runtime: starting → ready (the listener answered) → stopping → stopped. */
export type ContainerState = 'starting' | 'ready' | 'stopping' | 'stopped';

export type PatchKind = 'merge' | 'json';

export type Action =
  | { kind: 'create'; path: string; body: KObj; why: string }
  | { kind: 'patch'; path: string; patch: unknown; patchType?: PatchKind; why: string }
  | { kind: 'delete'; path: string; gracePeriodSeconds?: number; uid?: string; why: string }
  | { kind: 'bind'; namespace: string; name: string; node: string; why: string };

/** Timers and allocations the controller keeps between passes (what a kubelet keeps in memory). */
export type Memory = {
  /** Node name → when the controller first saw it (for the node ready delay). */
  nodeSeen: Map<string, number>;
  /** Pod uid → when the controller first saw it bound to a node (for the start delay). */
  podBound: Map<string, number>;
  /** Pod uid → when the controller first saw it terminating. */
  podTerminating: Map<string, number>;
  /** Node name → when its kubelet last renewed its Lease. */
  leaseRenewed: Map<string, number>;
  /** Node name → when its kubelet last posted its status. */
  statusPosted: Map<string, number>;
  /** Node name → next host number in its pod CIDR. */
  nextIp: Map<string, number>;
  /** Pod uid → its IP, so it keeps the same one. */
  podIp: Map<string, string>;
};

export function newMemory(): Memory {
  return {
    nodeSeen: new Map(),
    podBound: new Map(),
    podTerminating: new Map(),
    leaseRenewed: new Map(),
    statusPosted: new Map(),
    nextIp: new Map(),
    podIp: new Map(),
  };
}

/** Timings and switches of the simulated kubelets and controllers. */
export type Timings = {
  /** A pod bound to a node becomes Running and Ready this long after the kubelet first sees it. */
  podStartDelayMs: number;
  /** A new node becomes Ready this long after the controller first sees it. */
  nodeReadyDelayMs: number;
  /** A terminating pod's containers stop this long after deletion started (never after its grace). */
  terminationDelayMs: number;
  /** How often each kubelet renews its Lease. */
  leaseRenewMs: number;
  /** How often each kubelet re-posts its Ready condition when nothing changed. */
  nodeStatusPeriodMs: number;
  /** A node whose Lease is older than this is marked Unknown/unreachable (node lifecycle controller). */
  nodeMonitorGracePeriodMs: number;
};

export const DEFAULT_TIMINGS: Timings = {
  podStartDelayMs: 300,
  nodeReadyDelayMs: 300,
  terminationDelayMs: 200,
  leaseRenewMs: 2_000,
  nodeStatusPeriodMs: 10_000,
  nodeMonitorGracePeriodMs: 8_000,
};

/** Per-node behaviour injected by faults (src/lab/faults.ts) and by the provisioner. */
export type NodeBehaviour = {
  /** The kubelet is not running (crashed, decommissioned): nothing is posted for the node. */
  kubeletStopped: boolean;
  /** The kubelet runs but never reports Ready (CNI never comes up). */
  neverReady: boolean;
  /** Terminating pods take their whole grace period (or this many seconds, when set). */
  slowDrain: { graceSeconds?: number } | undefined;
};

export type BehaviourOf = (node: string) => NodeBehaviour;

export const NORMAL: NodeBehaviour = { kubeletStopped: false, neverReady: false, slowDrain: undefined };

// ---- object helpers ------------------------------------------------------------------------------

/**
 * The fields of a spec or status the lab reads, as the API stores them: clients write them, so
 * each is checked where it is used (typeof, Array.isArray); the rest passes through untouched.
 */
export type Fields = { [key: string]: unknown };

export interface Condition extends Fields {
  type: string;
  status: string;
}

export interface Address extends Fields {
  type: string;
  address: string;
}

export interface PodTemplate extends Fields {
  metadata?: Fields;
  spec?: Fields;
}

export interface Spec extends Fields {
  replicas?: number;
  selector?: Fields;
  template?: PodTemplate;
  nodeName?: string;
  hostNetwork?: boolean;
  containers?: Fields[];
  ports?: Fields[];
  podCIDR?: string;
  unschedulable?: boolean;
  podManagementPolicy?: string;
  serviceName?: string;
  renewTime?: string;
  affinity?: {
    nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: unknown } };
  };
}

export interface Status extends Fields {
  phase?: string;
  conditions?: Condition[];
  addresses?: Address[];
  podIP?: string;
  startTime?: string;
  replicas?: number;
  readyReplicas?: number;
}

/** The value at a path of nested objects and arrays; undefined where one is missing. */
export function at(v: unknown, ...path: (string | number)[]): unknown {
  let cur = v;
  for (const k of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** `v` when it is an array, else none. */
export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function spec(o: KObj): Spec {
  return isPlainObject(o.spec) ? (o.spec as Spec) : {};
}

export function status(o: KObj): Status {
  return isPlainObject(o.status) ? (o.status as Status) : {};
}

export function nameOf(o: KObj): string {
  return metaOf(o).name ?? '';
}

export function nsOf(o: KObj): string {
  return metaOf(o).namespace ?? '';
}

export function uidOf(o: KObj): string {
  return metaOf(o).uid ?? '';
}

export function controllerRef(o: KObj): OwnerReference | undefined {
  return (metaOf(o).ownerReferences ?? []).find((r) => r.controller === true);
}

export function ownedBy(o: KObj, owner: KObj): boolean {
  return controllerRef(o)?.uid === uidOf(owner);
}

export function ownerReference(owner: KObj, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: nameOf(owner),
    uid: uidOf(owner),
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function isTerminating(o: KObj): boolean {
  return metaOf(o).deletionTimestamp !== undefined && metaOf(o).deletionTimestamp !== null;
}

export function podPhase(pod: KObj): string {
  const phase = status(pod).phase;
  return typeof phase === 'string' ? phase : 'Pending';
}

/** Neither finished nor being deleted: the pods a controller counts as its replicas. */
export function isActive(pod: KObj): boolean {
  const phase = podPhase(pod);
  return !isTerminating(pod) && phase !== 'Succeeded' && phase !== 'Failed';
}

export function condition(o: KObj, type: string): Condition | undefined {
  const conds = status(o).conditions;
  return Array.isArray(conds) ? conds.find((c) => c?.type === type) : undefined;
}

export function isPodReady(pod: KObj): boolean {
  return condition(pod, 'Ready')?.status === 'True';
}

export function isNodeReady(node: KObj): boolean {
  return condition(node, 'Ready')?.status === 'True';
}

export function nodeNameOf(pod: KObj): string | undefined {
  const n = spec(pod).nodeName;
  return typeof n === 'string' && n !== '' ? n : undefined;
}

/** `/api/v1/...` or `/apis/GROUP/VERSION/...` for an object or a collection. */
export function apiPath(
  apiVersion: string,
  plural: string,
  namespace: string | undefined,
  name?: string,
  subresource?: string,
): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const n = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${base}${ns}/${plural}${n}${sub}`;
}

export function podPath(pod: KObj, subresource?: string): string {
  return apiPath('v1', 'pods', nsOf(pod), nameOf(pod), subresource);
}

export function nodePath(node: string, subresource?: string): string {
  return apiPath('v1', 'nodes', undefined, node, subresource);
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** JSON with sorted keys: a stable input for hashes. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/**
 * The pod-template-hash of a template, shaped like the Deployment controller's (FNV-32a, then the
 * decimal digits mapped onto an alphabet without vowels); not byte-identical to it.
 */
export function templateHash(template: unknown): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(stableJson(template))) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return [...String(h)].map((d) => SAFE_ALPHABET[d.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
}
