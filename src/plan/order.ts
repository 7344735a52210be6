/**
 * The order of the roll (etcd.md §3 "Leader-last", lessons.md "Control plane one at a time"):
 * - control planes one at a time; the last kubeadm control plane gets its own phase (4);
 * - in phase 2 the followers go first and the etcd leader's node last, so leadership moves once,
 *   onto a caught-up Talos member, instead of a forced election per node;
 * - the last kubeadm control plane is the one whose own address is the endpoint (no load
 *   balancer: it must stay until nothing else serves), else the last follower in name order.
 * Workers go in the batches batches/planner.ts computes, between phases 2 and 4.
 */
import type { ControlPlaneNodeFact } from '../facts/model.js';

export interface CpOrder {
  /** Phase 2, in order: followers (name order), then the leader's node. */
  phase2: ControlPlaneNodeFact[];
  /** Phase 4: the last kubeadm control plane. */
  last: ControlPlaneNodeFact;
  reason: string;
}

export function byName(a: { name: string }, b: { name: string }): number {
  return a.name.localeCompare(b.name, 'en', { numeric: true });
}

export function orderControlPlanes(
  cps: readonly ControlPlaneNodeFact[],
  leaderNode: string | null,
  endpointNode: string | null,
): CpOrder {
  const sorted = [...cps].sort(byName);
  if (sorted.length === 0) throw new Error('orderControlPlanes: no control-plane node');
  const pinned = endpointNode ? sorted.find((n) => n.name === endpointNode) : undefined;
  const followers = sorted.filter((n) => n.name !== leaderNode);
  let last: ControlPlaneNodeFact;
  let reason: string;
  if (pinned) {
    last = pinned;
    reason = `${pinned.name}'s own address is the control-plane endpoint: it goes last`;
  } else if (followers.length > 0) {
    last = followers[followers.length - 1]!;
    reason = leaderNode
      ? `the last follower in name order (${leaderNode} leads etcd and goes last in phase 2)`
      : 'the last control plane in name order (the etcd leader is unknown)';
  } else {
    last = sorted[sorted.length - 1]!;
    reason = 'the only control plane';
  }
  const rest = sorted.filter((n) => n !== last);
  const phase2 = [...rest.filter((n) => n.name !== leaderNode), ...rest.filter((n) => n.name === leaderNode)];
  return { phase2, last, reason };
}
