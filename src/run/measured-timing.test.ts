import { describe, expect, it } from 'vitest';
import { makespan, repriced } from '../plan/batches/estimate.js';
import type { PlannedBatch } from '../plan/batches/model.js';
import { planWorkerBatches } from '../plan/batches/planner.js';
import { syntheticModel } from '../plan/batches/testing.js';
import { timingFor } from '../plan/batches/timing.js';
import type { Plan, StepKind, Strategy } from '../plan/model.js';
import { HANDLERS } from './handlers/index.js';
import type { TransitionRow } from './journal.js';
import { describeTiming, measuredTiming, type StepSpan, stepSpans } from './measured-timing.js';

/** A deterministic PRNG (mulberry32) so a failing seed can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The step kinds of one batch in plan/workers.ts's order. */
function batchKinds(b: PlannedBatch, strategy: Strategy, surgeNodes: number): StepKind[] {
  // As plan/workers.ts orders them: one request per group, then its detections, then its waits.
  const times = (n: number, ks: StepKind[]) => ks.flatMap((k) => Array.from({ length: n }, () => k));
  const each = (ks: StepKind[]) => times(b.nodes.length, ks);
  const provisioned = (n: number): StepKind[] =>
    n === 0 ? [] : ['provision-request', ...times(n, ['provision-detect', 'wait-node-ready'])];
  return [
    'gate',
    ...(b.index === 1 ? provisioned(surgeNodes) : []),
    ...(strategy === 'surge' ? provisioned(b.nodes.length) : []),
    ...b.scaleUp.flatMap((): StepKind[] => ['scale-workload', 'wait-workload-ready']),
    ...each(['cordon']),
    'drain-batch',
    ...each(['decommission']),
    ...each(['delete-node']),
    ...(strategy === 'replace' ? provisioned(b.nodes.length) : []),
    ...b.restore.map((): StepKind => 'scale-workload'),
  ];
}

describe('stepSpans', () => {
  const plan = {
    phases: [
      { steps: [{ id: 'cp', kind: 'drain', phase: 2 }] },
      {
        steps: [
          { id: 'g1', kind: 'gate', phase: 3, batch: 1 },
          { id: 'd1', kind: 'drain-batch', phase: 3, batch: 1 },
          { id: 's1', kind: 'scale-workload', phase: 3, batch: 1 },
        ],
      },
    ],
  } as unknown as Pick<Plan, 'phases'>;
  const row = (seq: number, stepId: string, state: TransitionRow['state'], at: number): TransitionRow => ({
    seq,
    runId: 'r',
    stepId,
    attempt: 1,
    state,
    at: new Date(at).toISOString(),
    detail: null,
  });

  it('times phase-3 steps from their first start to done, across a resume, and leaves out other phases and skipped steps', () => {
    const spans = stepSpans(plan, [
      row(1, 'cp', 'started', 0),
      row(2, 'cp', 'done', 9_000),
      row(3, 'g1', 'started', 10_000),
      row(4, 'g1', 'gate-passed', 12_000),
      row(5, 'g1', 'done', 12_500),
      row(6, 'd1', 'started', 13_000),
      row(7, 'd1', 'stopped', 14_000),
      row(8, 'd1', 'started', 20_000),
      row(9, 'd1', 'done', 21_000),
      row(10, 's1', 'started', 22_000),
      row(11, 's1', 'skipped', 22_001),
    ]);
    expect(spans).toEqual([
      { stepId: 'g1', kind: 'gate', batch: 1, seconds: 2.5, from: 10_000 },
      { stepId: 'd1', kind: 'drain-batch', batch: 1, seconds: 8, from: 13_000 },
    ]);
  });
});

describe('measuredTiming', () => {
  const span = (kind: StepKind, seconds: number, batch = 1): StepSpan => ({
    stepId: kind,
    kind,
    batch,
    seconds,
    from: 0,
  });

  it('prices the bound at the shortest of each kind and the estimate at the median; a drain counts per planned round', () => {
    const m = measuredTiming(
      [
        span('provision', 1),
        span('provision', 10),
        span('provision', 10),
        span('drain-batch', 12, 1),
        span('drain-batch', 5, 2),
      ],
      (b) => (b === 1 ? 3 : 1),
    );
    expect(m.floor.provision).toBe(1);
    expect(m.typical.provision).toBe(10);
    expect(m.floor.podReady).toBe(4);
    expect(m.typical.podReady).toBe(4.5);
    expect(m.samples.provision).toBe(3);
    expect(m.missing).toEqual(['gate', 'nodeReady', 'cordon', 'decommission', 'deleteNode', 'scale']);
    expect(describeTiming(m.floor)).toContain('provision 1.00 s');
    expect(describeTiming(m.floor)).toContain('drain round 4.00 s');
  });
});

describe('a worker batch provisioning as one figure', () => {
  const span = (kind: StepKind, seconds: number, batch: number, from: number): StepSpan => ({
    stepId: `${kind}-${from}`,
    kind,
    batch,
    seconds,
    from,
  });

  it('is its request plus its slowest detection; a batch that asks twice (--surge) counts each request with its own', () => {
    const m = measuredTiming(
      [
        span('provision-request', 1, 1, 0),
        span('provision-detect', 30, 1, 1),
        span('provision-detect', 50, 1, 2),
        span('provision-request', 2, 1, 100),
        span('provision-detect', 40, 1, 101),
        span('provision-request', 1, 2, 200),
        span('provision-detect', 20, 2, 201),
      ],
      () => 1,
    );
    expect(m.samples.provision).toBe(3);
    expect(m.floor.provision).toBe(21);
    expect(m.typical.provision).toBe(42);
  });
});

describe('the lower bound at measured timings', () => {
  it("at production's table, repriced() gives the plan's own estimate and bound (the same formulas)", () => {
    const timing = timingFor('manual');
    const model = syntheticModel({ workers: 40, podsPerWorker: 12, seed: 3 });
    for (const strategy of ['replace', 'surge'] as const) {
      const roll = planWorkerBatches(model, {
        strategy,
        maxUnavailable: 6,
        surgeNodes: 2,
        surgeReplicas: true,
        timing,
      });
      const m = makespan(roll, { timing, strategy, maxUnavailable: 6, workers: 40 });
      const r = repriced({ batches: roll.batches, surgeNodes: 2, lowerBound: m.lowerBound }, timing);
      expect(r.lowerBoundSeconds).toBe(m.lowerBoundSeconds);
      expect(r.estimateSeconds).toBe(m.estimateSeconds);
      expect(r.lowerBound).toEqual(m.lowerBound);
    }
  });

  it('is never above the makespan of a run that did what the plan says, whatever each step took', () => {
    const timing = timingFor('exec');
    let checked = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const rnd = random(seed);
      const strategy: Strategy = seed % 2 ? 'replace' : 'surge';
      const surgeNodes = seed % 3 === 0 ? 2 : 0;
      const maxUnavailable = 1 + (seed % 5);
      const workers = 6 + (seed % 9);
      const model = syntheticModel({ workers, podsPerWorker: 8, seed });
      const roll = planWorkerBatches(model, {
        strategy,
        maxUnavailable,
        surgeNodes,
        surgeReplicas: true,
        timing,
      });
      const plan = makespan(roll, { timing, strategy, maxUnavailable, workers });
      // One run as the orchestrator makes it: the steps one after the other, each a random length
      // (some very short, some long), with random gaps between them; a batch's consecutive steps
      // of a kind that runs side by side start together and take the longest of them.
      let clock = 0;
      const spans: StepSpan[] = [];
      for (const b of roll.batches) {
        const kinds = batchKinds(b, strategy, surgeNodes);
        for (let i = 0; i < kinds.length; ) {
          const kind = kinds[i]!;
          let j = i + 1;
          if (HANDLERS[kind].concurrent) while (kinds[j] === kind) j++;
          let longest = 0;
          for (; i < j; i++) {
            const seconds = rnd() < 0.2 ? rnd() * 0.05 : rnd() * 40;
            spans.push({
              stepId: `${b.index}-${spans.length}`,
              kind,
              batch: b.index,
              seconds,
              from: clock * 1000,
            });
            longest = Math.max(longest, seconds);
          }
          clock += longest + rnd() * 0.5;
        }
      }
      const rounds = new Map(roll.batches.map((b) => [b.index, b.rounds]));
      const measured = measuredTiming(spans, (b) => rounds.get(b) ?? 1);
      const lb = { batches: roll.batches, surgeNodes, lowerBound: plan.lowerBound };
      const bound = repriced(lb, measured.floor);
      expect(bound.lowerBoundSeconds, `seed ${seed}`).toBeGreaterThan(0);
      expect(bound.lowerBoundSeconds, `seed ${seed}`).toBeLessThanOrEqual(clock);
      expect(repriced(lb, measured.typical).estimateSeconds, `seed ${seed}`).toBeGreaterThanOrEqual(
        bound.lowerBoundSeconds,
      );
      checked++;
    }
    expect(checked).toBe(60);
  });

  it('a median-priced bound can exceed the makespan: the reason the floor is the shortest', () => {
    // Three batches of one node each, the second and third provisioning slowly.
    const b = (index: number): PlannedBatch => ({
      index,
      nodes: [`w${index}`],
      pods: 1,
      rounds: 1,
      graceSeconds: 0,
      bound: { kind: 'max-unavailable', max: 1 },
      scaleUp: [],
      restore: [],
    });
    const batches = [b(1), b(2), b(3)];
    const spans: StepSpan[] = batches.flatMap((x) =>
      batchKinds(x, 'replace', 0).map((kind) => ({
        stepId: `${x.index}-${kind}`,
        kind,
        batch: x.index,
        from: 0,
        seconds: kind === 'provision-detect' ? (x.index === 1 ? 1 : 10) : 1,
      })),
    );
    const total = spans.reduce((a, s) => a + s.seconds, 0);
    const m = measuredTiming(spans, () => 1);
    const lowerBound = [{ kind: 'max-unavailable' as const, workers: 3, max: 1, batches: 3, seconds: 0 }];
    expect(repriced({ batches, surgeNodes: 0, lowerBound }, m.floor).lowerBoundSeconds).toBeLessThanOrEqual(
      total,
    );
    expect(repriced({ batches, surgeNodes: 0, lowerBound }, m.typical).lowerBoundSeconds).toBeGreaterThan(
      total,
    );
  });
});
