/**
 * How long the worker phase should take (the plan's estimate) and how long it must take at least
 * (a lower bound from the same constraints), in seconds.
 *
 * The estimate assumes what a batch is for: its nodes are worked on together (replacements
 * provisioned side by side, drains in parallel), one batch after the other. Per batch: gate,
 * (surge strategy) provision + Ready, cordon, drain rounds, decommission, delete, (replace
 * strategy) provision + Ready, and the scale-up/restore of --surge-replicas.
 *
 * The lower bound is the largest of these terms, each a floor for any batching of these workers
 * under the same budgets and the same per-batch work (the overhead is one batch's work bar its
 * drain; a drain round lasts at least one pod-Ready time):
 * - each PDB: ⌈its pods ÷ its allowed disruptions⌉ rounds (every pod is evicted at least once, at
 *   most `allowed` per round), in at least ⌈its pods ÷ (R × allowed)⌉ batches, each paying its
 *   overhead, where R is the most rounds the planner lets a batch take (its `roundsPerBatch`, or
 *   more where a batch's first node alone needs them): a floor for any batching under that rule;
 * - ⌈workers ÷ --max-unavailable⌉ batches;
 * - (replace strategy) ⌈requests moved ÷ spare capacity⌉ batches: a batch moves at most the room
 *   free outside it, which is never more than the spare room at the start plus what left for good.
 *   With surge, each batch brings its own room: no such term.
 * Every batch of the plan pays its overhead and its rounds, so the estimate is never below it.
 */
import type { Strategy } from '../model.js';
import type { LowerBoundTerm, PlannedBatch } from './model.js';
import type { PlannedRoll } from './planner.js';
import { roundSeconds, type Timing } from './timing.js';

export interface Makespan {
  /** Seconds per batch, in order. */
  batchSeconds: number[];
  /** Surge workers coming up before the first drain (--surge). */
  surgeSeconds: number;
  estimateSeconds: number;
  lowerBoundSeconds: number;
  /** The terms of the bound, largest first; the first one is the bound. */
  lowerBound: LowerBoundTerm[];
  assumptions: string[];
}

/** A batch's work but the drain rounds (and --surge-replicas scaling): the same for both strategies, in another order. */
function overhead(t: Timing): number {
  return t.gate + t.provision + t.nodeReady + t.cordon + t.decommission + t.deleteNode;
}

export function batchSeconds(b: PlannedBatch, t: Timing): number {
  const scale = (b.scaleUp.length > 0 ? t.scale + t.podReady : 0) + (b.restore.length > 0 ? t.scale : 0);
  return overhead(t) + b.rounds * roundSeconds(t, b.graceSeconds) + scale;
}

/** --surge workers coming up before the first drain: one provision and one node Ready (side by side). */
export function surgeSecondsFor(surgeNodes: number, t: Timing): number {
  return surgeNodes > 0 ? t.provision + t.nodeReady : 0;
}

/**
 * One term of the bound priced at a timing table: a PDB's rounds after one batch's overhead, or
 * a count of batches each at least its overhead and one round.
 */
export function termSeconds(term: LowerBoundTerm, t: Timing, surgeSeconds: number): number {
  const base = overhead(t);
  switch (term.kind) {
    case 'pdb':
      return surgeSeconds + (term.batches ?? 1) * base + term.rounds * t.podReady;
    case 'max-unavailable':
    case 'capacity':
      return surgeSeconds + term.batches * (base + t.podReady);
  }
}

export function makespan(
  roll: PlannedRoll,
  opts: { timing: Timing; strategy: Strategy; maxUnavailable: number; workers: number },
): Makespan {
  const t = opts.timing;
  const perBatch = roll.batches.map((b) => batchSeconds(b, t));
  const surgeSeconds = surgeSecondsFor(roll.surge.nodes, t);
  const estimate = surgeSeconds + perBatch.reduce((a, b) => a + b, 0);
  // Counted here, priced by termSeconds (seconds 0 until then).
  const counted: LowerBoundTerm[] = [];
  if (opts.workers > 0) {
    const perBatch = Math.max(1, roll.roundsPerBatch, ...roll.batches.map((b) => b.rounds));
    for (const l of roll.pdbLoad)
      counted.push({
        kind: 'pdb',
        ...l,
        rounds: Math.ceil(l.pods / l.allowed),
        batches: Math.ceil(l.pods / (perBatch * l.allowed)),
        seconds: 0,
      });
    counted.push({
      kind: 'max-unavailable',
      workers: opts.workers,
      max: opts.maxUnavailable,
      batches: Math.ceil(opts.workers / Math.max(1, opts.maxUnavailable)),
      seconds: 0,
    });
    if (opts.strategy === 'replace') {
      for (const resource of ['cpu', 'memory', 'pods'] as const) {
        const moved = roll.moved[resource];
        const spare = roll.spare[resource];
        if (!(moved > 0) || !(spare > 0) || !Number.isFinite(spare)) continue;
        counted.push({
          kind: 'capacity',
          resource,
          moved,
          spare,
          batches: Math.ceil(moved / spare),
          seconds: 0,
        });
      }
    }
  }
  const terms = priced(counted, t, surgeSeconds);
  return {
    batchSeconds: perBatch,
    surgeSeconds,
    estimateSeconds: estimate,
    lowerBoundSeconds: terms[0]?.seconds ?? 0,
    lowerBound: terms,
    assumptions: [
      `a batch's nodes are worked on together (replacements side by side, drains in parallel); per batch gate ${t.gate} s, provision ${t.provision} s, node Ready ${t.nodeReady} s, cordon ${t.cordon} s, decommission ${t.decommission} s, delete ${t.deleteNode} s`,
      `a drain round lasts the longer of a replacement pod becoming Ready (${t.podReady} s) and the evicted pods' termination grace period`,
    ],
  };
}

/** The terms with their seconds at `t`, largest first. */
function priced(terms: readonly LowerBoundTerm[], t: Timing, surgeSeconds: number): LowerBoundTerm[] {
  return terms
    .map((term) => ({ ...term, seconds: termSeconds(term, t, surgeSeconds) }))
    .sort((a, b) => b.seconds - a.seconds);
}

/**
 * A planned roll's estimate and lower bound again, at another timing table (bench/workers: the
 * step durations measured in the run): the same batches and terms as the plan recorded, the same
 * formulas as makespan().
 */
export function repriced(
  roll: { batches: readonly PlannedBatch[]; surgeNodes: number; lowerBound: readonly LowerBoundTerm[] },
  t: Timing,
): Pick<Makespan, 'batchSeconds' | 'surgeSeconds' | 'estimateSeconds' | 'lowerBoundSeconds' | 'lowerBound'> {
  const surgeSeconds = surgeSecondsFor(roll.surgeNodes, t);
  const batchSecs = roll.batches.map((b) => batchSeconds(b, t));
  const terms = priced(roll.lowerBound, t, surgeSeconds);
  return {
    batchSeconds: batchSecs,
    surgeSeconds,
    estimateSeconds: surgeSeconds + batchSecs.reduce((a, b) => a + b, 0),
    lowerBoundSeconds: terms[0]?.seconds ?? 0,
    lowerBound: terms,
  };
}
