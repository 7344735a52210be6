/**
 * Where a resumed run picks up (resumePoint) and what becomes of a step whose action had started
 * (inFlightVerdict), over hand-written journal rows: each rule both ways, at its boundaries.
 */
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { NodeRef } from '../plan/expected-state.js';
import type { Step, WorkloadRef } from '../plan/model.js';
import type { Check } from './gates.js';
import type { ObservationRow, StepTransition, TransitionRow } from './journal.js';
import { inFlightVerdict, reobserved, resumePoint } from './resume.js';

const kubeadm = (name: string): NodeRef => ({ kind: 'kubeadm', name, address: null });
const checkout: WorkloadRef = { kind: 'Deployment', namespace: 'shop', name: 'checkout' };
const cart: WorkloadRef = { kind: 'Deployment', namespace: 'shop', name: 'cart' };

function step(s: Partial<Step> & Pick<Step, 'id' | 'kind'>): Step {
  return {
    phase: 3,
    index: 1,
    subject: 'w1',
    title: s.kind,
    target: {},
    params: {},
    expect: {},
    action: { summary: s.kind, performer: 'ferry', commands: [] },
    verify: { expect: {}, commands: [] },
    timeoutSeconds: 2,
    destructive: false,
    undo: { possible: false, reason: 'test' },
    idempotencyCheck: { description: `${s.kind} done`, doneWhen: {}, ifNotDone: 'redo' },
    ...s,
  } as Step;
}

let seq = 0;
/** A transition at second `sec` of the run (journal times are ISO strings compared as text). */
function tr(
  stepId: string,
  state: StepTransition | 'stopped' | 'completed',
  sec: number,
  attempt = 1,
): TransitionRow {
  return { seq: ++seq, runId: 'r', stepId, attempt, state, at: at(sec), detail: null };
}
function at(sec: number): string {
  return new Date(Date.UTC(2026, 11, 1, 12, 0, sec)).toISOString();
}
function obs(purpose: ObservationRow['purpose'], sec: number, data: unknown): ObservationRow {
  return { seq: ++seq, runId: 'r', stepId: null, purpose, at: at(sec), ok: true, data };
}
const done = (stepId: string, sec: number): TransitionRow[] => [
  tr(stepId, 'started', sec),
  tr(stepId, 'done', sec),
];

describe('resumePoint: finished and in-flight steps', () => {
  it('a step whose last transition is done, already-done or skipped is finished; nothing else is in flight', () => {
    const p = resumePoint(
      [...done('a', 1), tr('b', 'started', 2), tr('b', 'already-done', 2), tr('c', 'skipped', 3)],
      [],
      [],
    );
    expect([...p.finished].sort()).toEqual(['a', 'b', 'c']);
    expect(p.inFlight).toEqual([]);
    expect(p.rewound).toEqual([]);
  });

  it("the run's own end rows (no step id) are no step in flight", () => {
    const p = resumePoint([...done('a', 1), tr('', 'stopped', 2), tr('', 'completed', 3)], [], []);
    expect(p.inFlight).toEqual([]);
    expect([...p.finished]).toEqual(['a']);
  });

  it('the action counts as started only when the last attempt started it', () => {
    const earlierAttempt = [
      tr('a', 'started', 1, 1),
      tr('a', 'gate-passed', 1, 1),
      tr('a', 'action-started', 1, 1),
      tr('a', 'stopped', 1, 1),
      tr('a', 'started', 2, 2),
      tr('a', 'gate-passed', 2, 2),
      tr('a', 'stopped', 2, 2),
    ];
    expect(resumePoint(earlierAttempt, [], []).inFlight).toEqual([
      { stepId: 'a', last: 'stopped', attempt: 2, actionStarted: false },
    ]);

    const thisAttempt = [
      tr('b', 'started', 3, 1),
      tr('b', 'gate-passed', 3, 1),
      tr('b', 'action-started', 3, 1),
    ];
    expect(resumePoint(thisAttempt, [], []).inFlight).toEqual([
      { stepId: 'b', last: 'action-started', attempt: 1, actionStarted: true },
    ]);

    const stoppedAtGate = [tr('c', 'started', 4, 1), tr('c', 'stopped', 4, 1)];
    expect(resumePoint(stoppedAtGate, [], []).inFlight).toEqual([
      { stepId: 'c', last: 'stopped', attempt: 1, actionStarted: false },
    ]);
  });

  it('steps in flight come oldest last transition first, not in the order they started', () => {
    const rows = [
      tr('a', 'started', 1),
      tr('b', 'started', 1),
      tr('c', 'started', 1),
      tr('c', 'action-started', 2),
      tr('a', 'action-started', 3),
      tr('b', 'action-started', 4),
    ];
    expect(resumePoint(rows, [], []).inFlight.map((f) => f.stepId)).toEqual(['c', 'a', 'b']);
    const reversed = [
      tr('a', 'started', 1),
      tr('b', 'started', 1),
      tr('c', 'started', 1),
      tr('c', 'action-started', 2),
      tr('b', 'action-started', 3),
      tr('a', 'action-started', 4),
    ];
    expect(resumePoint(reversed, [], []).inFlight.map((f) => f.stepId)).toEqual(['c', 'b', 'a']);
  });
});

describe('resumePoint: a stop that gave replicas back rewinds the scale-up', () => {
  const surge = step({
    id: '3.1.scale-workload.w1',
    kind: 'scale-workload',
    params: { workload: checkout, replicas: 4, from: 3, purpose: 'surge', pdb: 'shop/checkout' },
  });
  const wait = step({
    id: '3.2.wait-workload-ready.w1',
    kind: 'wait-workload-ready',
    params: { workload: checkout, readyReplicas: 4 },
  });
  const restore = step({
    id: '3.9.scale-workload.w1',
    kind: 'scale-workload',
    params: { workload: checkout, replicas: 3, from: 4, purpose: 'restore', pdb: 'shop/checkout' },
  });
  const otherSurge = step({
    id: '3.1.scale-workload.w2',
    kind: 'scale-workload',
    params: { workload: cart, replicas: 2, from: 1, purpose: 'surge', pdb: 'shop/cart' },
  });
  const cordon = step({ id: '3.3.cordon.w1', kind: 'cordon', params: { node: kubeadm('w1') } as never });
  const steps = [surge, wait, cordon, restore, otherSurge];
  const restored = (sec: number) =>
    obs('replicas-restored', sec, { workload: 'Deployment shop/checkout', replicas: 3 });

  it("the surge scale-up and its wait finished before the restore run again; the workload's other steps and other workloads' do not", () => {
    const rows = [
      ...done(surge.id, 1),
      ...done(wait.id, 2),
      ...done(cordon.id, 3),
      ...done(restore.id, 4),
      ...done(otherSurge.id, 5),
    ];
    const p = resumePoint(rows, [restored(10)], steps);
    expect(p.rewound.map((r) => r.stepId)).toEqual([surge.id, wait.id]);
    expect(p.rewound[0]!.why).toContain('Deployment shop/checkout');
    expect([...p.finished].sort()).toEqual([cordon.id, restore.id, otherSurge.id].sort());
  });

  it('a step finished after the restore, or not finished, is not rewound; one finished at the same instant is', () => {
    const rows = [...done(surge.id, 10), ...done(wait.id, 11)];
    const p = resumePoint(rows, [restored(10)], steps);
    expect(p.rewound.map((r) => r.stepId)).toEqual([surge.id]);
    expect([...p.finished]).toEqual([wait.id]);

    const unfinished = resumePoint([tr(surge.id, 'started', 1)], [restored(10)], steps);
    expect(unfinished.rewound).toEqual([]);
    expect(unfinished.inFlight.map((f) => f.stepId)).toEqual([surge.id]);
  });

  it('only a replicas-restored observation rewinds', () => {
    const rows = [...done(surge.id, 1), ...done(wait.id, 2)];
    const p = resumePoint(
      rows,
      [obs('verify', 10, { workload: 'Deployment shop/checkout', replicas: 3 })],
      steps,
    );
    expect(p.rewound).toEqual([]);
    expect(p.finished.size).toBe(2);
  });
});

describe('resumePoint: a stop that restored a cordon rewinds the cordon and the drain', () => {
  const cordon = step({
    id: '3.1.cordon.w1',
    kind: 'cordon',
    subject: 'w1',
    params: { node: kubeadm('w1') } as never,
  });
  const drain = step({
    id: '3.2.drain.w1',
    kind: 'drain',
    subject: 'w1',
    params: { node: kubeadm('w1') } as never,
  });
  const cordonW2 = step({
    id: '3.1.cordon.w2',
    kind: 'cordon',
    subject: 'w2',
    params: { node: kubeadm('w2') } as never,
  });
  const provision = step({ id: '3.3.provision.w1', kind: 'provision', subject: 'w1', params: {} as never });
  const batch = (id: string, nodes: NodeRef[]) =>
    step({
      id,
      kind: 'drain-batch',
      subject: 'batch',
      params: {
        nodes: nodes.map((node) => ({ node, pdbs: [], pods: 1 })),
        evictionOnly: true,
        ignoreDaemonSets: true,
        deleteEmptyDirData: false,
      },
    });
  const restored = (sec: number, subject = 'w1') => obs('cordon-restored', sec, { node: subject, subject });

  it("the cordon and drain of the node finished before the restore run again; other nodes' and other kinds of step do not", () => {
    const steps = [cordon, drain, cordonW2, provision];
    const rows = [
      ...done(cordon.id, 1),
      ...done(drain.id, 2),
      ...done(cordonW2.id, 3),
      ...done(provision.id, 4),
    ];
    const p = resumePoint(rows, [restored(10)], steps);
    expect(p.rewound.map((r) => r.stepId)).toEqual([cordon.id, drain.id]);
    expect(p.rewound[0]!.why).toContain("w1's cordon");
    expect([...p.finished].sort()).toEqual([cordonW2.id, provision.id].sort());
  });

  it('a drain-batch runs again when one of its kubeadm nodes was restored, not for a Talos node of that name', () => {
    const mixed = batch('3.2.drain-batch.1', [kubeadm('w2'), kubeadm('w1')]);
    const talos = batch('3.2.drain-batch.2', [{ kind: 'talos', replaces: 'w0', name: 'w1', address: null }]);
    const other = batch('3.2.drain-batch.3', [kubeadm('w3')]);
    const rows = [...done(mixed.id, 1), ...done(talos.id, 2), ...done(other.id, 3)];
    const p = resumePoint(rows, [restored(10)], [mixed, talos, other]);
    expect(p.rewound.map((r) => r.stepId)).toEqual([mixed.id]);
    expect([...p.finished].sort()).toEqual([talos.id, other.id].sort());
  });

  it('a step finished after the restore, or not finished, is not rewound; one finished at the same instant is', () => {
    const p = resumePoint([...done(cordon.id, 10), ...done(drain.id, 11)], [restored(10)], [cordon, drain]);
    expect(p.rewound.map((r) => r.stepId)).toEqual([cordon.id]);
    expect([...p.finished]).toEqual([drain.id]);

    const unfinished = resumePoint(
      [...done(cordon.id, 1), tr(drain.id, 'started', 2)],
      [restored(10)],
      [cordon, drain],
    );
    expect(unfinished.rewound.map((r) => r.stepId)).toEqual([cordon.id]);
    expect(unfinished.inFlight.map((f) => f.stepId)).toEqual([drain.id]);
  });

  it('only a cordon-restored observation rewinds (a cordon state recorded, even after the steps, does not)', () => {
    const before = obs('cordon-before', 10, { node: 'w1', subject: 'w1', unschedulable: false });
    const p = resumePoint([...done(cordon.id, 1), ...done(drain.id, 2)], [before], [cordon, drain]);
    expect(p.rewound).toEqual([]);
    expect(p.finished.size).toBe(2);
  });
});

const ok = (subject: string): Check => ({
  section: 'nodes',
  subject,
  expected: 'cordoned',
  seen: 'cordoned',
  status: 'ok',
});
const mismatch = (subject: string): Check => ({
  section: 'nodes',
  subject,
  expected: 'cordoned',
  seen: 'schedulable',
  status: 'mismatch',
});
const unknown = (subject: string): Check => ({
  section: 'machines',
  subject,
  expected: 'decommissioned',
  seen: 'cannot tell',
  status: 'unknown',
});
const unobserved = (subject: string): Check => ({
  ...mismatch(subject),
  seen: 'API unreachable',
  unobserved: true,
});

describe('reobserved', () => {
  it('holds only when there are checks and every one is ok', () => {
    expect(reobserved([])).toBe(false);
    expect(reobserved([ok('w1')])).toBe(true);
    expect(reobserved([ok('w1'), ok('w2')])).toBe(true);
    expect(reobserved([ok('w1'), mismatch('w2')])).toBe(false);
    expect(reobserved([ok('w1'), unknown('w2')])).toBe(false);
  });
});

describe('inFlightVerdict', () => {
  const redoable = step({ id: '3.1.cordon.w1', kind: 'cordon' });
  const stopper = step({
    id: '3.4.decommission.w1',
    kind: 'decommission',
    destructive: true,
    idempotencyCheck: { description: 'machine decommissioned', doneWhen: {}, ifNotDone: 'stop' },
  });
  const destructiveRedo = step({
    id: '2.5.etcd-remove-member.w1',
    kind: 'etcd-remove-member',
    destructive: true,
    idempotencyCheck: { description: 'member gone', doneWhen: {}, ifNotDone: 'redo' },
  });
  const none = {};
  const gateStop = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).kind).toBe('gate');
      return err as FerryError;
    }
    throw new Error('expected a gate stop');
  };

  describe('nothing to observe', () => {
    it('the operator marking it done records it done', () => {
      expect(inFlightVerdict(stopper, undefined, { markDone: [stopper.id] })).toEqual({
        state: 'already-done',
        reason: 'the operator marked it done',
      });
    });
    it('a redo step, or one the operator retries, runs again', () => {
      expect(inFlightVerdict(redoable, undefined, none)).toEqual({ state: 'redo' });
      expect(inFlightVerdict(stopper, undefined, { retry: [stopper.id] })).toEqual({ state: 'redo' });
    });
    it("a stop step stops at the gate, naming --mark-done and --retry; another step's flags do not count", () => {
      const err = gateStop(() => inFlightVerdict(stopper, undefined, { markDone: ['x'], retry: ['y'] }));
      expect(err.message).toContain('no way to observe');
      expect(err.remediation).toContain(`--mark-done ${stopper.id}`);
      expect(err.remediation).toContain(`--retry ${stopper.id}`);
    });
  });

  describe('re-observed', () => {
    it('every check holding records it done, before the flags', () => {
      expect(inFlightVerdict(stopper, [ok('w1')], { retry: [stopper.id] })).toEqual({
        state: 'already-done',
        reason: 're-observed: machine decommissioned',
      });
    });
    it('not holding: --mark-done records it done, --retry runs it again', () => {
      expect(inFlightVerdict(stopper, [mismatch('w1')], { markDone: [stopper.id] })).toEqual({
        state: 'already-done',
        reason: 'the operator marked it done',
      });
      expect(inFlightVerdict(stopper, [unknown('w1')], { retry: [stopper.id] })).toEqual({ state: 'redo' });
      expect(inFlightVerdict(stopper, [], { retry: [stopper.id] })).toEqual({ state: 'redo' });
    });
    it('a redo step seen not done runs again, saying what was seen', () => {
      const v = inFlightVerdict(redoable, [ok('w1'), mismatch('w2')], none);
      expect(v.state).toBe('redo');
      expect(v.state === 'redo' && v.note).toContain('nodes w2: expected cordoned, saw schedulable');
      expect(v.state === 'redo' && v.note).not.toContain('unknown');
    });
    it('a non-destructive redo step seen only as unknown runs again, saying so', () => {
      const v = inFlightVerdict(redoable, [unknown('w1')], none);
      expect(v).toEqual({ state: 'redo', note: 'not done yet (unknown); running it again from its gate' });
      expect(inFlightVerdict(redoable, [unobserved('w1')], none).state).toBe('redo');
    });
    it('a destructive redo step runs again only when the world was seen clearly', () => {
      expect(inFlightVerdict(destructiveRedo, [mismatch('w1')], none).state).toBe('redo');
      gateStop(() => inFlightVerdict(destructiveRedo, [unobserved('w1')], none));
      gateStop(() => inFlightVerdict(destructiveRedo, [ok('w1'), unknown('w2')], none));
    });
    it('a stop step not seen done stops at the gate, with what it expected and every check it saw, unknowns too', () => {
      const err = gateStop(() => inFlightVerdict(stopper, [mismatch('w1'), unknown('w2')], none));
      expect(err.message).toContain('expected machine decommissioned');
      expect(err.message).toContain('nodes w1: expected cordoned, saw schedulable');
      expect(err.message).toContain('(unknown) machines w2: expected decommissioned, saw cannot tell');
      expect(err.remediation).toContain(`--retry ${stopper.id}`);
    });
    it('a stop step stops even when the world was seen clearly not done, destructive or not', () => {
      gateStop(() => inFlightVerdict(stopper, [mismatch('w1')], none));
      const gentle = step({
        id: '3.1.provision.w1',
        kind: 'provision',
        idempotencyCheck: { description: 'machine provisioned', doneWhen: {}, ifNotDone: 'stop' },
      });
      gateStop(() => inFlightVerdict(gentle, [mismatch('w1')], none));
    });
  });
});
