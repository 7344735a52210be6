/**
 * The worker batches in the run report: per batch its nodes, the pods its drain moved (the
 * journal's drain-progress), how long it took against the plan's estimate and what bounded its
 * size (the planner's explanation); and the workers' makespan against the plan's lower bound.
 */
import type { Plan } from '../plan/model.js';
import type { DrainEvent } from './drain-nodes.js';
import type { ObservationRow, TransitionRow } from './journal.js';

export interface BatchRow {
  index: number;
  nodes: string[];
  /** Pods the batch's drain evicted; null when the journal's drain progress was not given. */
  podsMoved: number | null;
  /** From the batch's first step started to its last transition; null when it did not start. */
  seconds: number | null;
  plannedSeconds: number;
  /** What bounded its size, as the plan explains it. */
  boundBy: string;
  /** The last state of its last step that ran. */
  outcome: string;
}

export interface BatchReport {
  rows: BatchRow[];
  /** First phase-3 step started → last phase-3 transition; null when no worker step ran. */
  makespanSeconds: number | null;
  lowerBoundSeconds: number;
  estimateSeconds: number;
}

export function batchReport(input: {
  plan: Plan;
  transitions: TransitionRow[];
  drainProgress?: ObservationRow[];
}): BatchReport | undefined {
  const roll = input.plan.workerRoll;
  if (!roll || roll.batches.length === 0) return undefined;
  const steps = input.plan.phases.flatMap((p) => p.steps).filter((s) => s.phase === 3);
  const batchOf = new Map(steps.flatMap((s) => (s.batch === undefined ? [] : [[s.id, s.batch] as const])));
  const spans = new Map<number, { start: number; end: number; outcome: string }>();
  let first: number | undefined;
  let last: number | undefined;
  for (const t of input.transitions) {
    const b = batchOf.get(t.stepId);
    if (b === undefined) continue;
    const at = Date.parse(t.at);
    if (t.state === 'skipped') continue;
    first = Math.min(first ?? at, at);
    last = Math.max(last ?? at, at);
    const s = spans.get(b) ?? { start: at, end: at, outcome: t.state };
    s.end = Math.max(s.end, at);
    s.outcome = t.state;
    spans.set(b, s);
  }
  const moved = new Map<number, number>();
  for (const o of input.drainProgress ?? []) {
    const b = o.stepId ? batchOf.get(o.stepId) : undefined;
    if (b === undefined || (o.data as DrainEvent).kind !== 'evicted') continue;
    moved.set(b, (moved.get(b) ?? 0) + 1);
  }
  const rows = roll.batches.map((b): BatchRow => {
    const s = spans.get(b.index);
    return {
      index: b.index,
      nodes: b.nodes,
      podsMoved: input.drainProgress ? (moved.get(b.index) ?? 0) : null,
      seconds: s ? (s.end - s.start) / 1000 : null,
      plannedSeconds: b.seconds,
      boundBy: b.why,
      outcome: s?.outcome ?? 'not started',
    };
  });
  return {
    rows,
    makespanSeconds: first === undefined || last === undefined ? null : (last - first) / 1000,
    lowerBoundSeconds: roll.estimate.lowerBoundSeconds,
    estimateSeconds: roll.estimate.seconds,
  };
}

const secs = (n: number | null) => (n === null ? '—' : n >= 100 ? `${Math.round(n)} s` : `${n.toFixed(1)} s`);

/** "Makespan 312 s: 1.08× the plan's lower bound (289 s); the plan estimated 340 s." */
export function makespanLine(r: BatchReport): string {
  if (r.makespanSeconds === null)
    return `No worker batch ran; the plan's lower bound is ${secs(r.lowerBoundSeconds)}, its estimate ${secs(r.estimateSeconds)}.`;
  const ratio = r.lowerBoundSeconds > 0 ? ` ${(r.makespanSeconds / r.lowerBoundSeconds).toFixed(2)}×` : '';
  return `Makespan ${secs(r.makespanSeconds)}:${ratio} the plan's lower bound (${secs(r.lowerBoundSeconds)}); the plan estimated ${secs(r.estimateSeconds)}.`;
}

export function batchTableMarkdown(r: BatchReport): string[] {
  return [
    '## Worker batches',
    '',
    '| batch | nodes | pods moved | time | planned | bounded by | outcome |',
    '|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (b) =>
        `| ${b.index} | ${b.nodes.join(', ')} | ${b.podsMoved ?? '—'} | ${secs(b.seconds)} | ${secs(b.plannedSeconds)} | ${b.boundBy.replace(/\|/g, '\\|')} | ${b.outcome} |`,
    ),
    '',
    makespanLine(r),
    '',
  ];
}

export function batchTableHtml(r: BatchReport, esc: (s: string) => string): string[] {
  return [
    '<h2>Worker batches</h2><table><tr><th>batch</th><th>nodes</th><th>pods moved</th><th>time</th><th>planned</th><th>bounded by</th><th>outcome</th></tr>',
    ...r.rows.map(
      (b) =>
        `<tr><td>${b.index}</td><td>${esc(b.nodes.join(', '))}</td><td>${b.podsMoved ?? '—'}</td><td>${secs(b.seconds)}</td><td>${secs(b.plannedSeconds)}</td><td>${esc(b.boundBy)}</td><td>${esc(b.outcome)}</td></tr>`,
    ),
    '</table>',
    `<p>${esc(makespanLine(r))}</p>`,
  ];
}
