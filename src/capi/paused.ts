/**
 * A backup is only taken of a steady management cluster (capi.md H13): a paused Cluster is refused
 * as `clusterctl move` refuses it, and so is a cluster mid-migration, which ferry recognises by the
 * `cluster.x-k8s.io/paused` annotation it keeps on the TalosControlPlane until no kubeadm member
 * remains (docs/rules.md#capi.tcp-etcd-audit). The audit's capi.move-paused-or-unstable judges a
 * snapshot by the same predicates. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';
import { capiKubectl } from './kubectl-commands.js';
import { objectName, PAUSED_ANNOTATION } from './view.js';

export interface PauseProblem {
  object: string;
  why: 'cluster-paused' | 'object-paused';
  cluster: string;
}

/** A Cluster API object whose Ready (v1beta1) or Available (v1beta2) condition is True. */
export function isReady(o: KubeObject): boolean {
  return ((o.status?.conditions ?? []) as { type?: string; status?: string }[]).some(
    (c) => (c.type === 'Ready' || c.type === 'Available') && c.status === 'True',
  );
}

export function isClusterPaused(c: KubeObject): boolean {
  return c.spec?.paused === true || c.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined;
}

/** `objects` are the objects selected for the backup; `clusters` the Clusters among them. */
export function pauseProblems(clusters: KubeObject[], objects: KubeObject[]): PauseProblem[] {
  const out: PauseProblem[] = [];
  for (const c of clusters) {
    const name = `${c.metadata.namespace}/${c.metadata.name}`;
    if (isClusterPaused(c))
      out.push({
        object: objectName({ kind: 'Cluster', namespace: c.metadata.namespace, name: c.metadata.name }),
        why: 'cluster-paused',
        cluster: name,
      });
  }
  for (const o of objects) {
    if (o.kind === 'Cluster' || o.metadata.annotations?.[PAUSED_ANNOTATION] === undefined) continue;
    const cluster = o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? o.spec?.clusterName ?? '?';
    out.push({
      object: objectName({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }),
      why: 'object-paused',
      cluster: `${o.metadata.namespace}/${cluster}`,
    });
  }
  return out;
}

export function describePauseProblems(problems: PauseProblem[]): { message: string; remediation: string } {
  const lines = problems.map((p) =>
    p.why === 'cluster-paused'
      ? `${p.object} is paused (spec.paused or the ${PAUSED_ANNOTATION} annotation)`
      : `${p.object} carries ${PAUSED_ANNOTATION}: cluster ${p.cluster} is mid-migration (ferry keeps the TalosControlPlane paused until no kubeadm member remains)`,
  );
  return {
    message: `refusing to back up a management cluster that is not steady (a move or backup of a paused or migrating cluster would carry half-reconciled state):\n  ${lines.join('\n  ')}`,
    remediation: `back up before the migration starts or after it has finished (\`ferry run\` unpauses the TalosControlPlane in its last phase); a Cluster paused by hand (spec.paused or the ${PAUSED_ANNOTATION} annotation): once it is safe, ${capiKubectl.unpauseCluster('kubectl', 'NS', 'NAME')}`,
  };
}
