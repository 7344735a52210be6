/**
 * Small builders shared by the phase builders: one draft step, and the recurring undo and
 * idempotency shapes. Timeouts live here so every phase uses the same numbers.
 */
import type { Command, EtcdExpectation, ExpectedState, MemberRef, NodeRef } from './expected-state.js';
import type { DraftStep, IdempotencyCheck, StepKind, StepOf, StepTarget, Undo } from './model.js';

/** Seconds. Generous: a timeout stops the run at a gate (resumable), it never forces anything. */
export const TIMEOUTS = {
  gate: 300,
  audit: 600,
  etcdSnapshot: 600,
  prep: 1800,
  applyFile: 300,
  provision: { manual: 7200, exec: 1800, capi: 1800 },
  memberJoin: 600,
  /** Base promote wait; build.ts adds time for the database size (etcd.db-size). */
  memberVoter: 600,
  nodeReady: 900,
  lb: 300,
  cordon: 60,
  drain: 900,
  stopApiserver: 180,
  moveLeader: 120,
  removeMember: 300,
  verify: 120,
  decommission: { manual: 7200, exec: 1800, capi: 1800 },
  deleteNode: 120,
  afterCare: 600,
} as const;

/** Two observations this far apart must both pass a gate (kops: two successes 10 s apart). */
export const GATE_STABLE_SECONDS = 10;

/** How long a load balancer needs to notice a backend change (TCP checks: up to ~75 s, etcd.md §3). */
export const LB_SETTLE_SECONDS = 90;

/** Raft applied-index lag under which a new member counts as caught up. */
export const MAX_INDEX_LAG = 1000;

type Draft<K extends StepKind> = Omit<StepOf<K>, 'id' | 'phase' | 'index'>;

/** Types a draft step by its kind (keeps each builder's object literal checked against its params). */
export function draft<K extends StepKind>(s: Draft<K>): DraftStep {
  return s as unknown as DraftStep;
}

/** A gate: observe `expect` (stable for GATE_STABLE_SECONDS) with `commands`, change nothing, redo on resume. */
export function gateStep(g: {
  subject: string;
  title: string;
  target: StepTarget;
  reason: string;
  expect: ExpectedState;
  commands: Command[];
  batch?: number;
}): DraftStep {
  return draft<'gate'>({
    kind: 'gate',
    subject: g.subject,
    title: g.title,
    target: g.target,
    params: { reason: g.reason, stableSeconds: GATE_STABLE_SECONDS },
    expect: g.expect,
    action: { summary: 'Observe only', performer: 'ferry', commands: g.commands },
    verify: { expect: g.expect, commands: [] },
    timeoutSeconds: TIMEOUTS.gate,
    destructive: false,
    undo: noUndo('a gate changes nothing'),
    idempotencyCheck: doneWhen('a gate is observed again on resume', g.expect, 'redo'),
    ...(g.batch === undefined ? {} : { batch: g.batch }),
  });
}

export function undoWith(summary: string, commands: Command[]): Undo {
  return { possible: true, summary, commands };
}

export function noUndo(reason: string): Undo {
  return { possible: false, reason };
}

export function doneWhen(
  description: string,
  state: ExpectedState,
  ifNotDone: 'redo' | 'stop',
): IdempotencyCheck {
  return { description, doneWhen: state, ifNotDone };
}

/** For what ferry cannot observe: the operator's recorded "yes" to `question` means done. */
export function confirmed(question: string, ifNotDone: 'redo' | 'stop'): IdempotencyCheck {
  return {
    description: `the operator confirmed: ${question}`,
    doneWhen: { operator: { confirms: question } },
    ifNotDone,
  };
}

/** An etcd expectation with one more named member, e.g. the new member that must still be absent. */
export function withMember(
  e: EtcdExpectation,
  member: MemberRef,
  state: EtcdExpectation['members'][number]['state'],
): EtcdExpectation {
  return { ...e, members: [...e.members, { member, state }] };
}

export function nodeState(
  node: NodeRef,
  s: { exists: boolean; ready?: boolean; cordoned?: boolean; drained?: boolean },
): ExpectedState['nodes'] {
  return [{ node, ...s }];
}
