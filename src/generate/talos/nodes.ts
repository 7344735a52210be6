/**
 * Control-plane scheduling as found on the kubeadm nodes (blockers.md nodes.cp-schedulable). The
 * labels and taints every node of a role has go into the role patch, what only some have into
 * per-node (control planes) or per-group (workers) patches: that split is facts/worker-groups.ts.
 */
import type { ControlPlaneNodeFact } from '../../facts/model.js';
import { type Sourced, sourced } from '../../facts/sourced.js';
import { nodeRef } from '../../facts/worker-groups.js';
import { EXCLUDE_FROM_LB_LABEL } from '../../knowledge/talos-config.js';
import type { GenerateNote } from '../artifact.js';

export function controlPlaneScheduling(
  cps: ControlPlaneNodeFact[],
  notes: GenerateNote[],
): { allowScheduling: Sourced<boolean>; excludeFromLoadBalancers: Sourced<boolean> } {
  const tainted = cps.filter((c) => c.tainted);
  const untainted = cps.filter((c) => !c.tainted);
  if (tainted.length > 0 && untainted.length > 0) {
    notes.push({
      severity: 'warning',
      message: `control planes differ: ${tainted.map((c) => c.name).join(', ')} carry the control-plane NoSchedule taint, ${untainted
        .map((c) => c.name)
        .join(', ')} do not; ferry follows the majority (nodes.cp-schedulable) — decide and make them agree`,
    });
  }
  const allow = untainted.length > tainted.length;
  const withLabel = cps.filter((c) => EXCLUDE_FROM_LB_LABEL in c.labels);
  if (withLabel.length > 0 && withLabel.length < cps.length) {
    notes.push({
      severity: 'warning',
      message: `only ${withLabel.map((c) => c.name).join(', ')} carry ${EXCLUDE_FROM_LB_LABEL}; ferry follows the majority for Talos control planes`,
    });
  }
  return {
    allowScheduling: sourced(
      allow,
      cps.map((c) => nodeRef(c.name, 'spec.taints')),
      allow
        ? 'the kubeadm control planes run workloads (no control-plane NoSchedule taint)'
        : 'the kubeadm control planes carry the control-plane NoSchedule taint',
    ),
    excludeFromLoadBalancers: sourced(
      withLabel.length * 2 > cps.length,
      cps.map((c) => nodeRef(c.name, `metadata.labels["${EXCLUDE_FROM_LB_LABEL}"]`)),
    ),
  };
}
