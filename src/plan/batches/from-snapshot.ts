/**
 * The batch planner's model from a snapshot: the workers (allocatable, labels, taints), the pods
 * a drain evicts from them (DaemonSet and mirror pods stay: their requests count against their
 * node and its replacement), and the PodDisruptionBudgets over those pods with the disruptions
 * each allows. One pass over the workers' pods; pure.
 */

import { pvNodes } from '../../audit/rules/workload-hostpath.js';
import { isReady, scaled } from '../../audit/rules/workload-pdb.js';
import { isFinished, isMirrorPod, volumesOf } from '../../audit/rules/workload-pods.js';
import type { IndexedPdb, SnapshotIndex } from '../../audit/snapshot-index.js';
import type { NodeFact } from '../../facts/model.js';
import type { KubeObject, Snapshot } from '../../snapshot/model.js';
import { pinsOf } from '../../util/node-pins.js';
import { cpuMillis, parseQuantity } from '../../util/quantity.js';
import { byName } from '../order.js';
import type {
  ClusterModel,
  ModelNode,
  ModelPdb,
  ModelPod,
  NodeTerm,
  Owner,
  Pin,
  Scheduling,
  SpreadRule,
  Vec,
} from './model.js';

const DEFAULT_GRACE_SECONDS = 30;
const REPLICATED = new Set(['Deployment', 'StatefulSet', 'ReplicaSet']);

// biome-ignore lint/suspicious/noExplicitAny: pod specs are read structurally
type Any = any;

function requestsOf(c: Any): Vec {
  const r = c?.resources?.requests ?? {};
  return { cpu: cpuMillis(r.cpu) ?? 0, memory: parseQuantity(r.memory) ?? 0, pods: 0 };
}

/** What the scheduler reserves: containers summed, or the largest init container, plus the pod overhead. */
export function podRequests(spec: Any): Vec {
  const sum: Vec = { cpu: 0, memory: 0, pods: 1 };
  for (const c of Array.isArray(spec?.containers) ? spec.containers : []) {
    const r = requestsOf(c);
    sum.cpu += r.cpu;
    sum.memory += r.memory;
  }
  for (const c of Array.isArray(spec?.initContainers) ? spec.initContainers : []) {
    const r = requestsOf(c);
    sum.cpu = Math.max(sum.cpu, r.cpu);
    sum.memory = Math.max(sum.memory, r.memory);
  }
  const o = spec?.overhead ?? {};
  sum.cpu += cpuMillis(o.cpu) ?? 0;
  sum.memory += parseQuantity(o.memory) ?? 0;
  return sum;
}

function allocatableOf(node: KubeObject | undefined): Vec {
  const a = node?.status?.allocatable ?? {};
  return {
    cpu: cpuMillis(a.cpu) ?? Number.POSITIVE_INFINITY,
    memory: parseQuantity(a.memory) ?? Number.POSITIVE_INFINITY,
    pods: parseQuantity(a.pods) ?? Number.POSITIVE_INFINITY,
  };
}

function termsOf(list: unknown): NodeTerm[][] {
  if (!Array.isArray(list)) return [];
  return list.map((term: Any) =>
    (Array.isArray(term?.matchExpressions) ? term.matchExpressions : []).map((e: Any) => ({
      key: String(e?.key ?? ''),
      operator: String(e?.operator ?? ''),
      values: Array.isArray(e?.values) ? e.values.map(String) : [],
    })),
  );
}

/** A PDB's allowed disruptions for `expected` pods of which `healthy` are Ready, from its spec. */
function allowedFromSpec(spec: Any, expected: number, healthy: number): number {
  const desired =
    spec?.minAvailable !== undefined
      ? (scaled(spec.minAvailable, expected) ?? expected)
      : spec?.maxUnavailable !== undefined
        ? Math.max(0, expected - (scaled(spec.maxUnavailable, expected) ?? 0))
        : // Neither set: the disruption controller asks for one available pod.
          1;
  return Math.max(0, healthy - desired);
}

function ruleOf(spec: Any): string {
  if (spec?.minAvailable !== undefined) return `minAvailable ${spec.minAvailable}`;
  if (spec?.maxUnavailable !== undefined) return `maxUnavailable ${spec.maxUnavailable}`;
  return 'no minAvailable or maxUnavailable';
}

export function clusterModel(
  snapshot: Snapshot,
  index: SnapshotIndex,
  workers: readonly NodeFact[],
): ClusterModel {
  const ordered = [...workers].sort(byName);
  const schedulings: Scheduling[] = [];
  const schedulingIds = new Map<string, number>();
  const pdbs: ModelPdb[] = [];
  const pdbIds = new Map<IndexedPdb, number>();
  const pods: ModelPod[] = [];

  // PersistentVolumes by the claim bound to them.
  const pvByClaim = new Map<string, KubeObject>();
  for (const pv of snapshot.resources.persistentvolumes) {
    const ref = pv.spec?.claimRef;
    if (typeof ref?.name === 'string') pvByClaim.set(`${ref.namespace ?? 'default'}/${ref.name}`, pv);
  }

  const ownerOf = (pod: KubeObject): Owner | null => {
    const top = index.topControllerOf(pod);
    const ns = pod.metadata.namespace ?? 'default';
    if (top) {
      const r = top.spec?.replicas;
      return {
        kind: top.kind,
        namespace: top.metadata.namespace ?? ns,
        name: top.metadata.name,
        replicas: REPLICATED.has(top.kind) ? (typeof r === 'number' ? r : 1) : null,
      };
    }
    // Owned by something the snapshot does not hold (an operator's resource): something recreates it.
    const ref = pod.metadata.ownerReferences?.find((o) => o.controller) ?? pod.metadata.ownerReferences?.[0];
    return ref ? { kind: ref.kind, namespace: ns, name: ref.name, replicas: null } : null;
  };

  const pdbIndex = (b: IndexedPdb): number => {
    const known = pdbIds.get(b);
    if (known !== undefined) return known;
    const selected = index.podsSelectedBy(b).filter((p) => !isFinished(p));
    const status = b.pdb.status ?? {};
    const expected = typeof status.expectedPods === 'number' ? status.expectedPods : selected.length;
    const healthy =
      typeof status.currentHealthy === 'number' ? status.currentHealthy : selected.filter(isReady).length;
    const fromStatus = typeof status.disruptionsAllowed === 'number';
    const owners = new Map<string, Owner>();
    for (const p of selected) {
      const o = ownerOf(p);
      if (o) owners.set(`${o.kind}/${o.namespace}/${o.name}`, o);
    }
    const only = owners.size === 1 ? [...owners.values()][0]! : null;
    const id = pdbs.length;
    pdbs.push({
      namespace: b.namespace,
      name: b.pdb.metadata.name,
      allowed: fromStatus
        ? Math.max(0, status.disruptionsAllowed)
        : allowedFromSpec(b.pdb.spec, expected, healthy),
      source: fromStatus ? 'status' : 'spec',
      allowedWithExtraReplica: allowedFromSpec(b.pdb.spec, expected + 1, healthy + 1),
      workload: only && (only.kind === 'Deployment' || only.kind === 'StatefulSet') ? only : null,
      rule: ruleOf(b.pdb.spec),
    });
    pdbIds.set(b, id);
    return id;
  };

  const schedulingOf = (spec: Any, volumeTerms: NodeTerm[][][]): number => {
    const s: Scheduling = {
      tolerations: Array.isArray(spec?.tolerations) ? spec.tolerations : [],
      nodeSelector:
        spec?.nodeSelector && typeof spec.nodeSelector === 'object'
          ? (spec.nodeSelector as Record<string, string>)
          : {},
      required: [
        ...[
          termsOf(
            spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
          ),
        ].filter((l) => l.length > 0),
        ...volumeTerms,
      ],
    };
    const key = JSON.stringify(s);
    let id = schedulingIds.get(key);
    if (id === undefined) {
      id = schedulings.length;
      schedulings.push(s);
      schedulingIds.set(key, id);
    }
    return id;
  };

  const spreadOf = (pod: KubeObject): SpreadRule[] => {
    const spec = pod.spec ?? {};
    const ns = pod.metadata.namespace ?? 'default';
    const out: SpreadRule[] = [];
    for (const c of Array.isArray(spec.topologySpreadConstraints) ? spec.topologySpreadConstraints : []) {
      if (typeof c?.topologyKey !== 'string' || (c.whenUnsatisfiable ?? 'DoNotSchedule') !== 'DoNotSchedule')
        continue;
      const maxSkew = typeof c.maxSkew === 'number' && c.maxSkew > 0 ? c.maxSkew : 1;
      out.push({
        group: `spread ${ns} ${c.topologyKey} ${JSON.stringify(c.labelSelector ?? {})}`,
        topologyKey: c.topologyKey,
        maxSkew,
      });
    }
    const anti = spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    for (const term of Array.isArray(anti) ? anti : []) {
      if (typeof term?.topologyKey !== 'string') continue;
      out.push({
        group: `anti ${ns} ${term.topologyKey} ${JSON.stringify(term.labelSelector ?? {})}`,
        topologyKey: term.topologyKey,
        maxSkew: 0,
      });
    }
    return out;
  };

  const nodes: ModelNode[] = ordered.map((w) => {
    const fixed: Vec = { cpu: 0, memory: 0, pods: 0 };
    for (const p of index.podsByNode.get(w.name) ?? []) {
      if (isFinished(p)) continue;
      const spec = p.spec ?? {};
      const req = podRequests(spec);
      const stays =
        isMirrorPod(p) || p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet') === true;
      if (stays) {
        fixed.cpu += req.cpu;
        fixed.memory += req.memory;
        fixed.pods += req.pods;
        continue;
      }
      const ns = p.metadata.namespace ?? 'default';
      let pin: Pin | null = null;
      const volumeTerms: NodeTerm[][][] = [];
      for (const v of volumesOf(spec)) {
        const claim = v.persistentVolumeClaim?.claimName;
        const pv = typeof claim === 'string' ? pvByClaim.get(`${ns}/${claim}`) : undefined;
        if (!pv) continue;
        if (pv.spec?.local !== undefined || pv.spec?.hostPath !== undefined || pvNodes(pv).length > 0) {
          pin ??= { kind: 'local-volume', volume: pv.metadata.name };
          continue;
        }
        // A zonal volume: the pod may only go where the volume can be attached.
        const terms = termsOf(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms);
        if (terms.length > 0) volumeTerms.push(terms);
      }
      const named = pinsOf(spec, 'spec', false)[0];
      if (!pin && named) pin = { kind: 'node-name', field: named.field };
      const grace = spec.terminationGracePeriodSeconds;
      pods.push({
        namespace: ns,
        name: p.metadata.name,
        node: w.name,
        requests: req,
        owner: ownerOf(p),
        pdbs: index.pdbsForPod(p).map(pdbIndex),
        scheduling: schedulingOf(spec, volumeTerms),
        spread: spreadOf(p),
        pin,
        graceSeconds: typeof grace === 'number' && grace >= 0 ? grace : DEFAULT_GRACE_SECONDS,
      });
    }
    return {
      name: w.name,
      labels: w.labels,
      taints: w.taints,
      allocatable: allocatableOf(index.nodesByName.get(w.name)),
      fixed,
      unschedulable: w.unschedulable,
    };
  });
  return { workers: nodes, pods, pdbs, schedulings };
}
