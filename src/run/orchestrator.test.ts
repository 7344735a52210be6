import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeadmNodeRef } from '../plan/expected-state.js';
import type { Plan, Step } from '../plan/model.js';
import type { EtcdProbeControl } from '../ports/run.js';
import { Journal } from './journal.js';
import type { Orchestrator, RunOptions } from './orchestrator.js';
import {
  beginRun,
  m1,
  m2,
  n1,
  plan,
  step,
  voters3,
  World,
  worldOrchestrator,
} from './testing-orchestrator.js';

// The orchestrator against an in-memory world: gates, the shortcut for effects already there,
// cordon restore, and what a resumed run does with the step that was in flight.

let dir: string;
let journal: Journal;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-orch-'));
  await writeFile(join(dir, 'plan.json'), '{}');
  journal = Journal.open(join(dir, 'plan.journal.sqlite'));
});
afterEach(async () => {
  journal.close();
  await rm(dir, { recursive: true, force: true });
});

function orchestrator(
  w: World,
  p: Plan,
  options: RunOptions = {},
  logs: string[] = [],
  etcdProbe?: EtcdProbeControl,
): Orchestrator {
  return worldOrchestrator(w, p, { journal, planFile: join(dir, 'plan.json') }, options, logs, {
    ...(etcdProbe && { etcdProbe }),
  });
}

function begin(p: Plan): void {
  beginRun(journal, p);
}

describe('Orchestrator', () => {
  it('runs the steps in order through the ports; moves leadership only because the member leads', async () => {
    const w = new World();
    const p = plan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.status).toBe('completed');
    expect(w.calls).toEqual([
      'setUnschedulable n1 true',
      'evict app/web-1',
      `moveLeader ${m2.id}`,
      `removeMember ${m1.id}`,
      'decommission n1',
    ]);
    expect(journal.transitions('2.04.etcd-remove-member.n1').map((t) => t.state)).toEqual([
      'started',
      'gate-passed',
      'action-started',
      'action-done',
      'done',
    ]);
    expect(journal.runEnds().at(-1)?.state).toBe('completed');
  });

  it('keeps the etcd probe on the leader through the leadership move, and off a member before its removal', async () => {
    const w = new World();
    const p = plan();
    begin(p);
    const [u1, u2, u3] = w.members.map((m) => m.clientURLs[0]!);
    const probe: EtcdProbeControl = {
      setEndpoints: async (urls) => void w.calls.push(`probe ${urls.join(' ')}`),
    };
    const r = await orchestrator(w, p, {}, [], probe).run();
    expect(r.status).toBe('completed');
    expect(w.calls.filter((c) => /^(probe|moveLeader|removeMember)/.test(c))).toEqual([
      `probe ${u1} ${u2} ${u3}`, // the run starts on the leader (n1)
      `probe ${u1} ${u2} ${u3}`, // still on the leader while it hands over: refused, never dropped
      `moveLeader ${m2.id}`,
      `probe ${u2} ${u3}`, // the new leader; the old one is about to go
      `probe ${u2} ${u3}`, // before the removal
      `removeMember ${m1.id}`,
      `probe ${u2} ${u3}`,
    ]);
  });

  it('skips the leadership move when the member does not lead, and notes why', async () => {
    const w = new World();
    w.leader = m2.id;
    const p = plan();
    begin(p);
    expect((await orchestrator(w, p).run()).status).toBe('completed');
    expect(w.calls).not.toContain(`moveLeader ${m2.id}`);
    expect(journal.lastStates().get('2.03.etcd-move-leader.n1')?.state).toBe('skipped');
    expect(journal.observations({ purpose: 'condition' })[0]?.data).toMatchObject({ leads: false });
  });

  it('does not act when the effect is already there (a node cordoned by hand), and keeps that cordon on a stop', async () => {
    const w = new World();
    w.nodes.get('n1')!.unschedulable = true;
    w.drainFails = true;
    const p = plan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.status).toBe('stopped');
    expect(journal.lastStates().get('2.01.cordon.n1')?.state).toBe('already-done');
    // No cordon call, no uncordon either: it was cordoned before. Only (refused) evictions.
    expect(w.calls.length).toBeGreaterThan(0);
    expect(new Set(w.calls)).toEqual(new Set(['evict app/web-1']));
    expect(w.nodes.get('n1')!.unschedulable).toBe(true);
  });

  it('a step whose effect appears while its gate waits (the lab put the node behind the LB) is already done when the gate stops', async () => {
    for (const appears of [true, false]) {
      const w = new World();
      w.members[2]!.isLearner = true; // the cordon's gate below never holds
      const observe = w.etcd.observe;
      w.etcd.observe = async () => {
        if (appears) w.nodes.get('n1')!.unschedulable = true; // cordoned meanwhile, by someone else
        return observe();
      };
      const p = plan();
      p.phases[0]!.steps[0]!.expect = voters3();
      journal.close();
      journal = Journal.open(join(dir, `plan-${appears}.journal.sqlite`));
      begin(p);
      const logs: string[] = [];
      const r = await orchestrator(w, p, {}, logs).run();
      expect(r.status).toBe('stopped');
      expect(w.calls).not.toContain('setUnschedulable n1 true');
      if (appears) {
        expect(journal.lastStates().get('2.01.cordon.n1')?.state).toBe('already-done');
        expect(logs).toContain('  already done: cordon done');
        expect(r.stoppedAt).toBe('2.03.etcd-move-leader.n1'); // the drain ran; the next gate stops
      } else {
        expect(journal.lastStates().get('2.01.cordon.n1')?.state).toBe('stopped');
        expect(r.stoppedAt).toBe('2.01.cordon.n1');
        expect(r.error?.message).toContain('etcd learners: expected 0, saw 1');
      }
    }
  });

  it('an aborted gate wait is a stop, not already done, even when the effect is there by then', async () => {
    const w = new World();
    w.members[2]!.isLearner = true;
    const ctl = new AbortController();
    const observe = w.etcd.observe;
    w.etcd.observe = async () => {
      w.nodes.get('n1')!.unschedulable = true;
      ctl.abort(new Error('SIGTERM'));
      return observe();
    };
    const p = plan();
    p.phases[0]!.steps[0]!.expect = voters3();
    begin(p);
    const at = { journal, planFile: join(dir, 'plan.json') };
    const r = await worldOrchestrator(w, p, at, { gateGraceSeconds: 5 }, [], { signal: ctl.signal }).run();
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('2.01.cordon.n1');
    expect(journal.lastStates().get('2.01.cordon.n1')?.state).not.toBe('already-done');
  });

  it('a gate mismatch stops the run (exit 3) with what was expected and seen, and acts no further', async () => {
    const w = new World();
    w.members[2]!.isLearner = true; // a leftover learner: 2 voters + 1 learner, not 3 voters
    const p = plan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('2.03.etcd-move-leader.n1');
    expect(r.error?.exitCode).toBe(3);
    expect(r.error?.message).toContain('etcd voters: expected 3, saw 2');
    expect(r.error?.message).toContain('etcd learners: expected 0, saw 1');
    expect(r.error?.remediation).toContain('etcdctl member list');
    expect(w.calls).not.toContain(`removeMember ${m1.id}`);
  });

  it('restores the cordon it set when a drain stops, and a resumed run cordons and drains again', async () => {
    const w = new World();
    w.drainFails = true;
    const p = plan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.stoppedAt).toBe('2.02.drain.n1');
    expect(r.error?.message).toContain('blocked by PodDisruptionBudget app/web');
    expect(w.nodes.get('n1')!.unschedulable).toBe(false);
    expect(journal.observations({ purpose: 'cordon-restored' })).toHaveLength(1);

    w.drainFails = false;
    w.calls = [];
    begin(p);
    const logs: string[] = [];
    expect((await orchestrator(w, p, { resume: true }, logs).run()).status).toBe('completed');
    expect(w.calls.slice(0, 2)).toEqual(['setUnschedulable n1 true', 'evict app/web-1']);
    expect(logs.join('\n')).toContain('resume: 2.01.cordon.n1 runs again');
    expect(journal.actionCount('2.04.etcd-remove-member.n1')).toBe(1);
  });

  it('a batch: a stop after its drain-batch gives the cordon back; a resumed run cordons and drains the batch again', async () => {
    const w = new World();
    w.members[2]!.isLearner = true; // the step after the drain stops at its gate
    const base = plan().phases[0]!.steps;
    const batch = step(
      {
        id: '2.02.drain-batch.n1',
        kind: 'drain-batch',
        params: {
          nodes: [{ node: n1, pdbs: [], pods: 1 }],
          evictionOnly: true,
          ignoreDaemonSets: true,
          deleteEmptyDirData: true,
        },
      },
      { nodes: [{ node: n1, exists: true, cordoned: true }] },
      { nodes: [{ node: n1, exists: true, cordoned: true, drained: true }] },
    );
    const p = {
      ...plan(),
      phases: [{ id: 2, name: 'control-planes', title: '', summary: '', steps: [base[0]!, batch, base[2]!] }],
    } as Plan;
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.stoppedAt).toBe('2.03.etcd-move-leader.n1');
    expect(w.nodes.get('n1')!.unschedulable).toBe(false);
    expect(journal.observations({ purpose: 'cordon-restored' })).toHaveLength(1);
    expect(
      journal
        .observations({ stepId: batch.id, purpose: 'drain-progress' })
        .map((o) => (o.data as { kind: string }).kind),
    ).toContain('evicted');

    w.members[2]!.isLearner = false;
    w.pods.set('n1', ['app/web-2']); // the uncordoned node took a pod meanwhile
    w.calls = [];
    begin(p);
    const logs: string[] = [];
    expect((await orchestrator(w, p, { resume: true }, logs).run()).status).toBe('completed');
    expect(logs.join('\n')).toContain('resume: 2.02.drain-batch.n1 runs again');
    expect(w.calls.slice(0, 3)).toEqual([
      'setUnschedulable n1 true',
      'setUnschedulable n1 true',
      'evict app/web-2',
    ]);
  });

  it('--surge-replicas: a stop gives the workload its replica count back; a resumed run scales it up again', async () => {
    const w = new World();
    w.drainFails = true;
    const checkout = { kind: 'Deployment' as const, namespace: 'shop', name: 'checkout' };
    const scale = (id: string, purpose: 'surge' | 'restore', replicas: number) =>
      step(
        {
          id,
          kind: 'scale-workload',
          target: {},
          params: { workload: checkout, replicas, from: 2, purpose, pdb: 'shop/checkout' },
        },
        {},
        {},
      );
    const base = plan().phases[0]!.steps;
    const steps = [
      scale('2.01.scale-workload.n1', 'surge', 3),
      step(
        {
          id: '2.02.wait-workload-ready.n1',
          kind: 'wait-workload-ready',
          target: {},
          params: { workload: checkout, readyReplicas: 3 },
        },
        {},
        {},
      ),
      { ...base[0]!, id: '2.03.cordon.n1', index: 3 },
      { ...base[1]!, id: '2.04.drain.n1', index: 4 },
      scale('2.05.scale-workload.n1', 'restore', 2),
    ] as Step[];
    const p = {
      ...plan(),
      phases: [{ id: 2, name: 'control-planes', title: '', summary: '', steps }],
    } as Plan;
    begin(p);
    const logs: string[] = [];
    const r = await orchestrator(w, p, {}, logs).run();
    expect(r.stoppedAt).toBe('2.04.drain.n1');
    expect(w.calls.filter((c) => c.startsWith('scale'))).toEqual([
      'scale Deployment shop/checkout 3',
      'scale Deployment shop/checkout 2',
    ]);
    expect(w.replicas).toBe(2);
    expect(journal.observations({ purpose: 'replicas-restored' }).map((o) => o.data)).toEqual([
      { workload: 'Deployment shop/checkout', replicas: 2 },
    ]);
    expect(logs.join('\n')).toContain('restored: Deployment shop/checkout runs 2 replicas again');

    w.drainFails = false;
    w.calls = [];
    begin(p);
    const again: string[] = [];
    expect((await orchestrator(w, p, { resume: true }, again).run()).status).toBe('completed');
    expect(again.join('\n')).toContain('resume: 2.01.scale-workload.n1 runs again');
    expect(again.join('\n')).toContain('resume: 2.02.wait-workload-ready.n1 runs again');
    expect(w.calls.filter((c) => c.startsWith('scale'))).toEqual([
      'scale Deployment shop/checkout 3',
      'scale Deployment shop/checkout 2',
    ]);
    expect(w.replicas).toBe(2);
  });

  it('on resume, a removal whose action started is re-observed: already gone → recorded done, never sent again', async () => {
    const w = new World();
    const p = plan();
    begin(p);
    for (const id of ['2.01.cordon.n1', '2.02.drain.n1', '2.03.etcd-move-leader.n1']) {
      journal.transition(id, 1, 'started');
      journal.transition(id, 1, 'done');
    }
    journal.transition('2.04.etcd-remove-member.n1', 1, 'started');
    journal.transition('2.04.etcd-remove-member.n1', 1, 'gate-passed');
    journal.transition('2.04.etcd-remove-member.n1', 1, 'action-started');
    // ...the process died here, after etcd applied the removal.
    w.members = w.members.filter((m) => m.id !== m1.id);
    w.leader = m2.id;
    begin(p);
    const r = await orchestrator(w, p, { resume: true }).run();
    expect(r.status).toBe('completed');
    expect(w.calls).toEqual(['decommission n1']);
    expect(journal.lastStates().get('2.04.etcd-remove-member.n1')).toMatchObject({
      state: 'already-done',
      attempt: 2,
    });
    expect(journal.actionCount('2.04.etcd-remove-member.n1')).toBe(1);
    expect(journal.observations({ purpose: 'resume' })[0]).toMatchObject({ ok: true });
  });

  it('on resume, a destructive step that cannot be told done stops; --mark-done or --retry settles it', async () => {
    const w = new World();
    const p = plan();
    const crash = () => {
      begin(p);
      for (const s of p.phases[0]!.steps.slice(0, 4)) {
        journal.transition(s.id, 1, 'started');
        journal.transition(s.id, 1, 'done');
      }
      journal.transition('2.05.decommission.n1', 1, 'started');
      journal.transition('2.05.decommission.n1', 1, 'action-started');
    };
    w.members = w.members.filter((m) => m.id !== m1.id);
    w.machines.set('n1', undefined); // the provisioner cannot tell
    crash();
    begin(p);
    const r = await orchestrator(w, p, { resume: true }).run();
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toContain('was in flight when the last run ended');
    expect(r.error?.remediation).toContain('--mark-done 2.05.decommission.n1');
    expect(w.calls).toEqual([]);

    begin(p);
    expect((await orchestrator(w, p, { resume: true, retry: ['2.05.decommission.n1'] }).run()).status).toBe(
      'completed',
    );
    expect(w.calls).toEqual(['decommission n1']);
  });

  it('--mark-done records a step the operator checked by hand without acting', async () => {
    const w = new World();
    const p = plan();
    begin(p);
    for (const s of p.phases[0]!.steps.slice(0, 4)) {
      journal.transition(s.id, 1, 'started');
      journal.transition(s.id, 1, 'done');
    }
    journal.transition('2.05.decommission.n1', 1, 'started');
    journal.transition('2.05.decommission.n1', 1, 'action-started');
    w.members = w.members.filter((m) => m.id !== m1.id);
    w.machines.set('n1', undefined);
    begin(p);
    const r = await orchestrator(w, p, { resume: true, markDone: ['2.05.decommission.n1'] }).run();
    expect(r.status).toBe('completed');
    expect(w.calls).toEqual([]);
    expect(journal.lastStates().get('2.05.decommission.n1')?.detail).toMatchObject({
      reason: 'the operator marked it done',
    });
  });

  it('on resume, a destructive step is repeated only when the world shows it did not happen: an unreadable etcd is no proof', async () => {
    const w = new World();
    const p = plan();
    const removal = p.phases[0]!.steps[3]!;
    expect(removal).toMatchObject({ destructive: true, idempotencyCheck: { ifNotDone: 'redo' } });
    begin(p);
    for (const s of p.phases[0]!.steps.slice(0, 3)) {
      journal.transition(s.id, 1, 'started');
      journal.transition(s.id, 1, 'done');
    }
    journal.transition(removal.id, 1, 'started');
    journal.transition(removal.id, 1, 'action-started');
    w.leader = m2.id;
    w.failObserve = 1; // the look that would tell whether the removal happened fails
    begin(p);
    const r = await orchestrator(w, p, { resume: true }).run();
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe(removal.id);
    expect(r.error?.message).toContain('cannot tell whether it took effect');
    expect(r.error?.message).toContain('etcd cannot be read: context deadline exceeded');
    expect(w.calls).toEqual([]);

    // Seen clearly not done (the member is still listed): the removal runs again.
    begin(p);
    expect((await orchestrator(w, p, { resume: true }).run()).status).toBe('completed');
    expect(w.calls).toEqual([`removeMember ${m1.id}`, 'decommission n1']);
  });

  describe('leadership moves only to a started, healthy, caught-up voter', () => {
    const m3 = { ...m2, name: 'n3', id: '3', clientURL: 'https://10.0.0.3:2379' };
    function movePlan(): Plan {
      const p = plan();
      const move = step(
        {
          id: '2.01.etcd-move-leader.n1',
          kind: 'etcd-move-leader',
          params: { from: m1, to: [m2, m3], leaderAtSnapshot: true },
        },
        {},
        {},
      );
      p.phases[0]!.steps = [move];
      return p;
    }

    it.each([
      [
        'a learner',
        (w: World) => {
          w.members[1]!.isLearner = true;
        },
      ],
      ['unhealthy', (w: World) => void w.unhealthy.add(m2.id)],
      ['far behind the leader', (w: World) => void w.applied.set(m2.id, 8_000)],
    ])('skips a first candidate that is %s and moves to the next', async (_what, spoil) => {
      const w = new World();
      spoil(w);
      const p = movePlan();
      begin(p);
      expect((await orchestrator(w, p).run()).status).toBe('completed');
      expect(w.calls).toEqual([`moveLeader ${m3.id}`]);
    });

    it('stops when no candidate qualifies, and moves nothing', async () => {
      const w = new World();
      w.members[1]!.isLearner = true;
      w.unhealthy.add(m3.id);
      const p = movePlan();
      begin(p);
      const r = await orchestrator(w, p).run();
      expect(r.status).toBe('stopped');
      expect(r.error?.message).toContain('no caught-up, healthy voter to move etcd leadership to');
      expect(w.calls).toEqual([]);
    });
  });
});

describe('a worker batch side by side', () => {
  const ws: KubeadmNodeRef[] = [1, 2, 3].map((i) => ({
    kind: 'kubeadm',
    name: `w${i}`,
    address: `10.0.1.${i}`,
  }));

  /** Phase 3, batch 1: cordon w1..w3, then decommission w1..w3 (each decommission takes 200 ms). */
  function batchPlan(): Plan {
    const cordons = ws.map((n, i) =>
      step(
        {
          id: `3.0${i + 1}.cordon.${n.name}`,
          kind: 'cordon',
          subject: n.name,
          batch: 1,
          params: { node: n },
          target: { node: n },
        },
        { nodes: [{ node: n, exists: true }] },
        { nodes: [{ node: n, exists: true, cordoned: true }] },
      ),
    );
    const decommissions = ws.map((n, i) => {
      const d = step(
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
      // As the plan's decommission: redone on resume when the machine is seen still running.
      return d;
    });
    return {
      ...plan(),
      phases: [{ id: 3, name: 'workers', title: '', summary: '', steps: [...cordons, ...decommissions] }],
    } as Plan;
  }

  function batchWorld(
    failOn?: string,
  ): World & { spans: Map<string, [number, number]>; maxInFlight: number } {
    const w = new World() as World & { spans: Map<string, [number, number]>; maxInFlight: number };
    w.spans = new Map();
    w.maxInFlight = 0;
    let inFlight = 0;
    for (const n of ws) {
      w.nodes.set(n.name, { ...w.nodes.get('n1')!, name: n.name, addresses: [n.address!] });
      w.machines.set(n.name, 'running');
    }
    w.provisioner.decommission = async (req) => {
      const from = Date.now();
      inFlight++;
      w.maxInFlight = Math.max(w.maxInFlight, inFlight);
      await new Promise((r) => setTimeout(r, 200));
      inFlight--;
      w.spans.set(req.node, [from, Date.now()]);
      if (req.node === failOn) throw new Error(`BMC of ${req.node} does not answer`);
      w.machines.set(req.node, 'decommissioned');
    };
    return w;
  }

  it("runs a batch's decommissions at once, each journaled as its own step", async () => {
    const w = batchWorld();
    const p = batchPlan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.status).toBe('completed');
    expect(w.maxInFlight).toBe(3);
    const spans = [...w.spans.values()];
    // All three overlap: the last one started before the first one ended.
    expect(Math.max(...spans.map((x) => x[0]))).toBeLessThan(Math.min(...spans.map((x) => x[1])));
    const done = journal
      .transitions()
      .filter((t) => t.state === 'done')
      .map((t) => t.stepId);
    expect(done.filter((id) => id.includes('decommission')).sort()).toEqual([
      '3.04.decommission.w1',
      '3.05.decommission.w2',
      '3.06.decommission.w3',
    ]);
    for (const n of ws) expect(w.nodes.get(n.name)!.unschedulable).toBe(true);
  });

  it('a decommission that fails stops the run once the others have ended: only its node gets its cordon back, and a resumed run redoes only it', async () => {
    const w = batchWorld('w2');
    const p = batchPlan();
    begin(p);
    const r = await orchestrator(w, p).run();
    expect(r.status).toBe('stopped');
    expect(r.stoppedAt).toBe('3.05.decommission.w2');
    expect(r.error?.message).toContain('BMC of w2 does not answer');
    expect(w.machines.get('w1')).toBe('decommissioned');
    expect(w.machines.get('w3')).toBe('decommissioned');
    // w1 and w3 passed the point of no return: cordoned for good; w2's machine still runs.
    expect(ws.map((n) => w.nodes.get(n.name)!.unschedulable)).toEqual([true, false, true]);
    expect(
      journal.observations({ purpose: 'cordon-restored' }).map((o) => (o.data as { node: string }).node),
    ).toEqual(['w2']);

    // The cause is fixed; the resumed run cordons w2 again and decommissions only it.
    w.provisioner.decommission = async (req) => {
      w.calls.push(`decommission ${req.node}`);
      w.machines.set(req.node, 'decommissioned');
    };
    w.calls = [];
    begin(p);
    const logs: string[] = [];
    const again = await orchestrator(w, p, { resume: true }, logs).run();
    expect(again.status, again.error?.message).toBe('completed');
    expect(w.calls).toEqual(['setUnschedulable w2 true', 'decommission w2']);
  });
});
