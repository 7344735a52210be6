/**
 * Where a resumed run picks up (pure over the journal): which steps are finished, which step was in
 * flight when the last run ended and whether its action may have taken effect, and which finished
 * steps must run again because a stop undid them (a node whose cordon the run restored is cordoned
 * and drained again before its swap goes on; a workload scaled back is scaled up again). Then,
 * over what the run re-observed, what becomes of a step whose action had started (inFlightVerdict).
 */
import { gitopsOwnerLabel } from '../plan/gitops-steps.js';
import type { Step } from '../plan/model.js';
import { workloadLabel } from '../plan/scale-steps.js';
import { gateError } from '../ports/stop.js';
import type { RunOptions } from './deps.js';
import { type Check, describeChecks, holds, observable } from './gates.js';
import { FINISHED, type ObservationRow, type StepTransition, type TransitionRow } from './journal.js';

export interface InFlight {
  stepId: string;
  /** Last transition of the step. */
  last: StepTransition;
  /** The last attempt started the step's action: it may have taken effect (or half). */
  actionStarted: boolean;
  attempt: number;
}

export interface ResumePoint {
  finished: Set<string>;
  /**
   * Steps started and not finished, oldest last transition first: one, or the steps of a
   * concurrent group (the orchestrator runs a batch's cordons, say, side by side).
   */
  inFlight: InFlight[];
  /** Finished steps that must run again, with why. */
  rewound: { stepId: string; why: string }[];
}

export interface CordonRestored {
  node: string;
  subject: string;
}

/** A stopped run scaled a workload back (--surge-replicas): its scale-up and wait run again. */
export interface ReplicasRestored {
  /** "Deployment shop/checkout" */
  workload: string;
  replicas: number;
}

export interface GitopsGivenBack {
  /** "Application argocd/cilium" */
  owner: string;
  /** true: reconciling again as before the pause; false: left paused (the run had changed what it owns). */
  resumed: boolean;
}

export function resumePoint(
  transitions: TransitionRow[],
  observations: ObservationRow[],
  steps: Step[],
): ResumePoint {
  const byStep = new Map<string, TransitionRow[]>();
  for (const t of transitions) {
    if (t.stepId === '') continue;
    const l = byStep.get(t.stepId) ?? [];
    if (l.length === 0) byStep.set(t.stepId, l);
    l.push(t);
  }
  const finished = new Set<string>();
  const finishedAt = new Map<string, string>();
  const inFlight: (InFlight & { seq: number })[] = [];
  for (const [id, rows] of byStep) {
    const last = rows.at(-1)!;
    const state = last.state as StepTransition;
    if (FINISHED.has(state)) {
      finished.add(id);
      finishedAt.set(id, last.at);
      continue;
    }
    const attempt = last.attempt;
    inFlight.push({
      stepId: id,
      last: state,
      attempt,
      actionStarted: rows.some((r) => r.attempt === attempt && r.state === 'action-started'),
      seq: last.seq,
    });
  }
  inFlight.sort((a, b) => a.seq - b.seq);

  const rewound: ResumePoint['rewound'] = [];
  const rewind = (s: Step, restoredAt: string, why: string) => {
    const at = finishedAt.get(s.id);
    // Only steps finished before the restore were undone by it (the two tables have separate
    // sequences: compare the times).
    if (at === undefined || at > restoredAt) return;
    finished.delete(s.id);
    finishedAt.delete(s.id);
    rewound.push({ stepId: s.id, why });
  };
  for (const o of observations) {
    if (o.purpose !== 'replicas-restored') continue;
    const { workload, replicas } = o.data as ReplicasRestored;
    for (const s of steps) {
      const scaledUp =
        (s.kind === 'scale-workload' && s.params.purpose === 'surge') || s.kind === 'wait-workload-ready';
      if (scaledUp && workloadLabel(s.params.workload) === workload)
        rewind(s, o.at, `the run gave ${workload} its ${replicas} replicas back when it stopped`);
    }
  }
  for (const o of observations) {
    if (o.purpose !== 'gitops-given-back') continue;
    const { owner, resumed } = o.data as GitopsGivenBack;
    if (!resumed) continue;
    for (const s of steps)
      if (
        s.kind === 'gitops-suspend' &&
        s.params.action === 'pause' &&
        gitopsOwnerLabel(s.params.owner) === owner
      )
        rewind(s, o.at, `the run resumed ${owner} when it stopped`);
  }
  for (const o of observations) {
    if (o.purpose !== 'cordon-restored') continue;
    const { node, subject } = o.data as CordonRestored;
    for (const s of steps) {
      const drainsIt =
        ((s.kind === 'cordon' || s.kind === 'drain') && s.subject === subject) ||
        (s.kind === 'drain-batch' &&
          s.params.nodes.some((n) => n.node.kind === 'kubeadm' && n.node.name === subject));
      if (!drainsIt) continue;
      const at = finishedAt.get(s.id);
      // Only steps finished before the restore were undone by it (the two tables have separate
      // sequences: compare the times).
      if (at === undefined || at > o.at) continue;
      finished.delete(s.id);
      finishedAt.delete(s.id);
      rewound.push({ stepId: s.id, why: `the run restored ${node}'s cordon state when it stopped` });
    }
  }
  return { finished, inFlight: inFlight.map(({ seq: _, ...f }) => f), rewound };
}

/** What a resumed run does with a step whose action had started: record it done, or run it again from its gate. */
export type InFlightVerdict = { state: 'already-done'; reason: string } | { state: 'redo'; note?: string };

/** The re-observed checks show the step's effect: there are some, and every one holds, none unknown. */
export function reobserved(checks: Check[]): boolean {
  return checks.length > 0 && holds(checks) && !checks.some((c) => c.status === 'unknown');
}

/**
 * Decides over what was re-observed of the step's `doneWhen` (`checks`; undefined when it has
 * nothing to observe) and the operator's --mark-done and --retry. A gate stop when ferry cannot
 * tell: a destructive step is repeated only when the world clearly shows it did not happen.
 */
export function inFlightVerdict(
  step: Step,
  checks: Check[] | undefined,
  o: Pick<RunOptions, 'markDone' | 'retry'>,
): InFlightVerdict {
  const check = step.idempotencyCheck;
  const marked = o.markDone?.includes(step.id);
  const retry = o.retry?.includes(step.id);
  const askHow = `check by hand, then run ferry run --resume --mark-done ${step.id} if it happened, or --retry ${step.id} if it did not`;
  if (checks === undefined) {
    if (marked) return { state: 'already-done', reason: 'the operator marked it done' };
    if (check.ifNotDone === 'redo' || retry) return { state: 'redo' };
    throw gateError(
      `${step.id} (${step.title}) was in flight when the last run ended and ferry has no way to observe whether it took effect`,
      askHow,
    );
  }
  if (reobserved(checks)) return { state: 'already-done', reason: `re-observed: ${check.description}` };
  if (marked) return { state: 'already-done', reason: 'the operator marked it done' };
  if (retry) return { state: 'redo' };
  if (check.ifNotDone === 'redo' && (!step.destructive || observable(checks))) {
    const seen = describeChecks(checks).join('; ') || 'unknown';
    return { state: 'redo', note: `not done yet (${seen}); running it again from its gate` };
  }
  throw gateError(
    `${step.id} (${step.title}) was in flight when the last run ended and ferry cannot tell whether it took effect: expected ${check.description}; saw ${describeChecks(checks, { includeUnknown: true }).join('; ')}`,
    askHow,
  );
}
