/**
 * The worker roll's timing table as a run measured it (bench/workers): how long each phase-3 step
 * kind took, from the journal, so that the plan's lower bound and estimate can be priced at what
 * this machine did instead of production's expected durations (plan/batches/timing.ts). Pure.
 *
 * The bound uses the SHORTEST duration of each kind (a drain: the shortest per planned round).
 * That keeps it a floor: the orchestrator runs a batch's step kinds one after the other (the
 * steps of one kind side by side at most, which takes the longest of them), every batch runs at
 * least one step of each kind of its overhead and a drain of its planned rounds, so the run's
 * makespan is at least any count of batches times the shortest of each. A median would not be:
 * three provisions of 1, 10 and 10 s sum to less than three medians.
 * The estimate uses the median, to compare what the plan would have predicted with what happened.
 */
import type { Timing } from '../plan/batches/timing.js';
import type { Plan, StepKind } from '../plan/model.js';
import type { TransitionRow } from './journal.js';

/** One phase-3 step that ran to done: its kind, its batch, started → done. */
export interface StepSpan {
  stepId: string;
  kind: StepKind;
  batch: number;
  seconds: number;
  /** First `started`, in ms since the epoch. */
  from: number;
}

/** Which step kind measures which entry of the table (a drain: per round, see below). */
const ENTRY: Partial<Record<StepKind, keyof Timing>> = {
  gate: 'gate',
  provision: 'provision',
  'wait-node-ready': 'nodeReady',
  cordon: 'cordon',
  'drain-batch': 'podReady',
  decommission: 'decommission',
  'delete-node': 'deleteNode',
  'scale-workload': 'scale',
};

const ENTRIES: readonly (keyof Timing)[] = [
  'gate',
  'provision',
  'nodeReady',
  'cordon',
  'podReady',
  'decommission',
  'deleteNode',
  'scale',
];

export interface MeasuredTiming {
  /** Shortest of each kind: what the lower bound is priced at. */
  floor: Timing;
  /** Median of each kind: what the estimate is priced at. */
  typical: Timing;
  /** Samples per entry (steps of that kind that ran to done). */
  samples: Record<keyof Timing, number>;
  /** Entries no step measured: 0 s in both tables (a floor stays a floor). */
  missing: (keyof Timing)[];
}

/** Phase-3 steps that ran to done, first `started` to `done` (a resumed step spans its attempts). */
export function stepSpans(plan: Pick<Plan, 'phases'>, transitions: readonly TransitionRow[]): StepSpan[] {
  const steps = new Map(
    plan.phases
      .flatMap((p) => p.steps)
      .filter((s) => s.phase === 3 && s.batch !== undefined)
      .map((s) => [s.id, s] as const),
  );
  const started = new Map<string, number>();
  const spans: StepSpan[] = [];
  for (const t of transitions) {
    const s = steps.get(t.stepId);
    const at = Date.parse(t.at);
    if (!s || !Number.isFinite(at)) continue;
    if (t.state === 'started') {
      if (!started.has(s.id)) started.set(s.id, at);
    } else if (t.state === 'done') {
      const from = started.get(s.id);
      if (from !== undefined)
        spans.push({ stepId: s.id, kind: s.kind, batch: s.batch!, seconds: (at - from) / 1000, from });
    }
  }
  return spans;
}

/**
 * A worker batch's provisioning as one figure, as the estimate prices it: its request, then its
 * slowest detection (the batch's detections run side by side). A batch with --surge workers asks
 * twice; each request counts with the detections that follow it.
 */
function batchProvisionSeconds(spans: readonly StepSpan[]): number[] {
  const ordered = spans
    .filter((s) => s.kind === 'provision-request' || s.kind === 'provision-detect')
    .sort((a, b) => a.from - b.from);
  const out: number[] = [];
  let current: { batch: number; request: number; slowest: number } | undefined;
  const close = () => current && out.push(current.request + current.slowest);
  for (const s of ordered) {
    if (s.kind === 'provision-request') {
      close();
      current = { batch: s.batch, request: s.seconds, slowest: 0 };
    } else if (current?.batch === s.batch) current.slowest = Math.max(current.slowest, s.seconds);
  }
  close();
  return out;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The table from the spans. A drain-batch step of a batch planned in `rounds` rounds counts as
 * `seconds ÷ rounds` per round: the bound charges each round one podReady.
 */
export function measuredTiming(
  spans: readonly StepSpan[],
  roundsOf: (batch: number) => number,
): MeasuredTiming {
  const by = new Map<keyof Timing, number[]>(ENTRIES.map((e) => [e, []]));
  by.get('provision')!.push(...batchProvisionSeconds(spans));
  for (const s of spans) {
    const entry = ENTRY[s.kind];
    if (!entry) continue;
    const v = entry === 'podReady' ? s.seconds / Math.max(1, roundsOf(s.batch)) : s.seconds;
    by.get(entry)!.push(v);
  }
  const table = (f: (xs: number[]) => number) =>
    Object.fromEntries(ENTRIES.map((e) => [e, by.get(e)!.length ? f(by.get(e)!) : 0])) as unknown as Timing;
  return {
    floor: table((xs) => Math.min(...xs)),
    typical: table(median),
    samples: Object.fromEntries(ENTRIES.map((e) => [e, by.get(e)!.length])) as Record<keyof Timing, number>,
    missing: ENTRIES.filter((e) => by.get(e)!.length === 0),
  };
}

/** "gate 5.10 s, provision 0.21 s, …" (a drain round marked as such). */
export function describeTiming(t: Timing): string {
  const name: Record<keyof Timing, string> = {
    gate: 'gate',
    provision: 'provision',
    nodeReady: 'node Ready',
    cordon: 'cordon',
    podReady: 'drain round',
    decommission: 'decommission',
    deleteNode: 'delete node',
    scale: 'scale',
  };
  return ENTRIES.map((e) => `${name[e]} ${t[e].toFixed(2)} s`).join(', ');
}
