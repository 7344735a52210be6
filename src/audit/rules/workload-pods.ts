/**
 * Pod-template reading shared by the kubelet, nodes and workload rule families: which templates
 * to check (one per controller, never one per pod), their containers, volumes and mounts, and the
 * pods each controller runs. Everything is computed once per audit, in linear passes, and cached
 * on the SnapshotIndex (5,000 nodes / 150,000 pods must stay fast).
 */
import type { KubeObject } from '../../snapshot/model.js';
import type { Evidence, ObjectRef, Observation } from '../findings.js';
import type { SnapshotIndex, Workload } from '../snapshot-index.js';

export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/** The parts of a container the rules read. */
export interface ContainerSpec {
  name?: string;
  image?: string;
  command?: unknown[];
  args?: unknown[];
  env?: { name?: string; value?: unknown }[];
  securityContext?: {
    privileged?: boolean;
    capabilities?: { add?: unknown[] };
  };
  volumeMounts?: { name?: string; mountPath?: string; readOnly?: boolean }[];
}

export interface VolumeSpec {
  name?: string;
  hostPath?: { path?: string; type?: string };
  emptyDir?: { medium?: string; sizeLimit?: string };
  flexVolume?: { driver?: string };
  persistentVolumeClaim?: { claimName?: string };
}

export type ContainerKind = 'containers' | 'initContainers' | 'ephemeralContainers';

export interface ContainerAt {
  container: ContainerSpec;
  /** Field path inside the pod spec, e.g. "containers[agent]". */
  path: string;
}

export function isMirrorPod(pod: KubeObject): boolean {
  return pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined;
}

export function isFinished(pod: KubeObject): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The containers of a pod spec (regular, init, ephemeral), each with its field path. */
export function containersOf(spec: unknown): ContainerAt[] {
  const out: ContainerAt[] = [];
  if (!isRecord(spec)) return out;
  for (const kind of ['initContainers', 'containers', 'ephemeralContainers'] as ContainerKind[]) {
    const list = spec[kind];
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (!isRecord(c)) return;
      const container = c as ContainerSpec;
      out.push({ container, path: `${kind}[${container.name ?? i}]` });
    });
  }
  return out;
}

export function volumesOf(spec: unknown): VolumeSpec[] {
  if (!isRecord(spec) || !Array.isArray(spec['volumes'])) return [];
  return (spec['volumes'] as unknown[]).filter(isRecord) as VolumeSpec[];
}

/** How the containers mount one volume: whether any mount can write, and where it is mounted. */
export interface MountUse {
  mounted: boolean;
  writable: boolean;
  /** Containers that mount it read-write. */
  writers: string[];
}

export function mountUse(spec: unknown, volumeName: string | undefined): MountUse {
  const use: MountUse = { mounted: false, writable: false, writers: [] };
  if (volumeName === undefined) return use;
  for (const { container } of containersOf(spec)) {
    for (const m of container.volumeMounts ?? []) {
      if (m.name !== volumeName) continue;
      use.mounted = true;
      if (m.readOnly !== true) {
        use.writable = true;
        if (container.name && !use.writers.includes(container.name)) use.writers.push(container.name);
      }
    }
  }
  return use;
}

/** The command line of a container as one string (command + args), for pattern checks. */
export function commandLine(c: ContainerSpec): string {
  const parts = [...(c.command ?? []), ...(c.args ?? [])];
  return parts.filter((p) => typeof p === 'string').join(' ');
}

export function addedCapabilities(c: ContainerSpec): string[] {
  const add = c.securityContext?.capabilities?.add;
  if (!Array.isArray(add)) return [];
  return add
    .filter((a): a is string => typeof a === 'string')
    .map((a) => a.replace(/^CAP_/, '').toUpperCase());
}

export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

// ---------------------------------------------------------------------------------------------
// Evidence

export function refOf(o: KubeObject): ObjectRef {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace !== undefined ? { namespace: o.metadata.namespace } : {}),
    ...(o.metadata.uid !== undefined ? { uid: o.metadata.uid } : {}),
  };
}

export function objectEvidence(o: KubeObject, field: string | undefined, obs: Observation = {}): Evidence {
  return { kind: 'object', object: refOf(o), ...(field !== undefined ? { field } : {}), ...obs };
}

/** "Deployment shop/web" */
export function describeObj(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** "a, b, c and 4 more": bounded lists in messages, whatever the cluster size. */
export function listSome(items: readonly string[], max = 5): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

// ---------------------------------------------------------------------------------------------
// Templates and the pods behind them (cached per audit)

/** A pod template to check, with the pods it runs now (for per-node reporting). */
export interface Template extends Workload {
  /** Pods of this template in the snapshot (a bare pod: itself). */
  pods: readonly KubeObject[];
}

interface PodModel {
  templates: Template[];
  podsByTop: Map<KubeObject, KubeObject[]>;
}

const cache = new WeakMap<SnapshotIndex, PodModel>();

/**
 * Every pod template once: top-level controllers, plus pods without a known controller. Mirror
 * pods are left out (static pods: kubelet.static-pods reports them; Talos runs its own control
 * plane), and pods whose owner is not in the snapshot are reported once per owner, not per pod.
 */
export function templatesOf(index: SnapshotIndex): readonly Template[] {
  return model(index).templates;
}

function model(index: SnapshotIndex): PodModel {
  const hit = cache.get(index);
  if (hit) return hit;
  const podsByTop = new Map<KubeObject, KubeObject[]>();
  for (const pods of index.podsByNamespace.values()) {
    for (const p of pods) {
      const top = index.topControllerOf(p) ?? p;
      const list = podsByTop.get(top);
      if (list) list.push(p);
      else podsByTop.set(top, [p]);
    }
  }
  const templates: Template[] = [];
  const byOwner = new Map<string, KubeObject[]>();
  for (const w of index.workloads()) {
    if (w.kind === 'Pod') {
      if (isMirrorPod(w.object)) continue;
      const refs = w.object.metadata.ownerReferences;
      const owner = refs?.find((o) => o.controller) ?? refs?.[0];
      if (owner) {
        // Owner not in the snapshot (an operator's CR, a filtered ReplicaSet): one template per owner.
        const key = `${w.namespace}/${owner.kind}/${owner.name}`;
        const pods = byOwner.get(key);
        if (pods) {
          pods.push(w.object);
          continue;
        }
        const fresh = [w.object];
        byOwner.set(key, fresh);
        templates.push({ ...w, pods: fresh });
        continue;
      }
    }
    templates.push({ ...w, pods: podsByTop.get(w.object) ?? [] });
  }
  const m = { templates, podsByTop };
  cache.set(index, m);
  return m;
}

/** Nodes the given pods run on, sorted, without duplicates. */
export function nodesOf(pods: readonly KubeObject[]): string[] {
  const set = new Set<string>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (typeof n === 'string' && n) set.add(n);
  }
  return [...set].sort();
}
