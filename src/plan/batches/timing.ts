/**
 * Expected durations (seconds) the worker estimate and its lower bound are made of. They are
 * estimates, not the steps' timeouts (steps.ts): a timeout is how long ferry waits before it
 * stops, these are how long a step usually takes. Override them with what your cluster shows.
 */
import type { Provisioner } from '../../facts/target.js';
import { GATE_STABLE_SECONDS } from '../steps.js';

export interface Timing {
  /** A gate: two observations GATE_STABLE_SECONDS apart. */
  gate: number;
  /** A Talos worker booted with its config until its API answers. */
  provision: number;
  /** Its Node registered and Ready. */
  nodeReady: number;
  cordon: number;
  /** An evicted pod's replacement scheduled, started and Ready elsewhere: one drain round. */
  podReady: number;
  decommission: number;
  deleteNode: number;
  /** Scaling a workload (the API call). */
  scale: number;
}

const PROVISION: Record<Provisioner, number> = { manual: 900, exec: 300, capi: 300 };
const DECOMMISSION: Record<Provisioner, number> = { manual: 300, exec: 120, capi: 120 };

export function timingFor(provisioner: Provisioner): Timing {
  return {
    gate: GATE_STABLE_SECONDS + 5,
    provision: PROVISION[provisioner],
    nodeReady: 60,
    cordon: 1,
    podReady: 30,
    decommission: DECOMMISSION[provisioner],
    deleteNode: 1,
    scale: 1,
  };
}

/**
 * One drain round: the replacements of the pods evicted are Ready (the budget is back) and the
 * evicted pods have terminated (the node is empty), whichever is later.
 */
export function roundSeconds(t: Timing, graceSeconds: number): number {
  return Math.max(t.podReady, graceSeconds);
}
