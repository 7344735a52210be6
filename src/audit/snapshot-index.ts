/**
 * SnapshotIndex: the lookups rules need, built once per audit in one linear pass, so that no rule
 * has to scan every pod for every node (the audit must stay far from quadratic at 5,000 nodes and
 * 150,000 pods; docs/benchmarks.md "audit-scale").
 */
import type { KubeObject, Snapshot, StaticPod } from '../snapshot/model.js';
import { type LabelSelector, readLabelSelector, selects } from '../util/label-selector.js';

export interface IndexedPdb {
  pdb: KubeObject;
  namespace: string;
  selector: LabelSelector;
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

/** namespace → label key → label value → items. */
export type LabelTree<T> = Map<string, Map<string, Map<string, T[]>>>;

export function treePush<T>(tree: LabelTree<T>, ns: string, key: string, value: string, item: T): void {
  let byKey = tree.get(ns);
  if (!byKey) {
    byKey = new Map();
    tree.set(ns, byKey);
  }
  let byValue = byKey.get(key);
  if (!byValue) {
    byValue = new Map();
    byKey.set(key, byValue);
  }
  const list = byValue.get(value);
  if (list) list.push(item);
  else byValue.set(value, [item]);
}

/** One `key = value` a selector requires (an equality, or an In with a single value), to bucket it by. */
export function equalityAnchor(sel: LabelSelector): { key: string; value: string } | undefined {
  for (const q of sel ?? []) {
    if (q.op === 'eq') return { key: q.key, value: q.value };
    if (q.op === 'in' && q.values.length === 1) return { key: q.key, value: q.values[0]! };
  }
  return undefined;
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
  const mirrorPods: KubeObject[] = [];
  for (const p of r.pods) {
    push(podsByNode, (p.spec?.nodeName as string | undefined) ?? '', p);
    push(podsByNamespace, nsOf(p), p);
    if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) mirrorPods.push(p);
  }
  // Built on first use: no rule reads it today, and 150,000 uid keys are not free.
  let podsByOwnerUid: Map<string, KubeObject[]> | undefined;
  function ownerIndex(): Map<string, KubeObject[]> {
    if (podsByOwnerUid) return podsByOwnerUid;
    podsByOwnerUid = new Map();
    for (const p of r.pods) {
      const owner = p.metadata.ownerReferences?.find((o) => o.controller) ?? p.metadata.ownerReferences?.[0];
      if (owner?.uid) push(podsByOwnerUid, owner.uid, p);
    }
    return podsByOwnerUid;
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
      selector: readLabelSelector(pdb.spec?.selector),
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
    let ref = refs[0]!;
    for (const o of refs)
      if (o.controller) {
        ref = o;
        break;
      }
    return (
      (ref.uid ? controllersByUid.get(ref.uid) : undefined) ??
      controllersByName.get(nameKey(ref.kind, nsOf(obj), ref.name))
    );
  }

  // The top of each controller's chain, once per controller: 150,000 pods share a few thousand.
  const topOf = new Map<KubeObject, KubeObject>();
  function topControllerOf(obj: KubeObject): KubeObject | undefined {
    const direct = controllerOf(obj);
    if (!direct) return undefined;
    const known = topOf.get(direct);
    if (known) return known;
    let cur = direct;
    // Bounded walk: owner chains are at most Pod → RS → Deployment or Pod → Job → CronJob.
    for (let i = 0; i < 4; i++) {
      const up = controllerOf(cur);
      if (!up) break;
      cur = up;
    }
    topOf.set(direct, cur);
    return cur;
  }

  // Pods by namespace → label key → value, built on first use: a selector with an equality
  // requirement then tests only the pods carrying that label. Nested maps, not "ns/key=value"
  // strings: no string is built per pod and label.
  let podsByLabel: LabelTree<KubeObject> | undefined;
  function podsSelectedBy(pdb: IndexedPdb): KubeObject[] {
    if (pdb.selector === null) return [];
    const eq = equalityAnchor(pdb.selector);
    let candidates: readonly KubeObject[];
    if (eq) {
      if (!podsByLabel) {
        podsByLabel = new Map();
        for (const p of r.pods) {
          const labels = p.metadata.labels;
          if (!labels) continue;
          for (const k in labels) treePush(podsByLabel, nsOf(p), k, labels[k]!, p);
        }
      }
      candidates = podsByLabel.get(pdb.namespace)?.get(eq.key)?.get(eq.value) ?? [];
    } else candidates = podsByNamespace.get(pdb.namespace) ?? [];
    return candidates.filter((p) => selects(pdb.selector, p.metadata.labels));
  }

  // PDBs bucketed by one `key=value` they require, so a pod only tests the PDBs that could match
  // it (a namespace with thousands of PDBs and pods stays linear). PDBs without such a
  // requirement (empty selector, only expressions) are tested against every pod of the namespace.
  const pdbBuckets: LabelTree<IndexedPdb> = new Map();
  const pdbUnbucketed = new Map<string, IndexedPdb[]>();
  for (const [ns, list] of pdbsByNamespace) {
    for (const b of list) {
      if (b.selector === null) continue;
      const eq = equalityAnchor(b.selector);
      if (eq) treePush(pdbBuckets, ns, eq.key, eq.value, b);
      else push(pdbUnbucketed, ns, b);
    }
  }

  function pdbsForPod(pod: KubeObject): IndexedPdb[] {
    const ns = nsOf(pod);
    const labels = pod.metadata.labels ?? {};
    const out: IndexedPdb[] = [];
    const byKey = pdbBuckets.get(ns);
    if (byKey) {
      for (const k in labels) {
        const list = byKey.get(k)?.get(labels[k]!);
        if (list) for (const b of list) if (selects(b.selector, labels)) out.push(b);
      }
    }
    for (const b of pdbUnbucketed.get(ns) ?? []) if (selects(b.selector, labels)) out.push(b);
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
    get podsByOwnerUid() {
      return ownerIndex();
    },
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
