/**
 * How many drain rounds a worker batch may take (planner.ts `roundsPerBatch`). A round costs one
 * pod's Ready time (or its grace period), a batch a provision, a node Ready and a decommission:
 * at production's durations four rounds cost less than one more batch, so a PDB that allows one
 * disruption should not split its nodes into one batch each. The planner is run once per
 * candidate and the cheapest plan kept: fewest outages first (never trade availability for
 * speed), then the shortest estimate, then the fewest rounds a batch.
 */
import { batchSeconds, surgeSecondsFor } from './estimate.js';
import type { ClusterModel } from './model.js';
import { type PlannedRoll, type PlannerOptions, planWorkerBatches } from './planner.js';

/** Past this many rounds a batch's drain is long enough that one more batch rarely costs more. */
const MOST_ROUNDS = 8;

/**
 * The round limits worth trying: 1, 2, 3, 4, 6, 8, capped at the most any PDB needs to take
 * all its pods in one batch (⌈its pods on the workers ÷ its allowed disruptions⌉).
 */
export function roundCandidates(model: ClusterModel): number[] {
  const pods = new Array<number>(model.pdbs.length).fill(0);
  for (const p of model.pods) for (const b of p.pdbs) pods[b]!++;
  let need = 1;
  model.pdbs.forEach((b, i) => {
    if (b.allowed > 0) need = Math.max(need, Math.ceil(pods[i]! / b.allowed));
  });
  return [1, 2, 3, 4, 6, MOST_ROUNDS].filter((r) => r === 1 || r <= need);
}

export function estimateOf(roll: PlannedRoll, opts: Pick<PlannerOptions, 'timing'>): number {
  let s = surgeSecondsFor(roll.surge.nodes, opts.timing);
  for (const b of roll.batches) s += batchSeconds(b, opts.timing);
  return s;
}

/** The planner at the round limit that gives the cheapest plan (see the top of this file). */
export function planRoll(model: ClusterModel, opts: Omit<PlannerOptions, 'roundsPerBatch'>): PlannedRoll {
  let best: { roll: PlannedRoll; outages: number; seconds: number } | null = null;
  for (const r of roundCandidates(model)) {
    const roll = planWorkerBatches(model, { ...opts, roundsPerBatch: r });
    const outages = roll.outages.length;
    const seconds = estimateOf(roll, opts);
    if (!best || outages < best.outages || (outages === best.outages && seconds < best.seconds))
      best = { roll, outages, seconds };
  }
  return best!.roll;
}
