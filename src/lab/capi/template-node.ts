/**
 * The labels and taints a Talos machine made from a Cluster API template gives its Node: what its
 * strategic patches set in `machine.nodeLabels` / `machine.nodeTaints` (or a KubeNodeConfig's
 * `labels` / `taints`). Talos writes a taint as `value:Effect` or `Effect`. Pure.
 */
import type { Taint } from '../nodes/schedule.js';
import {
  machineConfigAllowsScheduling,
  machineConfigNodeLabels,
  machineConfigNodeTaints,
} from '../provisioner/machine-labels.js';

export type NodeShape = {
  labels: Record<string, string>;
  taints: Taint[];
  /** A control plane's patches say whether workloads may schedule on it (Talos taints it otherwise). */
  allowSchedulingOnControlPlanes?: boolean;
};

/** Labels and taints of a list of strategic patches (later patches win a label key). */
export function patchesNodeShape(patches: readonly string[]): NodeShape {
  const labels: Record<string, string> = {};
  const taints: Taint[] = [];
  let allow: boolean | undefined;
  for (const p of patches) {
    Object.assign(labels, machineConfigNodeLabels(p));
    allow = machineConfigAllowsScheduling(p) ?? allow;
    for (const t of machineConfigNodeTaints(p)) {
      const i = taints.findIndex((x) => x.key === t.key && x.effect === t.effect);
      if (i >= 0) taints[i] = t;
      else taints.push(t);
    }
  }
  return { labels, taints, ...(allow !== undefined && { allowSchedulingOnControlPlanes: allow }) };
}
