import { describe, expect, it } from 'vitest';
import { estimateOf, planRoll, roundCandidates } from './choose.js';
import { makespan } from './estimate.js';
import type { PlannerOptions } from './planner.js';
import { planWorkerBatches } from './planner.js';
import { model, pdb, pod, syntheticModel, worker } from './testing.js';
import { type Timing, timingFor } from './timing.js';

const six = ['a', 'b', 'c', 'd', 'e', 'f'];
/** Six single-pod workers under one budget that allows one disruption. */
const sixUnderOne = (allowed = 1) =>
  model({
    workers: six.map((n) => worker(n)),
    pdbs: [pdb('web', allowed)],
    pods: six.map((n, i) => pod(`web-${i}`, n, { pdbs: [0] })),
  });

const base = (timing: Timing): Omit<PlannerOptions, 'roundsPerBatch'> => ({
  strategy: 'surge',
  maxUnavailable: 100,
  surgeNodes: 0,
  surgeReplicas: false,
  timing,
});

describe('the round limits tried', () => {
  it('go up to what the most limited budget needs to drain in one batch, never past 8', () => {
    expect(roundCandidates(model({ workers: [worker('a')] }))).toEqual([1]);
    expect(roundCandidates(sixUnderOne())).toEqual([1, 2, 3, 4, 6]);
    // Six pods, three at a time: two rounds take them all.
    expect(roundCandidates(sixUnderOne(3))).toEqual([1, 2]);
    const many = model({
      workers: [worker('a')],
      pdbs: [pdb('web', 1), pdb('none', 0)],
      pods: Array.from({ length: 30 }, (_, i) => pod(`web-${i}`, 'a', { pdbs: [0, 1] })),
    });
    // A budget that allows nothing needs no rounds here (the planner makes its node a batch of one).
    expect(roundCandidates(many)).toEqual([1, 2, 3, 4, 6, 8]);
  });
});

describe('the plan kept', () => {
  it("at production's durations, six single-pod nodes of a one-disruption budget drain in one batch of six rounds, not six batches", () => {
    const t = timingFor('capi');
    const r = planRoll(sixUnderOne(), base(t));
    expect(r.batches.map((b) => b.nodes)).toEqual([six]);
    expect(r.batches[0]!.rounds).toBe(6);
    expect(r.roundsPerBatch).toBe(6);
    const one = planWorkerBatches(sixUnderOne(), { ...base(t), roundsPerBatch: 1 });
    expect(one.batches).toHaveLength(6);
    expect(estimateOf(r, base(t))).toBeLessThan(estimateOf(one, base(t)));
  });

  it('of plans that cost the same, keeps the one with the fewest rounds a batch', () => {
    // Two workers a batch at most: from two rounds a batch on, every limit gives three batches of two.
    const o = { ...base(timingFor('capi')), maxUnavailable: 2 };
    const r = planRoll(sixUnderOne(), o);
    expect(r.batches.map((b) => b.nodes.length)).toEqual([2, 2, 2]);
    expect(r.roundsPerBatch).toBe(2);
    expect(estimateOf(planWorkerBatches(sixUnderOne(), { ...o, roundsPerBatch: 6 }), o)).toBe(
      estimateOf(r, o),
    );
  });

  it("prices a plan as the estimate does, and keeps the cheapest of the candidates' plans with the fewest outages", () => {
    const t = timingFor('exec');
    for (const seed of [1, 2, 3])
      for (const strategy of ['surge', 'replace'] as const) {
        const m = syntheticModel({ workers: 40, podsPerWorker: 10, seed });
        const o = { ...base(t), strategy, maxUnavailable: 10 };
        const kept = planRoll(m, o);
        expect(estimateOf(kept, o)).toBe(
          makespan(kept, { timing: t, strategy, maxUnavailable: 10, workers: 40 }).estimateSeconds,
        );
        const tried = roundCandidates(m).map((r) => planWorkerBatches(m, { ...o, roundsPerBatch: r }));
        const fewest = Math.min(...tried.map((x) => x.outages.length));
        expect(kept.outages.length, `seed ${seed} ${strategy}`).toBe(fewest);
        for (const x of tried)
          if (x.outages.length === fewest) expect(estimateOf(kept, o)).toBeLessThanOrEqual(estimateOf(x, o));
      }
  });

  it('the lower bound under the kept rule is never above its estimate', () => {
    const t = timingFor('manual');
    for (const seed of [4, 5]) {
      const m = syntheticModel({ workers: 60, podsPerWorker: 12, seed });
      const kept = planRoll(m, { ...base(t), maxUnavailable: 15 });
      const ms = makespan(kept, { timing: t, strategy: 'surge', maxUnavailable: 15, workers: 60 });
      expect(ms.lowerBoundSeconds).toBeLessThanOrEqual(ms.estimateSeconds);
      for (const term of ms.lowerBound)
        if (term.kind === 'pdb')
          expect(term.batches).toBe(
            Math.ceil(
              term.pods /
                (Math.max(kept.roundsPerBatch, ...kept.batches.map((b) => b.rounds)) * term.allowed),
            ),
          );
    }
  });
});
