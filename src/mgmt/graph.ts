/**
 * Which objects a backup carries: the object graph `clusterctl move` would move (capi.md §5.1:
 * ownerRef chains from each Cluster, ClusterClass and ClusterResourceSet, soft-owned `<cluster>-<purpose>`
 * Secrets, objects with the move labels, Cluster → ClusterClass) plus what move leaves behind and
 * ferry needs back: the unowned `<cluster>-talos` Secret (H14). Owner references are written by the
 * controllers only, so right after adoption (`ferry capi adopt` sets none on the infrastructure
 * cluster, the TalosControlPlane, the MachineDeployments or the templates) or with the controllers
 * down the chains are missing: an object also joins through the `cluster.x-k8s.io/cluster-name`
 * label of a Cluster in its namespace (capi.md §4.8) and through every reference of a carried
 * object's spec (capi/refs.ts: controlPlaneRef, infrastructureRef, the templates). Pure: discovery
 * hands in everything it listed.
 */
import { SOFT_OWNED_SUFFIXES } from '../capi/move-scope.js';
import { objectReferences, refersTo } from '../capi/refs.js';
import { CLUSTER_NAME_LABEL, MOVE_HIERARCHY_LABEL, MOVE_LABEL, objectName } from '../capi/view.js';
import type { KubeObject, Reason } from './model.js';

const ROOT_KINDS = new Set(['Cluster', 'ClusterClass', 'ClusterResourceSet']);

export interface Selected {
  object: KubeObject;
  reason: Reason;
}

export interface Selection {
  selected: Selected[];
  leftBehind: string[];
}

export function isClusterApiGroup(apiVersion: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  return group === 'cluster.x-k8s.io' || group.endsWith('.cluster.x-k8s.io');
}

function hasLabel(o: KubeObject, label: string): boolean {
  return o.metadata.labels?.[label] !== undefined;
}

/**
 * `custom` are the instances of the discovered Cluster API kinds (inventory Providers excluded),
 * `secrets` and `configMaps` every Secret and ConfigMap listed.
 */
export function selectGraph(input: {
  custom: KubeObject[];
  secrets: KubeObject[];
  configMaps: KubeObject[];
}): Selection {
  const all = [...input.custom, ...input.secrets, ...input.configMaps];
  const reason = new Map<string, Reason>();
  const mark = (o: KubeObject, r: Reason) => {
    const uid = o.metadata.uid;
    if (uid && !reason.has(uid)) reason.set(uid, r);
  };

  const clusters = input.custom.filter((o) => o.kind === 'Cluster' && isClusterApiGroup(o.apiVersion));
  for (const o of input.custom)
    if (ROOT_KINDS.has(o.kind) && isClusterApiGroup(o.apiVersion)) mark(o, 'root');
  for (const o of all)
    if (hasLabel(o, MOVE_LABEL) || hasLabel(o, MOVE_HIERARCHY_LABEL)) mark(o, 'move-label');

  for (const c of clusters) {
    for (const s of input.secrets) {
      if (s.metadata.namespace !== c.metadata.namespace) continue;
      const prefix = `${c.metadata.name}-`;
      if (!s.metadata.name.startsWith(prefix)) continue;
      const suffix = s.metadata.name.slice(prefix.length);
      if (SOFT_OWNED_SUFFIXES.includes(suffix)) mark(s, 'soft-owned-secret');
      // H14: CABPT's bundle secret; without it a restored cluster gets new CAs (H6).
      else if (suffix === 'talos') mark(s, 'talos-secret');
    }
  }

  // What move itself follows first (owner references), then spec references, then the cluster-name
  // label of a Cluster in the object's namespace (set by adoption and the controllers alike): each
  // object is carried for the first rule that reaches it, and whatever it owns or names joins too.
  const ownerStep = (): boolean => {
    let changed = false;
    for (const o of all) {
      const uid = o.metadata.uid;
      if (!uid || reason.has(uid)) continue;
      if ((o.metadata.ownerReferences ?? []).some((r) => reason.has(r.uid))) {
        reason.set(uid, 'owner-chain');
        changed = true;
      }
    }
    return changed;
  };
  const referenceStep = (): boolean => {
    let changed = false;
    for (const o of all) {
      if (!o.metadata.uid || !reason.has(o.metadata.uid)) continue;
      for (const r of objectReferences(o))
        for (const t of input.custom) {
          const uid = t.metadata.uid;
          if (!uid || reason.has(uid) || !refersTo(r, t)) continue;
          reason.set(uid, 'reference');
          changed = true;
        }
    }
    return changed;
  };
  const clusterKeys = new Set(clusters.map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
  const labelStep = (): boolean => {
    let changed = false;
    for (const o of all) {
      const uid = o.metadata.uid;
      const named = o.metadata.labels?.[CLUSTER_NAME_LABEL];
      if (!uid || reason.has(uid) || named === undefined) continue;
      if (clusterKeys.has(`${o.metadata.namespace}/${named}`)) {
        reason.set(uid, 'cluster-label');
        changed = true;
      }
    }
    return changed;
  };
  while (ownerStep() || referenceStep() || labelStep());

  const selected: Selected[] = [];
  const leftBehind: string[] = [];
  for (const o of all) {
    const r = o.metadata.uid ? reason.get(o.metadata.uid) : undefined;
    if (r) selected.push({ object: o, reason: r });
    else if (input.custom.includes(o)) {
      const cluster = o.metadata.labels?.[CLUSTER_NAME_LABEL];
      leftBehind.push(
        `${objectName({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name })}${cluster ? ` (labelled for cluster ${cluster}, which namespace ${o.metadata.namespace} does not hold, and no owner or reference leads to it)` : ''}`,
      );
    }
  }
  return { selected, leftBehind };
}
