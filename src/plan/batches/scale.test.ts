/**
 * SCALE TEST (a ratio, not a time): planning 4× the workers and pods takes about 4× as long.
 * A quadratic planner would take about 16×; the bound below (8×) leaves room for a noisy,
 * shared machine without letting quadratic through. Absolute times are bench/plan-scale's.
 */
import { describe, expect, it } from 'vitest';
import { planWorkerBatches } from './planner.js';
import { syntheticModel } from './testing.js';
import { timingFor } from './timing.js';

function timePlan(workers: number): number {
  const m = syntheticModel({ workers, podsPerWorker: 30 });
  const t0 = performance.now();
  const r = planWorkerBatches(m, {
    strategy: 'replace',
    maxUnavailable: Math.floor(workers / 4),
    surgeNodes: 0,
    surgeReplicas: false,
    timing: timingFor('exec'),
  });
  const ms = performance.now() - t0;
  expect(r.batches.reduce((n, b) => n + b.nodes.length, 0)).toBe(workers);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('SCALE: the batch planner is near-linear', () => {
  it('2,000 workers / 60,000 pods take at most 8× what 500 / 15,000 take (linear: 4×)', () => {
    timePlan(200); // warm the JIT
    const small = median([timePlan(500), timePlan(500), timePlan(500)]);
    const large = median([timePlan(2000), timePlan(2000)]);
    const ratio = large / small;
    expect(ratio, `500 workers ${small.toFixed(0)} ms, 2,000 workers ${large.toFixed(0)} ms`).toBeLessThan(8);
  });
});
