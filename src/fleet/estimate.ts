/**
 * How long one cluster's migration should take, from its plan: the worker roll's own estimate
 * (plan/batches) plus the control planes, strictly one after the other, each a provision, a Ready
 * node, a decommission and the gates around them, at the same expected durations the worker
 * estimate uses (plan/batches/timing.ts). An estimate to order waves by, not a promise.
 */
import { timingFor } from '../plan/batches/timing.js';
import type { Plan } from '../plan/model.js';

/** Gates around one control-plane swap: before the add, after the join, before and after the removal. */
const CP_GATES = 4;

export function controlPlaneSeconds(plan: Pick<Plan, 'provisioner'>): number {
  const t = timingFor(plan.provisioner);
  return t.provision + t.nodeReady + t.decommission + CP_GATES * t.gate;
}

export function clusterSeconds(
  plan: Pick<Plan, 'provisioner' | 'workerRoll'>,
  controlPlanes: number,
): number {
  return plan.workerRoll.estimate.seconds + controlPlanes * controlPlaneSeconds(plan);
}
