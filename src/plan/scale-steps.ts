/**
 * --surge-replicas: a PodDisruptionBudget that allows no disruption (minAvailable 2 of
 * 2) stops every drain of its nodes. The audit's own fix, as steps the operator opted into: scale
 * the workload up by one before its first node drains, wait for the extra pod Ready (the budget
 * then allows one disruption), and restore the replica count after its last node is done. A run
 * that stops in between restores the count (the orchestrator), so a stop leaves no extra replica.
 */
import { cmd, kubectl, sq } from './commands.js';
import type { ExpectedState, ObjectExpectation } from './expected-state.js';
import type { DraftStep, WorkloadRef } from './model.js';
import { doneWhen, draft, noUndo, undoWith } from './steps.js';

/** Seconds: the API call, and the extra pod scheduled, started and Ready. */
export const SCALE_TIMEOUT = 60;
export const WORKLOAD_READY_TIMEOUT = 600;

export function workloadLabel(w: WorkloadRef): string {
  return `${w.kind} ${w.namespace}/${w.name}`;
}

function resource(w: WorkloadRef): string {
  return `${w.kind.toLowerCase()}/${sq(w.name)} -n ${sq(w.namespace)}`;
}

function replicasAre(w: WorkloadRef, replicas: number, ready?: number): ExpectedState {
  const o: ObjectExpectation = {
    kind: w.kind,
    namespace: w.namespace,
    name: w.name,
    present: true,
    fields: {
      'spec.replicas': String(replicas),
      ...(ready === undefined ? {} : { 'status.readyReplicas': String(ready) }),
    },
  };
  return { objects: [o] };
}

export function scaleStep(s: {
  subject: string;
  batch: number;
  workload: WorkloadRef;
  from: number;
  to: number;
  purpose: 'surge' | 'restore';
  pdb: string;
}): DraftStep {
  const { workload: w } = s;
  const target = s.purpose === 'surge' ? s.to : s.from;
  const before = s.purpose === 'surge' ? s.from : s.to;
  return draft<'scale-workload'>({
    kind: 'scale-workload',
    subject: s.subject,
    title:
      s.purpose === 'surge'
        ? `Scale ${workloadLabel(w)} to ${target} replicas: PodDisruptionBudget ${s.pdb} allows no disruption at ${s.from}`
        : `Restore ${workloadLabel(w)} to ${target} replicas: its last node is drained`,
    target: {},
    params: { workload: w, replicas: target, from: s.from, purpose: s.purpose, pdb: s.pdb },
    expect: replicasAre(w, before),
    action: {
      summary:
        s.purpose === 'surge'
          ? `Set spec.replicas to ${target} through the scale subresource (--surge-replicas), so that ${s.pdb} allows one disruption once the extra pod is Ready`
          : `Set spec.replicas back to ${target} through the scale subresource`,
      performer: 'ferry',
      commands: [cmd(kubectl(`scale ${resource(w)} --replicas=${target}`))],
    },
    verify: {
      expect: replicasAre(w, target),
      commands: [cmd(kubectl(`get ${resource(w)} -o jsonpath='{.spec.replicas}'`), `${target}`)],
    },
    timeoutSeconds: SCALE_TIMEOUT,
    destructive: false,
    undo:
      s.purpose === 'surge'
        ? undoWith(`Scale it back to ${s.from} (a run that stops does so itself)`, [
            cmd(kubectl(`scale ${resource(w)} --replicas=${s.from}`)),
          ])
        : noUndo(`the roll is past ${workloadLabel(w)}'s nodes: scale it by hand if it needs more replicas`),
    idempotencyCheck: doneWhen(
      `${workloadLabel(w)} has spec.replicas ${target}`,
      replicasAre(w, target),
      'redo',
    ),
    batch: s.batch,
    notes:
      s.purpose === 'surge'
        ? [
            `the extra replica needs room on a worker that stays; the plan counted its requests`,
            `if the run stops before the restore, it scales ${workloadLabel(w)} back to ${s.from} and a resumed run scales it up again`,
          ]
        : [],
  });
}

export function waitWorkloadReadyStep(s: {
  subject: string;
  batch: number;
  workload: WorkloadRef;
  replicas: number;
}): DraftStep {
  const { workload: w } = s;
  const ready = replicasAre(w, s.replicas, s.replicas);
  return draft<'wait-workload-ready'>({
    kind: 'wait-workload-ready',
    subject: s.subject,
    title: `Wait for ${s.replicas} Ready replicas of ${workloadLabel(w)}`,
    target: {},
    params: { workload: w, readyReplicas: s.replicas },
    expect: replicasAre(w, s.replicas),
    action: {
      summary: 'The controller starts the extra pod; the budget allows a disruption once it is Ready',
      performer: 'ferry',
      commands: [cmd(kubectl(`rollout status ${resource(w)} --timeout=${WORKLOAD_READY_TIMEOUT}s`))],
    },
    verify: {
      expect: ready,
      commands: [cmd(kubectl(`get ${resource(w)} -o jsonpath='{.status.readyReplicas}'`), `${s.replicas}`)],
    },
    timeoutSeconds: WORKLOAD_READY_TIMEOUT,
    destructive: false,
    undo: noUndo('nothing changed by waiting'),
    idempotencyCheck: doneWhen(`${workloadLabel(w)} has ${s.replicas} Ready replicas`, ready, 'redo'),
    batch: s.batch,
  });
}
