/**
 * Worker pools for Cluster API: one MachineDeployment (+ infrastructure template + TalosConfigTemplate)
 * per group of kubeadm workers that share labels/taints only they have (facts/worker-groups.ts
 * workerGroups), so a replacement carries its pool's labels and taints — a workload selecting
 * `lab.example/pool: data` still finds its nodes. Workers in no group form the default pool.
 */
import type { KubeObject } from '../../snapshot/model.js';
import type { TalosDoc } from '../talos/doc.js';
import { groupPatchDocs } from '../talos/machines.js';
import type { TalosValues } from '../talos/model.js';

export interface WorkerPool {
  /** "" for the default pool (no own labels/taints), else the worker group's name. */
  group: string;
  /** The kubeadm workers it replaces. */
  nodes: KubeObject[];
  /** The group patch (its labels and taints); empty for the default pool. */
  patch: TalosDoc[];
}

/**
 * Pools in the order of the groups, the default pool first. A cluster without workers still gets
 * a default pool, sized like its control planes, so workers can be added through Cluster API later.
 */
export function workerPools(v: TalosValues, workerNodes: KubeObject[], cpNodes: KubeObject[]): WorkerPool[] {
  const byName = new Map(workerNodes.map((n) => [n.metadata.name, n]));
  const grouped = new Set(v.workers.groups.flatMap((g) => g.nodes));
  const pick = (names: string[]) => names.map((n) => byName.get(n)).filter((n) => n !== undefined);
  const ungrouped = workerNodes.filter((n) => !grouped.has(n.metadata.name));
  const pools: WorkerPool[] = [];
  if (ungrouped.length > 0 || v.workers.groups.length === 0)
    pools.push({ group: '', nodes: ungrouped.length > 0 ? ungrouped : cpNodes, patch: [] });
  for (const g of v.workers.groups)
    pools.push({ group: g.name, nodes: pick(g.nodes), patch: groupPatchDocs(v, g) });
  return pools;
}
