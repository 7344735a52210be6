import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { usageError } from '../errors.js';
import type { ExpectedState, KubeadmNodeRef, TalosNodeRef } from '../plan/expected-state.js';
import type { Plan, Step } from '../plan/model.js';
import type { ActionContext, EtcdProbeControl } from '../ports/run.js';
import type { HealthSignal, Silencer } from '../ports/signals.js';
import type { RunDeps } from './deps.js';
import { Journal } from './journal.js';
import { concurrentGroup, type RunOptions } from './orchestrator.js';
import { beginRun, m1, n1, plan, step, voters3, World, worldOrchestrator } from './testing-orchestrator.js';

// The orchestrator's guards one at a time: what each step journals and logs, which default applies
// when an option is not given, what a side-by-side group reports, what a stop gives back when a
// hook fails, and what reaches the handlers (the action context, silences, the probe).

let dir: string;
let journal: Journal;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-orch-guards-'));
  await writeFile(join(dir, 'plan.json'), '{}');
  journal = Journal.open(join(dir, 'plan.journal.sqlite'));
});
afterEach(async () => {
  journal.close();
  await rm(dir, { recursive: true, force: true });
});

type Extra = Partial<Pick<RunDeps, 'etcdProbe' | 'signals' | 'silencer' | 'signal' | 'interrupt'>>;

function run(w: World, p: Plan, options: RunOptions = {}, logs: string[] = [], extra: Extra = {}) {
  beginRun(journal, p);
  const at = { journal, planFile: join(dir, 'plan.json') };
  return worldOrchestrator(w, p, at, options, logs, extra).run();
}

function only(...steps: Step[]): Plan {
  return { ...plan(), phases: [{ id: 2, name: 'control-planes', title: '', summary: '', steps }] } as Plan;
}

const cordonStep = (): Step => plan().phases[0]!.steps[0]!;
const states = (id: string) => journal.transitions(id).map((t) => t.state);

const ws: KubeadmNodeRef[] = [1, 2, 3].map((i) => ({
  kind: 'kubeadm',
  name: `w${i}`,
  address: `10.0.1.${i}`,
}));

function cordonOf(n: KubeadmNodeRef, i: number, extra: { expect?: ExpectedState } = {}): Step {
  return step(
    {
      id: `3.0${i + 1}.cordon.${n.name}`,
      kind: 'cordon',
      subject: n.name,
      batch: 1,
      params: { node: n },
      target: { node: n },
      ...extra,
    },
    { nodes: [{ node: n, exists: true }] },
    { nodes: [{ node: n, exists: true, cordoned: true }] },
  );
}

function decommissionOf(n: KubeadmNodeRef, i: number): Step {
  return step(
    {
      id: `3.0${i + 4}.decommission.${n.name}`,
      kind: 'decommission',
      subject: n.name,
      batch: 1,
      destructive: true,
      target: { node: n },
      action: { summary: 'decommission', performer: 'provisioner', commands: [] },
      params: { node: n, provisioner: 'exec', wipes: [] },
    },
    { nodes: [{ node: n, exists: true, cordoned: true }] },
    { machines: [{ node: n, state: 'decommissioned' }] },
  );
}

function workers(w: World): void {
  for (const n of ws) {
    w.nodes.set(n.name, { ...w.nodes.get('n1')!, name: n.name, addresses: [n.address!] });
    w.machines.set(n.name, 'running');
  }
}

const workerPlan = (steps: Step[]): Plan =>
  ({ ...plan(), phases: [{ id: 3, name: 'workers', title: '', summary: '', steps }] }) as Plan;

describe('concurrentGroup', () => {
  const cordons = ws.map((n, i) => cordonOf(n, i));
  const decoms = ws.map((n, i) => decommissionOf(n, i));

  it("takes the consecutive steps of one batch's concurrent kind, from i on", () => {
    const steps = [...cordons, ...decoms];
    expect(concurrentGroup(steps, 0).map((s) => s.id)).toEqual(cordons.map((s) => s.id));
    expect(concurrentGroup(steps, 1).map((s) => s.id)).toEqual(cordons.slice(1).map((s) => s.id));
    expect(concurrentGroup(steps, 3).map((s) => s.id)).toEqual(decoms.map((s) => s.id));
  });

  it('stops at another batch or another phase', () => {
    const otherBatch = { ...cordons[1]!, batch: 2 };
    expect(concurrentGroup([cordons[0]!, otherBatch, cordons[2]!], 0)).toEqual([cordons[0]]);
    const otherPhase = { ...cordons[1]!, phase: 4 } as Step;
    expect(concurrentGroup([cordons[0]!, otherPhase, cordons[2]!], 0)).toEqual([cordons[0]]);
  });

  it('a step outside a batch, or of a kind that does not run side by side, is a group of one', () => {
    const unbatched = cordons.map(({ batch: _, ...s }) => s as Step);
    expect(concurrentGroup(unbatched, 0)).toEqual([unbatched[0]]);
    const drains = cordons.map((s) => ({ ...s, kind: 'drain' }) as Step);
    expect(concurrentGroup(drains, 0)).toEqual([drains[0]]);
  });
});

describe('what a step journals and logs', () => {
  it('an acting step: started (title, kind), gate-passed, action-started (performer, summary), action-done (its result), done', async () => {
    const logs: string[] = [];
    const r = await run(new World(), only(cordonStep()), {}, logs);
    expect(r).toMatchObject({ status: 'completed', steps: [{ id: '2.01.cordon.n1', outcome: 'done' }] });
    expect(journal.transitions('2.01.cordon.n1').map((t) => [t.state, t.detail])).toEqual([
      ['started', { title: 'cordon', kind: 'cordon' }],
      ['gate-passed', null],
      ['action-started', { performer: 'ferry', summary: 'cordon' }],
      ['action-done', { node: 'n1' }],
      ['done', null],
    ]);
    expect(logs[0]).toBe('▶ 2.01.cordon.n1  cordon');
    expect(journal.runEnds().at(-1)).toMatchObject({ state: 'completed', detail: { steps: 1 } });
    // The gate and the verification each journal their look, with the checks that held counted.
    const gate = journal.observations({ stepId: '2.01.cordon.n1', purpose: 'gate' });
    expect(gate.map((o) => [o.ok, o.data])).toEqual([[true, { checks: [], ok: 1 }]]);
    const verify = journal.observations({ stepId: '2.01.cordon.n1', purpose: 'verify' });
    expect(verify.map((o) => [o.ok, o.data])).toEqual([[true, { checks: [], ok: 2 }]]);
  });

  it('a step with nothing to send (a wait) journals an empty action-done; empty expectations journal no look', async () => {
    const wait = step(
      { id: '2.01.wait-node-ready.n1', kind: 'wait-node-ready', params: { node: n1 } },
      {},
      {},
      {},
    );
    const r = await run(new World(), only(wait));
    expect(r.status).toBe('completed');
    expect(journal.transitions(wait.id).map((t) => [t.state, t.detail])).toEqual([
      ['started', { title: 'wait-node-ready', kind: 'wait-node-ready' }],
      ['gate-passed', null],
      ['action-started', { performer: 'ferry', summary: 'wait-node-ready' }],
      ['action-done', {}],
      ['done', null],
    ]);
    expect(journal.observations({ stepId: wait.id })).toEqual([]);
  });

  it("an operator-performed step is printed for a person, not run by the kind's handler", async () => {
    const w = new World();
    const instructed: string[] = [];
    w.operator = {
      instruct: (id, lines) => {
        instructed.push(`${id}: ${lines.join(' | ')}`);
        w.nodes.get('n1')!.unschedulable = true; // the person cordons it
      },
      ask: async () => true,
    };
    const s = {
      ...cordonStep(),
      action: { summary: 'cordon n1 by hand', performer: 'operator', commands: [] },
    } as Step;
    s.idempotencyCheck.doneWhen = {};
    expect((await run(w, only(s))).status).toBe('completed');
    expect(w.calls).toEqual([]);
    expect(instructed).toEqual(['2.01.cordon.n1: cordon n1 by hand']);
    expect(journal.transitions(s.id).find((t) => t.state === 'action-done')?.detail).toEqual({
      performedBy: 'operator',
    });
  });

  it('an effect already there is journaled already-done with its check, without gate or action', async () => {
    const w = new World();
    w.nodes.get('n1')!.unschedulable = true;
    const logs: string[] = [];
    expect((await run(w, only(cordonStep()), {}, logs)).status).toBe('completed');
    expect(journal.transitions('2.01.cordon.n1').map((t) => [t.state, t.detail])).toEqual([
      ['started', { title: 'cordon', kind: 'cordon' }],
      ['already-done', { reason: 'cordon done' }],
    ]);
    expect(logs).toContain('  already done: cordon done');
    expect(w.calls).toEqual([]);
  });

  it('a destructive step is never taken as done by its look: its gate still decides', async () => {
    const w = new World();
    w.members = w.members.filter((m) => m.id !== m1.id); // the member is already gone
    const removal = plan().phases[0]!.steps[3]!;
    const r = await run(w, only(removal));
    expect(r.status).toBe('stopped');
    expect(states(removal.id)).toEqual(['started', 'stopped']);
    expect(r.error?.message).toMatch(
      /^gate before 2\.04\.etcd-remove-member\.n1 \(etcd-remove-member\) did not hold within 1 s:/,
    );
    expect(w.calls).toEqual([]);
  });

  it('a skip asked by the handler before the gate is journaled and logged with its reason', async () => {
    const w = new World();
    w.leader = '3';
    const logs: string[] = [];
    const move = plan().phases[0]!.steps[2]!;
    expect((await run(w, only(move), {}, logs)).status).toBe('completed');
    const last = journal.transitions(move.id).at(-1)!;
    expect(last.state).toBe('skipped');
    const reason = (last.detail as { reason: string }).reason;
    expect(reason.length).toBeGreaterThan(0);
    expect(logs).toContain(`  skipped: ${reason}`);
    expect(journal.observations({ stepId: move.id, purpose: 'gate' })).toEqual([]);
  });
});

describe('how a step stops', () => {
  it('a verification that does not hold stops within the step timeout of this run, journaled and logged', async () => {
    const w = new World();
    const s = cordonStep();
    s.verify.expect = { nodes: [{ node: n1, exists: true, cordoned: true, drained: true }] };
    s.idempotencyCheck.doneWhen = {};
    const logs: string[] = [];
    const t0 = Date.now();
    const r = await run(w, only(s), { timeouts: { cordon: 1 } }, logs);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe(s.id);
    expect(r.error?.message).toMatch(
      /^verification of 2\.01\.cordon\.n1 \(cordon\) did not hold within 1 s:\n {2}/,
    );
    expect(r.error?.remediation).toContain('check the nodes');
    expect(states(s.id)).toEqual(['started', 'gate-passed', 'action-started', 'action-done', 'stopped']);
    expect(journal.transitions(s.id).at(-1)?.detail).toEqual({
      message: r.error?.message,
      remediation: r.error?.remediation,
    });
    expect(logs).toContain(`■ ${s.id} stopped: ${r.error?.message}`);
    expect(journal.runEnds().at(-1)).toMatchObject({
      state: 'stopped',
      detail: { message: r.error?.message, remediation: r.error?.remediation },
    });
    const verify = journal.observations({ stepId: s.id, purpose: 'verify' });
    expect(verify.at(-1)?.ok).toBe(false);
    const last = verify.at(-1)!.data as { checks: { status: string }[]; ok: number };
    expect(last.checks.map((c) => c.status)).toEqual(['mismatch']);
    expect(last.ok).toBe(2);
  });

  it('an error that is not a gate stop (usage, input) is journaled failed; a plain error is a stop', async () => {
    for (const [thrown, state] of [
      [usageError('the exec provisioner needs --exec-config'), 'failed'],
      [new Error('BMC does not answer'), 'stopped'],
    ] as const) {
      journal.close();
      journal = Journal.open(join(dir, `${state}.journal.sqlite`));
      const w = new World();
      w.provisioner.decommission = async () => {
        throw thrown;
      };
      const decom = plan().phases[0]!.steps[4]!;
      decom.expect = {};
      const r = await run(w, only(decom));
      expect(r.status).toBe('stopped');
      expect(states(decom.id).at(-1)).toBe(state);
      expect(r.error?.kind).toBe(state === 'failed' ? 'usage' : 'gate');
      expect(journal.runEnds().at(-1)?.state).toBe('stopped');
    }
  });

  it('side by side, the first step to fail (in plan order) is what the run reports; the others are finished', async () => {
    const w = new World();
    workers(w);
    w.provisioner.decommission = async (req) => {
      await new Promise((r) => setTimeout(r, req.node === 'w1' ? 80 : 10)); // w1 ends last
      if (req.node !== 'w2') throw new Error(`BMC of ${req.node} does not answer`);
      w.machines.set(req.node, 'decommissioned');
    };
    const p = workerPlan([...ws.map((n, i) => cordonOf(n, i)), ...ws.map((n, i) => decommissionOf(n, i))]);
    const r = await run(w, p);
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('3.04.decommission.w1');
    expect(r.error?.message).toContain('BMC of w1 does not answer');
    expect(r.steps.map((s) => s.id)).toEqual([
      '3.01.cordon.w1',
      '3.02.cordon.w2',
      '3.03.cordon.w3',
      '3.05.decommission.w2',
    ]);
  });

  it('a stop hook that fails is logged, and the next hook (replicas after cordons) still gives back', async () => {
    const w = new World();
    w.drainFails = true;
    const set = w.kube.setUnschedulable.bind(w.kube);
    w.kube.setUnschedulable = async (name, v) => {
      if (!v) throw new Error('apiserver said 503');
      return set(name, v);
    };
    const checkout = { kind: 'Deployment' as const, namespace: 'shop', name: 'checkout' };
    const surge = step(
      {
        id: '2.00.scale-workload.n1',
        kind: 'scale-workload',
        target: {},
        params: { workload: checkout, replicas: 3, from: 2, purpose: 'surge', pdb: 'shop/checkout' },
      },
      {},
      {},
    );
    const [cordon, drain] = plan().phases[0]!.steps;
    const logs: string[] = [];
    const r = await run(w, only(surge, cordon!, drain!), {}, logs);
    expect(r.stoppedAt).toBe('2.02.drain.n1');
    const failed = logs.indexOf('  could not restore cordon state: apiserver said 503');
    const restored = logs.findIndex((l) => l.includes('restored: Deployment shop/checkout'));
    expect(failed).toBeGreaterThan(0);
    expect(restored).toBeGreaterThan(failed);
    // The cordon and the drain share one hook: it runs (and fails) once.
    expect(logs.filter((l) => l.includes('could not restore'))).toHaveLength(1);
    expect(w.replicas).toBe(2);
    expect(w.nodes.get('n1')!.unschedulable).toBe(true); // could not be given back
    // What is given back is journaled against the step that stopped the run.
    expect(journal.observations({ purpose: 'replicas-restored' }).map((o) => o.stepId)).toEqual([
      '2.02.drain.n1',
    ]);
  });

  it('a node whose name is not known stops the step before acting on it', async () => {
    const talos: TalosNodeRef = { kind: 'talos', replaces: 'n9', name: null, address: null };
    const s = step(
      { id: '2.01.cordon.n9', kind: 'cordon', params: { node: talos }, target: { node: talos } },
      {},
      {},
      {},
    );
    const w = new World();
    const r = await run(w, only(s));
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toBe(
      'the name of <Talos node replacing n9> is not known: the provision step did not report it',
    );
    expect(r.error?.remediation).toBe('run ferry run --resume so the provision step is re-observed');
    expect(w.calls).toEqual([]);
  });

  it("the run's signal aborted while a gate waits: the step stops as interrupted, soon", async () => {
    const w = new World();
    w.members[2]!.isLearner = true; // the gate would wait its whole grace
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('SIGTERM')), 100);
    const s = cordonStep();
    s.expect = voters3();
    const t0 = Date.now();
    const r = await run(w, only(s), { gateGraceSeconds: 20 }, [], { signal: ctl.signal });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toBe('2.01.cordon.n1 was interrupted');
    expect(states(s.id)).toEqual(['started', 'stopped']);
  });
});

describe('resume', () => {
  function inFlight(p: Plan, id: string): void {
    beginRun(journal, p);
    journal.transition(id, 1, 'started');
    journal.transition(id, 1, 'gate-passed');
    journal.transition(id, 1, 'action-started');
  }

  it('a step in flight found done is recorded already-done with why, and logged', async () => {
    const w = new World();
    w.nodes.get('n1')!.unschedulable = true;
    const p = only(cordonStep());
    inFlight(p, '2.01.cordon.n1');
    const logs: string[] = [];
    expect((await run(w, p, { resume: true }, logs)).status).toBe('completed');
    expect(journal.lastStates().get('2.01.cordon.n1')).toMatchObject({
      state: 'already-done',
      attempt: 2,
      detail: { reason: 're-observed: cordon done' },
    });
    expect(logs).toContain('  already-done: re-observed: cordon done');
    expect(journal.observations({ purpose: 'resume' }).map((o) => [o.ok, o.data])).toEqual([
      [true, { doneWhen: 'cordon done', checks: [] }],
    ]);
    expect(w.calls).toEqual([]);
  });

  it('a step in flight seen not done runs again from its gate, saying what was seen', async () => {
    const w = new World();
    const p = only(cordonStep());
    inFlight(p, '2.01.cordon.n1');
    const logs: string[] = [];
    expect((await run(w, p, { resume: true }, logs)).status).toBe('completed');
    expect(logs.filter((l) => l.startsWith('  resume: not done yet ('))).toHaveLength(1);
    expect(journal.observations({ purpose: 'resume' }).map((o) => o.ok)).toEqual([false]);
    expect(w.calls).toEqual(['setUnschedulable n1 true']);
  });

  it('a step in flight with nothing to observe: redone when the plan says so, else a stop, and nothing re-observed', async () => {
    const w = new World();
    const s = cordonStep();
    s.idempotencyCheck.doneWhen = {};
    inFlight(only(s), s.id);
    const logs: string[] = [];
    expect((await run(w, only(s), { resume: true }, logs)).status).toBe('completed');
    expect(logs.some((l) => l.startsWith('  resume:'))).toBe(false);
    expect(w.calls).toEqual(['setUnschedulable n1 true']);

    journal.close();
    journal = Journal.open(join(dir, 'stop.journal.sqlite'));
    const t = cordonStep();
    t.idempotencyCheck = { ...t.idempotencyCheck, doneWhen: {}, ifNotDone: 'stop' };
    inFlight(only(t), t.id);
    const r = await run(new World(), only(t), { resume: true });
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toContain('ferry has no way to observe whether it took effect');
    expect(journal.observations({ purpose: 'resume' })).toEqual([]);
  });

  it('a resumed run with every step finished completes without asking the interrupt', async () => {
    const p = only(cordonStep());
    beginRun(journal, p);
    journal.transition('2.01.cordon.n1', 1, 'started');
    journal.transition('2.01.cordon.n1', 1, 'done');
    const r = await run(new World(), p, { resume: true }, [], { interrupt: () => 'the Lease was lost' });
    expect(r).toMatchObject({ status: 'completed', steps: [] });
  });
});

describe('waiting', () => {
  it('without --poll a gate looks once a second', async () => {
    const w = new World();
    w.members[2]!.isLearner = true;
    let looks = 0;
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      looks++;
      return observe();
    };
    const s = cordonStep();
    s.expect = voters3();
    const r = await run(w, only(s), { pollMs: undefined, gateGraceSeconds: 0.9 });
    expect(r.status).toBe('stopped');
    expect(looks).toBeGreaterThanOrEqual(2);
    expect(looks).toBeLessThanOrEqual(3);
  });

  it('without --gate-grace a gate waits longer than a moment for its state (default 30 s)', async () => {
    const w = new World();
    w.members[2]!.isLearner = true;
    setTimeout(() => {
      w.members[2]!.isLearner = false;
    }, 300);
    const s = cordonStep();
    s.expect = voters3();
    const r = await run(w, only(s), { gateGraceSeconds: undefined });
    expect(r.error?.message).toBeUndefined();
    expect(r.status).toBe('completed');
  });

  it("the cluster's signals are read again within the grace: one that clears lets the step go on", async () => {
    let reads = 0;
    const flaky: HealthSignal = {
      name: 'probe shop',
      read: async () => (++reads <= 2 ? { kind: 'firing', items: ['5xx'] } : { kind: 'clear' }),
    };
    const r = await run(new World(), only(cordonStep()), {}, [], { signals: [flaky] });
    expect(r.status).toBe('completed');
    expect(journal.observations({ purpose: 'signal' })).toHaveLength(2);

    journal.close();
    journal = Journal.open(join(dir, 'firing.journal.sqlite'));
    const firing: HealthSignal = {
      name: 'probe shop',
      read: async () => ({ kind: 'firing', items: ['5xx'] }),
    };
    const t0 = Date.now();
    const stopped = await run(new World(), only(cordonStep()), { gateGraceSeconds: 0.5 }, [], {
      signals: [firing],
    });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(stopped.error?.message).toContain("the cluster's own signals do not hold before 2.01.cordon.n1");
    // Read every poll (20 ms) over the grace (0.5 s), not once.
    expect(journal.observations({ purpose: 'signal' }).length).toBeGreaterThan(5);
  });

  it('--accept-unobserved lets an unreadable check pass, journaled and logged once per step', async () => {
    const w = new World();
    let looks = 0;
    w.kube.getNode = async () => {
      throw new Error('403 Forbidden');
    };
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      w.members[2]!.isLearner = ++looks < 4; // the gate looks a few times
      return observe();
    };
    const s = step(
      { id: '2.01.manual.n1', kind: 'manual', params: {} as never },
      {
        ...voters3(),
        nodes: [{ node: n1, exists: true }],
      },
      {},
      {},
    );
    s.action.performer = 'operator';
    const logs: string[] = [];
    const r = await run(w, only(s), { acceptUnobserved: [{ section: 'nodes', raw: 'nodes' }] }, logs);
    expect(r.error?.message).toBeUndefined();
    expect(looks).toBeGreaterThanOrEqual(4);
    const notes = journal
      .observations({ stepId: s.id, purpose: 'note' })
      .filter((o) => (o.data as { acceptedUnobserved?: string }).acceptedUnobserved);
    expect(notes.map((o) => [o.ok, o.data])).toEqual([
      [
        null,
        {
          acceptedUnobserved: 'nodes',
          check: 'nodes:n1',
          expected: expect.any(String),
          seen: expect.stringContaining('403 Forbidden'),
        },
      ],
    ]);
    expect(
      logs.filter((l) => l.startsWith('  passed unobserved (--accept-unobserved nodes): nodes n1: ')),
    ).toHaveLength(1);

    // Without it the same check stops the gate.
    journal.close();
    journal = Journal.open(join(dir, 'refused.journal.sqlite'));
    const w2 = new World();
    w2.kube.getNode = w.kube.getNode;
    const refused = await run(w2, only({ ...s, expect: { nodes: [{ node: n1, exists: true }] } }), {
      gateGraceSeconds: 0.2,
    });
    expect(refused.status).toBe('stopped');
    expect(refused.error?.message).toContain('403 Forbidden');
  });

  it('steps side by side ask their questions one at a time, each asked', async () => {
    const w = new World();
    workers(w);
    let open = 0;
    let most = 0;
    const asked: string[] = [];
    w.operator = {
      instruct: () => {},
      ask: async (id, q) => {
        asked.push(`${id}: ${q}`);
        most = Math.max(most, ++open);
        await new Promise((r) => setTimeout(r, 30));
        open--;
        return true;
      },
    };
    const cordons = ws.map((n, i) =>
      cordonOf(n, i, {
        expect: { nodes: [{ node: n, exists: true }], operator: { confirms: `is ${n.name} empty?` } },
      }),
    );
    expect((await run(w, workerPlan(cordons))).status).toBe('completed');
    expect(most).toBe(1);
    expect(asked.sort()).toEqual(ws.map((n, i) => `3.0${i + 1}.cordon.${n.name}: is ${n.name} empty?`));
  });

  it('a verification ferry cannot see is asked of a person, and a yes completes it', async () => {
    const w = new World();
    const asked: string[] = [];
    w.operator = {
      instruct: () => {},
      ask: async (_id, q) => {
        asked.push(q);
        return true;
      },
    };
    const s = cordonStep();
    s.verify.expect = { operator: { confirms: 'did the pager stay quiet?' } };
    s.idempotencyCheck.doneWhen = {};
    const r = await run(w, only(s));
    expect(r.error?.message).toBeUndefined();
    expect(asked).toEqual(['did the pager stay quiet?']);
    expect(journal.observations({ stepId: s.id, purpose: 'verify' }).at(-1)?.ok).toBe(true);
  });
});

describe('what reaches the ports', () => {
  it("an action gets the step's id, this run's timeout for it and the run's signal", async () => {
    const w = new World();
    let got: ActionContext | undefined;
    w.provisioner.decommission = async (req, ctx) => {
      got = ctx;
      w.machines.set(req.node, 'decommissioned');
    };
    const ctl = new AbortController();
    const decom = plan().phases[0]!.steps[4]!;
    decom.expect = {};
    const r = await run(w, only(decom), { timeouts: { decommission: 7 } }, [], { signal: ctl.signal });
    expect(r.status).toBe('completed');
    expect(got).toMatchObject({ stepId: decom.id, timeoutMs: 7000 });
    expect(got?.signal.aborted).toBe(false);
    ctl.abort(new Error('SIGTERM'));
    expect(got?.signal.aborted).toBe(true); // the run's own signal follows the caller's
  });

  it('with --silence-expected, the alerts a step raises are silenced while it runs and ended when it fails', async () => {
    const w = new World();
    const made: string[] = [];
    const ended: string[] = [];
    const silencer: Silencer = {
      name: 'am',
      silence: async (_m, until) => {
        made.push(until.toISOString());
        return `s${made.length}`;
      },
      expire: async (id) => void ended.push(id),
    };
    w.provisioner.decommission = async () => {
      expect(ended).toEqual([]); // silenced while the action runs
      throw new Error('BMC does not answer');
    };
    const decom = plan().phases[0]!.steps[4]!;
    decom.expect = {};
    const t0 = Date.now();
    const r = await run(w, only(decom), { timeouts: { decommission: 100 } }, [], { silencer });
    expect(r.status).toBe('stopped');
    expect(made.length).toBeGreaterThan(0);
    expect(ended).toEqual(made.map((_, i) => `s${i + 1}`));
    // Until a minute past the step's timeout in this run.
    const until = Date.parse(made[0]!) - t0;
    expect(until).toBeGreaterThanOrEqual(160_000 - 1000);
    expect(until).toBeLessThanOrEqual(160_000 + 5000);

    // A kind that raises no alert by design makes no silence.
    made.length = 0;
    expect((await run(new World(), only(cordonStep()), {}, [], { silencer })).status).toBe('completed');
    expect(made).toEqual([]);
  });

  it('the etcd probe: an etcd that does not answer at the start does not stop the run; no healthy voter, no endpoints set', async () => {
    const w = new World();
    w.failObserve = 1;
    const set: string[][] = [];
    const probe: EtcdProbeControl = { setEndpoints: async (urls) => void set.push(urls) };
    expect((await run(w, only(cordonStep()), {}, [], { etcdProbe: probe })).status).toBe('completed');
    expect(set).toEqual([]);

    const healthy = new World();
    const seen: string[][] = [];
    const probe2: EtcdProbeControl = { setEndpoints: async (urls) => void seen.push(urls) };
    expect((await run(healthy, only(cordonStep()), {}, [], { etcdProbe: probe2 })).status).toBe('completed');
    expect(seen).toEqual([healthy.members.map((m) => m.clientURLs[0]!)]);

    const sick = new World();
    for (const m of sick.members) sick.unhealthy.add(m.id);
    const none: string[][] = [];
    const probe3: EtcdProbeControl = { setEndpoints: async (urls) => void none.push(urls) };
    expect((await run(sick, only(cordonStep()), {}, [], { etcdProbe: probe3 })).status).toBe('completed');
    expect(none).toEqual([]);
  });

  it('without an etcd probe the run does not read etcd for steps that do not look at it', async () => {
    const w = new World();
    let looks = 0;
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      looks++;
      return observe();
    };
    expect((await run(w, only(cordonStep()))).status).toBe('completed');
    expect(looks).toBe(0);
  });

  it("files a gate expects are looked up in the plan's directory", async () => {
    const s = cordonStep();
    s.expect = {
      files: [{ path: 'kit/ready', where: { kind: 'workstation' }, exists: true }],
    } as ExpectedState;
    const r = await run(new World(), only(s), { gateGraceSeconds: 0.2 });
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toContain('kit/ready');

    journal.close();
    journal = Journal.open(join(dir, 'files.journal.sqlite'));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'kit'));
    await writeFile(join(dir, 'kit', 'ready'), '');
    expect((await run(new World(), only(s))).status).toBe('completed');
  });
});

describe('what a step sees and what it runs through', () => {
  it('a step that only observes (a gate) runs its gate even when its done-check already holds', async () => {
    const gate = step(
      { id: '2.00.gate.n1', kind: 'gate', params: { reason: 'test', stableSeconds: 0 } },
      voters3(),
      {},
      voters3(),
    );
    const r = await run(new World(), only(gate));
    expect(r.status).toBe('completed');
    expect(journal.lastStates().get(gate.id)?.state).toBe('done');
    expect(journal.observations({ stepId: gate.id, purpose: 'gate' }).map((o) => o.ok)).toEqual([true]);
  });

  it('a gate on the audit sees the blockers the plan recorded', async () => {
    const s = cordonStep();
    s.expect = { audit: { maxBlockers: 0, acceptedBlockers: [] } };
    const blocked = only(s);
    blocked.audit.blockers = [
      {
        ruleId: 'r',
        severity: 'blocker',
        title: 'old etcd',
        fingerprint: 'f1',
        subject: 'n1',
        remediation: '',
      },
    ] as never;
    const r = await run(new World(), blocked, { gateGraceSeconds: 0.2 });
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toContain('preflight audit');

    journal.close();
    journal = Journal.open(join(dir, 'clean.journal.sqlite'));
    expect((await run(new World(), only(s))).status).toBe('completed');
  });

  it('the names a run learned (journaled bindings) are known to the next run', async () => {
    const talos: TalosNodeRef = { kind: 'talos', replaces: 'n9', name: null, address: null };
    const s = step(
      { id: '2.01.cordon.n9', kind: 'cordon', params: { node: talos }, target: { node: talos } },
      {},
      {},
      {},
    );
    beginRun(journal, only(s));
    journal.observe(null, 'binding', true, { replaces: 'n9', name: 'n1', address: '10.0.0.1' });
    const w = new World();
    expect((await run(w, only(s), { resume: true })).status).toBe('completed');
    expect(w.calls).toEqual(['setUnschedulable n1 true']);
  });

  it("an operator step's handler prints its commands for a person", async () => {
    const w = new World();
    const instructed: string[] = [];
    w.operator = {
      instruct: (id, lines) => void instructed.push(`${id}: ${lines.join(' | ')}`),
      ask: async () => true,
    };
    const s = step({ id: '2.01.manual.n1', kind: 'manual', params: {} as never }, {}, {}, {});
    expect((await run(w, only(s))).status).toBe('completed');
    expect(instructed).toEqual(['2.01.manual.n1: manual']);
    expect(journal.transitions(s.id).find((t) => t.state === 'action-done')?.detail).toEqual({
      performedBy: 'operator',
    });
  });

  it("the run's signal aborted while the cluster's signals are read again: the step stops as interrupted, soon", async () => {
    const firing: HealthSignal = {
      name: 'probe shop',
      read: async () => ({ kind: 'firing', items: ['5xx'] }),
    };
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('SIGTERM')), 100);
    const t0 = Date.now();
    const r = await run(new World(), only(cordonStep()), { gateGraceSeconds: 20, pollMs: 2000 }, [], {
      signals: [firing],
      signal: ctl.signal,
    });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(r.error?.message).toBe('2.01.cordon.n1 was interrupted');
  });
});
