/**
 * Whether `clusterctl move` carries a Secret (capi.md §5.1, H14): a move label, a soft-owned
 * `<cluster>-<suffix>` name, or an ownerRef chain that ends at a Cluster. `<cluster>-talos` is not
 * a soft-owned suffix: without the ownerRef adoption gives it, move leaves it behind. Unlike
 * mgmt/graph.ts (ferry's own backup, which takes the talos Secret by name), this is move's rule
 * only. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';
import { MOVE_HIERARCHY_LABEL, MOVE_LABEL } from './view.js';

/** Secret suffixes clusterctl treats as soft-owned by the Cluster of the prefix (capi.md §5.1, H14). */
export const SOFT_OWNED_SUFFIXES = ['kubeconfig', 'ca', 'etcd', 'sa', 'proxy', 'apiserver-etcd-client'];

export function clusterctlMoves(secret: KubeObject, objects: KubeObject[]): boolean {
  const labels = secret.metadata.labels ?? {};
  if (labels[MOVE_LABEL] !== undefined || labels[MOVE_HIERARCHY_LABEL] !== undefined) return true;
  const ns = secret.metadata.namespace;
  const clusters = objects.filter((o) => o.kind === 'Cluster' && o.metadata.namespace === ns);
  if (
    clusters.some((c) => SOFT_OWNED_SUFFIXES.some((s) => secret.metadata.name === `${c.metadata.name}-${s}`))
  )
    return true;
  const byUid = new Map(objects.flatMap((o) => (o.metadata.uid ? [[o.metadata.uid, o] as const] : [])));
  const seen = new Set<string>();
  const leadsToCluster = (o: KubeObject): boolean =>
    (o.metadata.ownerReferences ?? []).some((r) => {
      if (seen.has(r.uid)) return false;
      seen.add(r.uid);
      const owner = byUid.get(r.uid);
      return owner !== undefined && (owner.kind === 'Cluster' || leadsToCluster(owner));
    });
  return leadsToCluster(secret);
}
