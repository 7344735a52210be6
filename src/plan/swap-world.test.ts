/**
 * The control-plane swaps of the example plan walked through a model of the cluster, judged by the
 * run's own gate evaluator: each step's precondition holds when the step starts, its verification
 * holds once its effect is there, and a step that acts cannot be verified before it acted (else a
 * resume would take it for done, and its verification would prove nothing). Both strategies.
 */
import { describe, expect, it } from 'vitest';
import type { EtcdView, MachineState } from '../ports/run.js';
import { Bindings } from '../run/bindings.js';
import { describeChecks, evaluate, holds } from '../run/gates.js';
import { HANDLERS } from '../run/handlers/index.js';
import type { World } from '../run/observe.js';
import type { MemberRef, NodeRef } from './expected-state.js';
import { allSteps, type Plan, type Step, type Strategy } from './model.js';
import { examplePlan } from './testing-example.js';

interface Member {
  id: string;
  name: string;
  learner: boolean;
}

/** The cluster as the steps change it: what a real one does by itself (joins, promotions) included. */
class Model {
  members: Member[];
  leader: string;
  nodes = new Map<string, { ready: boolean; unschedulable: boolean; evictable: string[] }>();
  lb = new Map<string, boolean>();
  apiservers = new Map<string, boolean>();
  machines = new Map<string, MachineState>();
  files = new Map<string, boolean>();
  readonly bindings = new Bindings();
  readonly kubeadmIds: Set<string>;
  #nextId = 1000;

  constructor(readonly plan: Plan) {
    this.members = plan.controlPlanes.map((c) => ({
      id: c.member!.id,
      name: c.member!.name,
      learner: false,
    }));
    this.kubeadmIds = new Set(this.members.map((m) => m.id));
    const leader = plan.controlPlanes.find((c) => c.member?.name === 'cp-2') ?? plan.controlPlanes[0]!;
    this.leader = leader.member!.id;
    for (const c of plan.controlPlanes) {
      this.nodes.set(c.node, { ready: true, unschedulable: false, evictable: ['shop/frontend-1'] });
      this.lb.set(c.node, true);
      this.apiservers.set(c.node, true);
      this.machines.set(c.node, 'running');
    }
  }

  name(ref: NodeRef): string {
    const n = this.bindings.nodeName(ref);
    if (!n) throw new Error(`no name for ${JSON.stringify(ref)}`);
    return n;
  }

  #memberId(ref: MemberRef): string | undefined {
    if (ref.kind === 'kubeadm') return ref.id;
    return this.members.find((m) => m.name === (this.bindings.memberName(ref) ?? ''))?.id;
  }

  /** The effect of a step, or of what the cluster does by itself while a wait step waits. */
  apply(s: Step): void {
    switch (s.kind) {
      case 'provision': {
        const p = s.params;
        const name = p.node.name ?? `talos-${p.node.replaces}`;
        this.bindings.merge({
          replaces: p.node.replaces,
          name,
          address: p.node.address ?? `10.99.0.${this.#nextId % 100}`,
        });
        this.machines.set(name, 'provisioned');
        return;
      }
      case 'wait-member-joined': {
        const name = this.name(s.params.node);
        const id = String(this.#nextId++);
        this.members.push({ id, name, learner: true });
        this.bindings.merge({ replaces: s.params.node.replaces, memberId: id });
        return;
      }
      case 'wait-member-voter': {
        const m = this.members.find((x) => x.name === this.name(s.params.node));
        if (m) m.learner = false;
        return;
      }
      case 'wait-node-ready':
        this.nodes.set(this.name(s.params.node), { ready: true, unschedulable: false, evictable: [] });
        return;
      case 'lb-add':
        this.lb.set(this.name(s.params.node), true);
        this.apiservers.set(this.name(s.params.node), true);
        return;
      case 'lb-remove':
        this.lb.set(this.name(s.params.node), false);
        return;
      case 'cordon':
        this.nodes.get(this.name(s.params.node))!.unschedulable = true;
        return;
      case 'drain':
        this.nodes.get(this.name(s.params.node))!.evictable = [];
        return;
      case 'stop-apiserver':
        this.apiservers.set(this.name(s.params.node), false);
        return;
      case 'etcd-move-leader': {
        if (this.#memberId(s.params.from) !== this.leader) return;
        const to = s.params.to
          .map((r) => this.#memberId(r))
          .find((id) => this.members.some((m) => m.id === id && !m.learner));
        if (to) this.leader = to;
        return;
      }
      case 'etcd-remove-member': {
        const id = this.#memberId(s.params.member);
        this.members = this.members.filter((m) => m.id !== id);
        return;
      }
      case 'decommission': {
        const name = this.name(s.params.node);
        this.machines.set(name, 'decommissioned');
        this.lb.set(name, false);
        this.apiservers.set(name, false);
        const n = this.nodes.get(name);
        if (n) n.ready = false;
        return;
      }
      case 'delete-node':
        this.nodes.delete(this.name(s.params.node));
        return;
      case 'etcd-snapshot':
        this.files.set(s.params.file, true);
        return;
      case 'gate':
      case 'verify-membership':
        return;
      default:
        throw new Error(`the model has no effect for ${s.kind}`);
    }
  }

  world(): World {
    const etcd: EtcdView = {
      members: this.members.map((m) => ({
        id: m.id,
        name: m.name,
        peerURLs: [`https://${m.name}:2380`],
        clientURLs: [`https://${m.name}:2379`],
        isLearner: m.learner,
      })),
      statuses: this.members.map((m) => ({
        ok: true as const,
        memberId: m.id,
        endpoint: `https://${m.name}:2379`,
        leaderId: this.leader,
        raftTerm: '4',
        raftIndex: '5000',
        raftAppliedIndex: '5000',
        isLearner: m.learner,
        version: '3.5.16',
        errors: [],
      })),
      leaderId: this.leader,
      healthy: this.members.filter((m) => !m.learner).map((m) => m.id),
    };
    const ok = <T>(value: T) => ({ ok: true as const, value });
    const nodes: World['nodes'] = new Map();
    // Every node the plan names, the replacements not yet provisioned included (absent).
    const names = new Set([
      ...this.nodes.keys(),
      ...this.machines.keys(),
      ...this.plan.controlPlanes.flatMap((c) => (c.replacement.name ? [c.replacement.name] : [])),
    ]);
    for (const name of names) {
      const n = this.nodes.get(name);
      nodes.set(
        name,
        ok({
          node: n
            ? {
                name,
                ready: n.ready,
                unschedulable: n.unschedulable,
                labels: {},
                addresses: [],
                osImage: 'x',
              }
            : null,
          evictable: n?.evictable ?? [],
        }),
      );
    }
    const map = <T>(m: Map<string, T>, absent?: T) =>
      new Map([...names].map((k) => [k, ok(m.get(k) ?? absent)]));
    return {
      at: new Date(0).toISOString(),
      etcd: ok(etcd),
      nodes,
      loadBalancer: map(this.lb, false),
      apiservers: map(this.apiservers, false),
      machines: map(this.machines),
      endpoint: true,
      objects: new Map(),
      files: new Map(this.files),
      confirmed: new Set(),
      audit: { blockers: [] },
    };
  }

  judge(e: Step['expect']) {
    return evaluate(e, this.world(), { bindings: this.bindings, kubeadmIds: this.kubeadmIds });
  }
}

/**
 * Steps with an action of their own: the handlers' `act` kinds, but for etcd-move-leader, which
 * acts only while its member leads (else it is done before it starts).
 */
const acts = (s: Step) => HANDLERS[s.kind].mode === 'act' && s.kind !== 'etcd-move-leader';

describe.each(['surge', 'replace'] as Strategy[])(
  '%s: the control-plane swaps in a model cluster',
  (strategy) => {
    it('every precondition holds when its step starts, every verification once its effect is there', async () => {
      const plan = await examplePlan({ strategy });
      const model = new Model(plan);
      const steps = allSteps(plan).filter((s) => s.phase === 2 || s.phase === 4);
      expect(steps.length).toBeGreaterThan(30);
      const fail = (s: Step, what: string, checks: ReturnType<Model['judge']>) =>
        `${s.id} ${what}: ${describeChecks(checks, { includeUnknown: true }).join('; ')}`;
      let acted = 0;
      for (const s of steps) {
        const pre = model.judge(s.expect);
        expect(holds(pre), fail(s, 'precondition', pre)).toBe(true);
        if (acts(s)) {
          // Before the action its verification must fail: a step verified by nothing would be
          // taken for done on resume.
          const early = model.judge(s.verify.expect);
          expect(holds(early), `${s.id}: its verification already holds before it acted`).toBe(false);
          const done = model.judge(s.idempotencyCheck.doneWhen);
          expect(holds(done), `${s.id}: "already done" before it acted`).toBe(false);
          acted++;
        }
        model.apply(s);
        const post = model.judge(s.verify.expect);
        expect(holds(post), fail(s, 'verification', post)).toBe(true);
        const done = model.judge(s.idempotencyCheck.doneWhen);
        expect(holds(done), fail(s, 'already-done check', done)).toBe(true);
      }
      expect(acted).toBeGreaterThan(20);
      // The end: only Talos members, each a voter; no kubeadm Node, machine or backend left.
      expect(model.members.every((m) => m.name.startsWith('talos-') && !m.learner)).toBe(true);
      expect(model.members).toHaveLength(plan.controlPlanes.length);
      for (const c of plan.controlPlanes) {
        expect(model.nodes.has(c.node)).toBe(false);
        expect(model.machines.get(c.node)).toBe('decommissioned');
        expect(model.lb.get(c.node)).toBe(false);
      }
    });

    it('the gate before each swap stops when a member is unhealthy or the old node is not Ready (surge)', async () => {
      const plan = await examplePlan({ strategy });
      const model = new Model(plan);
      const gate = allSteps(plan).find((s) => s.kind === 'gate' && s.phase === 2)!;
      expect(holds(model.judge(gate.expect))).toBe(true);
      const other = plan.controlPlanes.find((c) => c.node !== gate.subject)!;
      model.members = model.members.map((m) => (m.name === other.member!.name ? { ...m, learner: true } : m));
      expect(holds(model.judge(gate.expect))).toBe(false);

      const fresh = new Model(plan);
      fresh.nodes.get(gate.subject)!.ready = false;
      expect(holds(fresh.judge(gate.expect))).toBe(strategy === 'replace');
    });

    it('leadership is moved off a member before it is removed, and the removal waits for it', async () => {
      const plan = await examplePlan({ strategy });
      const steps = allSteps(plan);
      for (const rm of steps.filter((s) => s.kind === 'etcd-remove-member')) {
        const model = new Model(plan);
        // The member to remove leads: the removal's precondition must not hold.
        const id = rm.params.member.kind === 'kubeadm' ? rm.params.member.id : undefined;
        if (!id) continue;
        for (const s of steps.slice(0, steps.indexOf(rm))) if (s.phase === 2 || s.phase === 4) model.apply(s);
        model.leader = id;
        expect(holds(model.judge(rm.expect)), `${rm.id} runs while its member leads`).toBe(false);
      }
    });
  },
);
