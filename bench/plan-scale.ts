/**
 * bench/plan-scale (docs/benchmarks.md "plan-scale"): the worker batch planner on a synthetic cluster of 500 and
 * 2,000 workers (30 pods each, mixed PDBs, pools with node selectors, hostname spreading): its
 * time at each size, and their ratio (linear: 4×). Target: 2,000 workers / 60,000 pods in under
 * 5 s. The model is built in memory (src/plan/batches/testing.ts): snapshot loading is
 * bench/audit-scale's.
 *
 *   npm run bench -- plan-scale [--small N] [--large N] [--repeat N]
 */
import { parseArgs } from 'node:util';
import { makespan } from '../src/plan/batches/estimate.js';
import { planWorkerBatches } from '../src/plan/batches/planner.js';
import { syntheticModel } from '../src/plan/batches/testing.js';
import { timingFor } from '../src/plan/batches/timing.js';
import { type Bench, ms } from './lib/bench.js';

const TARGET_MS = 5000;

export function planScaleOnce(workers: number): {
  ms: number;
  batches: number;
  estimate: number;
  bound: number;
  pods: number;
} {
  const m = syntheticModel({ workers, podsPerWorker: 30 });
  const timing = timingFor('exec');
  const maxUnavailable = Math.max(1, Math.floor(workers / 4));
  const t0 = performance.now();
  const r = planWorkerBatches(m, {
    strategy: 'replace',
    maxUnavailable,
    surgeNodes: 0,
    surgeReplicas: false,
    timing,
  });
  const t = makespan(r, { timing, strategy: 'replace', maxUnavailable, workers });
  return {
    ms: performance.now() - t0,
    batches: r.batches.length,
    estimate: t.estimateSeconds,
    bound: t.lowerBoundSeconds,
    pods: m.pods.length,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export const bench: Bench = {
  name: 'plan-scale',
  summary: 'worker batch planner at 500 and 2,000 workers (30 pods each): time and ratio',
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        small: { type: 'string', default: '500' },
        large: { type: 'string', default: '2000' },
        repeat: { type: 'string', default: '3' },
      },
    });
    const repeat = Math.max(1, Number(values.repeat));
    planScaleOnce(200); // warm the JIT
    const sizes = [Number(values.small), Number(values.large)];
    const runs = sizes.map((n) => Array.from({ length: repeat }, () => planScaleOnce(n)));
    const times = runs.map((r) => median(r.map((x) => x.ms)));
    sizes.forEach((n, i) => {
      const r = runs[i]![0]!;
      console.log(
        `${n} workers / ${r.pods} pods: ${ms(times[i]!)} (median of ${repeat}), ${r.batches} batches, estimate ${r.estimate} s, lower bound ${r.bound} s`,
      );
    });
    const large = times[1]!;
    console.log(
      `plan ${sizes[1]} workers: ${ms(large)} (target < ${ms(TARGET_MS)}) ${large < TARGET_MS ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `plan ${sizes[1]}/${sizes[0]}: ${(large / times[0]!).toFixed(2)}× (linear: ${(sizes[1]! / sizes[0]!).toFixed(0)}×)`,
    );
  },
};
