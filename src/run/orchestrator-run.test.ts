import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ExpectedState } from '../plan/expected-state.js';
import type { Plan } from '../plan/model.js';
import { Journal } from './journal.js';
import type { RunOptions } from './orchestrator.js';
import { beginRun, m1, plan, step, voters3, World, worldOrchestrator } from './testing-orchestrator.js';

// The run loop around the steps: what it skips (phases, optional steps), what stops it between
// steps, the questions it asks a person, what it journals while it waits, and a gate's stability.

let dir: string;
let journal: Journal;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-orch-run-'));
  await writeFile(join(dir, 'plan.json'), '{}');
  journal = Journal.open(join(dir, 'plan.journal.sqlite'));
});
afterEach(async () => {
  journal.close();
  await rm(dir, { recursive: true, force: true });
});

function run(
  w: World,
  p: Plan,
  options: RunOptions = {},
  logs: string[] = [],
  interrupt?: () => string | undefined,
) {
  beginRun(journal, p);
  const at = { journal, planFile: join(dir, 'plan.json') };
  return worldOrchestrator(w, p, at, options, logs, interrupt ? { interrupt } : {}).run();
}

const states = () => Object.fromEntries([...journal.lastStates()].map(([id, t]) => [id, t.state]));
const question = 'Is the rack powered?';
const asks = (w: World, answer: boolean): string[] => {
  const asked: string[] = [];
  w.operator = {
    instruct: () => {},
    ask: async (stepId, q) => {
      asked.push(`${stepId}: ${q}`);
      return answer;
    },
  };
  return asked;
};

describe('what the run skips', () => {
  it('steps of a phase not selected are skipped and journaled with why; --also-kind lets a kind run', async () => {
    const w = new World();
    let r = await run(w, plan(), { phases: [3] });
    expect(r.status).toBe('completed');
    expect(w.calls).toEqual([]);
    expect(new Set(Object.values(states()))).toEqual(new Set(['skipped']));
    expect(journal.lastStates().get('2.01.cordon.n1')?.detail).toEqual({ reason: 'phase 2 not selected' });

    journal.close();
    journal = Journal.open(join(dir, 'also.journal.sqlite'));
    r = await run(new World(), plan(), { phases: [3], alsoKinds: ['cordon'] });
    expect(r.status).toBe('completed');
    expect(states()).toMatchObject({ '2.01.cordon.n1': 'done', '2.02.drain.n1': 'skipped' });
  });

  it('an optional step is skipped unless --drill, which runs it', async () => {
    const p = plan();
    p.phases[0]!.steps[0]!.optional = true;
    const w = new World();
    await run(w, p);
    expect(journal.lastStates().get('2.01.cordon.n1')).toMatchObject({
      state: 'skipped',
      detail: { reason: 'optional: pass --drill to run it' },
    });
    expect(w.calls).not.toContain('setUnschedulable n1 true');

    journal.close();
    journal = Journal.open(join(dir, 'drill.journal.sqlite'));
    const drilled = new World();
    expect((await run(drilled, plan(), { drill: true })).status).toBe('completed');
    expect(drilled.calls[0]).toBe('setUnschedulable n1 true');
  });
});

describe('what stops the run between steps', () => {
  it('an interrupt stops the run before the next step, saying why and how to go on', async () => {
    const w = new World();
    const logs: string[] = [];
    const r = await run(w, plan(), {}, logs, () =>
      w.calls.includes('setUnschedulable n1 true') ? 'SIGTERM: the operator asked to stop' : undefined,
    );
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('2.02.drain.n1');
    expect(r.error?.exitCode).toBe(3);
    expect(r.error?.message).toBe('the run stops before 2.02.drain.n1: SIGTERM: the operator asked to stop');
    expect(r.error?.remediation).toBe('run ferry run --resume once the cause is gone');
    expect(w.calls).toEqual(['setUnschedulable n1 true']);
    expect(r.steps).toEqual([{ id: '2.01.cordon.n1', outcome: 'done' }]);
    expect(journal.lastStates().has('2.02.drain.n1')).toBe(false);
    expect(journal.runEnds().at(-1)).toMatchObject({ state: 'stopped' });
  });

  it('a resumed run says which steps were in flight and whether their action had started', async () => {
    const p = plan();
    beginRun(journal, p);
    journal.transition('2.01.cordon.n1', 1, 'started');
    journal.transition('2.01.cordon.n1', 1, 'gate-passed');
    journal.transition('2.01.cordon.n1', 1, 'action-started');
    const logs: string[] = [];
    expect((await run(new World(), p, { resume: true }, logs)).status).toBe('completed');
    expect(logs).toContain('resume: 2.01.cordon.n1 was in flight (action-started, its action had started)');

    journal.close();
    journal = Journal.open(join(dir, 'gate.journal.sqlite'));
    beginRun(journal, p);
    journal.transition('2.01.cordon.n1', 1, 'started');
    const before: string[] = [];
    expect((await run(new World(), p, { resume: true }, before)).status).toBe('completed');
    expect(before).toContain('resume: 2.01.cordon.n1 was in flight (started)');
  });
});

describe('what a person is asked', () => {
  const asking = (): Plan => {
    const p = plan();
    p.phases[0]!.steps[0]!.expect = { operator: { confirms: question } };
    return p;
  };

  it('a "no" stops the step before its action, journaled; a "yes" lets it act, journaled', async () => {
    const no = new World();
    const askedNo = asks(no, false);
    const r = await run(no, asking());
    expect(askedNo).toEqual([`2.01.cordon.n1: ${question}`]);
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toBe(`2.01.cordon.n1: the operator answered no to "${question}"`);
    expect(r.error?.remediation).toBe('do what the step asks, then run ferry run --resume');
    expect(no.calls).toEqual([]);
    expect(journal.observations({ purpose: 'note' }).map((o) => [o.ok, o.data])).toContainEqual([
      false,
      { refused: question },
    ]);

    journal.close();
    journal = Journal.open(join(dir, 'yes.journal.sqlite'));
    const yes = new World();
    const askedYes = asks(yes, true);
    expect((await run(yes, asking())).status).toBe('completed');
    expect(askedYes).toHaveLength(1);
    expect(yes.calls[0]).toBe('setUnschedulable n1 true');
    expect(journal.observations({ purpose: 'note' }).map((o) => [o.ok, o.data])).toContainEqual([
      true,
      { confirmed: question },
    ]);
  });

  it('an answer is remembered: a resumed run that does the step again does not ask again', async () => {
    const w = new World();
    w.drainFails = true;
    const asked = asks(w, true);
    const p = asking();
    expect((await run(w, p)).status).toBe('stopped');
    expect(asked).toHaveLength(1);
    w.drainFails = false;
    // The stop gave the cordon back: the resumed run cordons again behind the same question.
    expect(w.nodes.get('n1')!.unschedulable).toBe(false);
    expect((await run(w, p, { resume: true })).status).toBe('completed');
    expect(w.calls.filter((c) => c === 'setUnschedulable n1 true')).toHaveLength(2);
    expect(asked).toHaveLength(1);
  });

  it('a question is not asked while what ferry can see does not hold', async () => {
    const w = new World();
    w.members[2]!.isLearner = true;
    const asked = asks(w, true);
    const p = plan();
    p.phases[0]!.steps[0]!.expect = { ...voters3(), operator: { confirms: question } };
    const r = await run(w, p);
    expect(r.status).toBe('stopped');
    expect(asked).toEqual([]);
    expect(r.error?.message).toContain('etcd learners: expected 0, saw 1');
  });
});

describe('what the run journals', () => {
  it('the etcd client URLs, once at the start and again each time they change', async () => {
    const w = new World();
    const urls = w.members.map((m) => m.clientURLs[0]!);
    expect((await run(w, plan())).status).toBe('completed');
    const notes = journal
      .observations({ purpose: 'note' })
      .flatMap((o) => ((o.data as { etcdEndpoints?: string[] }).etcdEndpoints ? [o] : []));
    expect(notes.map((o) => [o.stepId, o.data])).toEqual([
      [null, { etcdEndpoints: urls }],
      [null, { etcdEndpoints: urls.filter((u) => u !== m1.clientURL) }],
    ]);
  });

  it('a wait journals its first look and its outcome, not every look', async () => {
    const w = new World();
    w.members[2]!.isLearner = true;
    let looks = 0;
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      if (++looks === 6) w.members[2]!.isLearner = false; // promoted while the gate waits
      return observe();
    };
    const p = plan();
    p.phases[0]!.steps[0]!.expect = voters3();
    expect((await run(w, p, { gateGraceSeconds: 10 })).status).toBe('completed');
    const gate = journal.observations({ stepId: '2.01.cordon.n1', purpose: 'gate' });
    expect(looks).toBeGreaterThan(5);
    expect(gate.map((o) => o.ok)).toEqual([false, true]);
    expect((gate[0]!.data as { checks: unknown[] }).checks.length).toBeGreaterThan(0);
    expect(gate[1]!.data).toMatchObject({ checks: [] });
  });

  it('what is seen while waiting is journaled when it changes, at most every 10 s', async () => {
    const w = new World();
    let looks = 0;
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      looks++;
      // A different member is the learner at every look, until the eighth: what is seen changes.
      for (const [i, m] of w.members.entries()) m.isLearner = looks < 8 && i === 1 + (looks % 2);
      return observe();
    };
    const p = plan();
    p.phases[0]!.steps[0]!.expect = voters3();
    expect((await run(w, p, { gateGraceSeconds: 10 })).status).toBe('completed');
    expect(looks).toBeGreaterThanOrEqual(8);
    const gate = journal.observations({ stepId: '2.01.cordon.n1', purpose: 'gate' });
    expect(gate.map((o) => o.ok)).toEqual([false, true]);
  });
});

describe('a gate step holds for its stability interval', () => {
  const gated = (stableSeconds: number): Plan => {
    const p = plan();
    const expectation: ExpectedState = voters3();
    p.phases[0]!.steps.unshift(
      step({ id: '2.00.gate.n1', kind: 'gate', params: { reason: 'test', stableSeconds } }, expectation, {}),
    );
    return p;
  };

  it('the expectation must hold for the whole interval; a lapse starts it again', async () => {
    let w = new World();
    let t0 = Date.now();
    expect((await run(w, gated(0.4))).status).toBe('completed');
    const steady = Date.now() - t0;
    expect(steady).toBeGreaterThanOrEqual(400);

    // Holds, lapses once (a learner appears), holds again: the interval counts from the lapse.
    journal.close();
    journal = Journal.open(join(dir, 'lapse.journal.sqlite'));
    w = new World();
    let looks = 0;
    let lapsedAt = 0;
    const observe = w.etcd.observe;
    const third = w.members[2]!;
    w.etcd.observe = async () => {
      looks++;
      third.isLearner = looks === 4;
      if (looks === 4) lapsedAt = Date.now();
      return observe();
    };
    t0 = Date.now();
    const lapse = await run(w, gated(0.4));
    expect(lapse.error?.message).toBeUndefined();
    expect(lapsedAt).toBeGreaterThan(0);
    expect(journal.lastStates().get('2.00.gate.n1')?.state).toBe('done');
    // The gate passed no sooner than the interval after the lapse.
    const passed = journal.transitions('2.00.gate.n1').find((t) => t.state === 'done')!;
    expect(Date.parse(passed.at) - lapsedAt).toBeGreaterThanOrEqual(400 - 5);
  });

  it('a gate step runs every time: never already done, its expectation observed again', async () => {
    const w = new World();
    const p = gated(0);
    expect((await run(w, p)).status).toBe('completed');
    expect(journal.lastStates().get('2.00.gate.n1')?.state).toBe('done');
    expect(journal.observations({ stepId: '2.00.gate.n1', purpose: 'gate' }).at(-1)?.ok).toBe(true);
  });
});
