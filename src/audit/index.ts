/**
 * SnapshotIndex: the lookups rules need, built once per audit in one linear pass, so that no rule
 * has to scan every pod for every node (the audit must stay far from quadratic at 5,000 nodes and
 * 150,000 pods; issue 3 "Speed").
 */
import type { KubeObject, Snapshot, StaticPod } from '../snapshot/model.js';
import { fromLabelSelector, matches, type Selector } from './selector.js';

export interface IndexedPdb {
  pdb: KubeObject;
  namespace: string;
  selector: Selector;
}

/** Kinds that own pods and carry a pod template. */
export type ControllerKind = 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'DaemonSet' | 'Job' | 'CronJob';

/** A pod template and the object it lives in: what workload rules check. */
export interface Workload {
  kind: ControllerKind | 'Pod';
  object: KubeObject;
  namespace: string;
  /** The PodSpec (for bare pods, the pod's own spec). */
  // biome-ignore lint/suspicious/noExplicitAny: pod specs are read structurally by the rules
  podSpec: any;
  /** Field path of podSpec inside the object, for evidence: e.g. "spec.template.spec". */
  specPath: string;
  /** Labels pods of this workload carry (template labels, or the pod's labels). */
  podLabels: Record<string, string>;
}

export interface SnapshotIndex {
  nodesByName: ReadonlyMap<string, KubeObject>;
  /** Pods by `spec.nodeName`; unscheduled pods are under "". */
  podsByNode: ReadonlyMap<string, readonly KubeObject[]>;
  podsByNamespace: ReadonlyMap<string, readonly KubeObject[]>;
  /** Pods by the uid of their controller ownerReference. */
  podsByOwnerUid: ReadonlyMap<string, readonly KubeObject[]>;
  /** Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs and CronJobs by uid. */
  controllersByUid: ReadonlyMap<string, KubeObject>;
  pdbsByNamespace: ReadonlyMap<string, readonly IndexedPdb[]>;
  servicesByNamespace: ReadonlyMap<string, readonly KubeObject[]>;
  namespacesByName: ReadonlyMap<string, KubeObject>;
  /** ConfigMaps by "namespace/name". */
  configMaps: ReadonlyMap<string, KubeObject>;
  /** Static pods (manifests or mirror pods) by component, e.g. "kube-apiserver". */
  staticPodsByComponent: ReadonlyMap<string, readonly StaticPod[]>;
  /** Pods with the `kubernetes.io/config.mirror` annotation. */
  mirrorPods: readonly KubeObject[];

  /** The controller that owns an object directly (ownerReference with controller: true). */
  controllerOf(obj: KubeObject): KubeObject | undefined;
  /** Follows owners up: Pod → ReplicaSet → Deployment, Pod → Job → CronJob. */
  topControllerOf(obj: KubeObject): KubeObject | undefined;
  /** Pods a PDB selects (same namespace). */
  podsSelectedBy(pdb: IndexedPdb): KubeObject[];
  /** PDBs whose selector matches the pod. */
  pdbsForPod(pod: KubeObject): IndexedPdb[];
  /** Every pod template once: controllers not owned by another controller, plus bare pods. */
  workloads(): readonly Workload[];
}

const CONTROLLER_KINDS: readonly ControllerKind[] = [
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'CronJob',
];

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function nsOf(o: KubeObject): string {
  return o.metadata.namespace ?? 'default';
}

/** Key for objects without a uid (hand-written fixtures): kind/namespace/name. */
function nameKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

export function buildIndex(snapshot: Snapshot): SnapshotIndex {
  const r = snapshot.resources;
  const nodesByName = new Map<string, KubeObject>();
  for (const n of r.nodes) nodesByName.set(n.metadata.name, n);

  const podsByNode = new Map<string, KubeObject[]>();
  const podsByNamespace = new Map<string, KubeObject[]>();
  const podsByOwnerUid = new Map<string, KubeObject[]>();
  const mirrorPods: KubeObject[] = [];
  for (const p of r.pods) {
    push(podsByNode, (p.spec?.nodeName as string | undefined) ?? '', p);
    push(podsByNamespace, nsOf(p), p);
    const owner = p.metadata.ownerReferences?.find((o) => o.controller) ?? p.metadata.ownerReferences?.[0];
    if (owner?.uid) push(podsByOwnerUid, owner.uid, p);
    if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) mirrorPods.push(p);
  }

  const controllersByUid = new Map<string, KubeObject>();
  const controllersByName = new Map<string, KubeObject>();
  const controllers: KubeObject[] = [
    ...r.deployments,
    ...r.replicasets,
    ...r.statefulsets,
    ...r.daemonsets,
    ...r.jobs,
    ...r.cronjobs,
  ];
  for (const c of controllers) {
    if (c.metadata.uid) controllersByUid.set(c.metadata.uid, c);
    controllersByName.set(nameKey(c.kind, nsOf(c), c.metadata.name), c);
  }

  const pdbsByNamespace = new Map<string, IndexedPdb[]>();
  for (const pdb of r.poddisruptionbudgets) {
    push(pdbsByNamespace, nsOf(pdb), {
      pdb,
      namespace: nsOf(pdb),
      selector: fromLabelSelector(pdb.spec?.selector),
    });
  }

  const servicesByNamespace = new Map<string, KubeObject[]>();
  for (const s of r.services) push(servicesByNamespace, nsOf(s), s);

  const namespacesByName = new Map<string, KubeObject>();
  for (const n of r.namespaces) namespacesByName.set(n.metadata.name, n);

  const configMaps = new Map<string, KubeObject>();
  for (const c of r.configmaps) configMaps.set(`${nsOf(c)}/${c.metadata.name}`, c);

  const staticPodsByComponent = new Map<string, StaticPod[]>();
  for (const sp of snapshot.staticPods) push(staticPodsByComponent, sp.component, sp);

  function controllerOf(obj: KubeObject): KubeObject | undefined {
    const refs = obj.metadata.ownerReferences;
    if (!refs || refs.length === 0) return undefined;
    const ref = refs.find((o) => o.controller) ?? refs[0]!;
    return (
      (ref.uid ? controllersByUid.get(ref.uid) : undefined) ??
      controllersByName.get(nameKey(ref.kind, nsOf(obj), ref.name))
    );
  }

  function topControllerOf(obj: KubeObject): KubeObject | undefined {
    let cur = controllerOf(obj);
    // Bounded walk: owner chains are at most Pod → RS → Deployment or Pod → Job → CronJob.
    for (let i = 0; cur && i < 4; i++) {
      const up = controllerOf(cur);
      if (!up) break;
      cur = up;
    }
    return cur;
  }

  // Pods by `namespace, key=value`, built on first use: a selector with an equality requirement
  // then tests only the pods carrying that label.
  let podsByLabel: Map<string, KubeObject[]> | undefined;
  function podsSelectedBy(pdb: IndexedPdb): KubeObject[] {
    if (pdb.selector.kind === 'nothing') return [];
    const eq = pdb.selector.requirements.find((q) => q.op === 'In' && q.values.length === 1);
    let candidates: readonly KubeObject[];
    if (eq && eq.op === 'In') {
      if (!podsByLabel) {
        podsByLabel = new Map();
        for (const p of r.pods)
          for (const [k, v] of Object.entries(p.metadata.labels ?? {}))
            push(podsByLabel, `${nsOf(p)}\u0000${k}\u0000${v}`, p);
      }
      candidates = podsByLabel.get(`${pdb.namespace}\u0000${eq.key}\u0000${eq.values[0]}`) ?? [];
    } else candidates = podsByNamespace.get(pdb.namespace) ?? [];
    return candidates.filter((p) => matches(pdb.selector, p.metadata.labels));
  }

  // PDBs bucketed by one `key=value` they require, so a pod only tests the PDBs that could match
  // it (a namespace with thousands of PDBs and pods stays linear). PDBs without such a
  // requirement (empty selector, only expressions) are tested against every pod of the namespace.
  const pdbBuckets = new Map<string, IndexedPdb[]>();
  const pdbUnbucketed = new Map<string, IndexedPdb[]>();
  for (const [ns, list] of pdbsByNamespace) {
    for (const b of list) {
      if (b.selector.kind === 'nothing') continue;
      const eq = b.selector.requirements.find((q) => q.op === 'In' && q.values.length === 1);
      if (eq && eq.op === 'In') push(pdbBuckets, `${ns}\u0000${eq.key}\u0000${eq.values[0]}`, b);
      else push(pdbUnbucketed, ns, b);
    }
  }

  function pdbsForPod(pod: KubeObject): IndexedPdb[] {
    const ns = nsOf(pod);
    const labels = pod.metadata.labels ?? {};
    const out: IndexedPdb[] = [];
    for (const [k, v] of Object.entries(labels)) {
      for (const b of pdbBuckets.get(`${ns}\u0000${k}\u0000${v}`) ?? [])
        if (matches(b.selector, labels)) out.push(b);
    }
    for (const b of pdbUnbucketed.get(ns) ?? []) if (matches(b.selector, labels)) out.push(b);
    return out;
  }

  let workloadCache: Workload[] | undefined;
  function workloads(): readonly Workload[] {
    if (workloadCache) return workloadCache;
    const out: Workload[] = [];
    for (const c of controllers) {
      // A ReplicaSet owned by a Deployment, or a Job owned by a CronJob, is the same template.
      if (controllerOf(c)) continue;
      const kind = c.kind as ControllerKind;
      if (!CONTROLLER_KINDS.includes(kind)) continue;
      const isCron = kind === 'CronJob';
      const template = isCron ? c.spec?.jobTemplate?.spec?.template : c.spec?.template;
      if (!template) continue;
      out.push({
        kind,
        object: c,
        namespace: nsOf(c),
        podSpec: template.spec ?? {},
        specPath: isCron ? 'spec.jobTemplate.spec.template.spec' : 'spec.template.spec',
        podLabels: (template.metadata?.labels as Record<string, string> | undefined) ?? {},
      });
    }
    for (const p of r.pods) {
      if (controllerOf(p)) continue;
      // Pods owned by something not in the snapshot (a Node for mirror pods, an operator's CR)
      // are still templates nobody else reports.
      out.push({
        kind: 'Pod',
        object: p,
        namespace: nsOf(p),
        podSpec: p.spec ?? {},
        specPath: 'spec',
        podLabels: p.metadata.labels ?? {},
      });
    }
    workloadCache = out;
    return out;
  }

  return {
    nodesByName,
    podsByNode,
    podsByNamespace,
    podsByOwnerUid,
    controllersByUid,
    pdbsByNamespace,
    servicesByNamespace,
    namespacesByName,
    configMaps,
    staticPodsByComponent,
    mirrorPods,
    controllerOf,
    topControllerOf,
    podsSelectedBy,
    pdbsForPod,
    workloads,
  };
}
