/**
 * The rules one control-plane swap of the example plan states, one by one: what each step requires
 * before it starts and checks after, what it names as its target, how it is undone, and what a
 * person is shown. swap-world.test.ts walks the same steps through a model cluster.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeadmMemberRef, KubeadmNodeRef, MemberRef } from './expected-state.js';
import { allSteps, type Plan, type Step, type StepKind, type StepOf, type Strategy } from './model.js';
import { examplePlan } from './testing-example.js';

const plans = new Map<Strategy, Plan>();
beforeAll(async () => {
  plans.set('surge', await examplePlan({ strategy: 'surge' }));
  plans.set('replace', await examplePlan({ strategy: 'replace' }));
});

/** The steps of the first swap (phase 2), by kind. */
function swapOf(strategy: Strategy) {
  const plan = plans.get(strategy)!;
  const first = plan.phases[2]!.steps[0]!.subject;
  const steps = allSteps(plan).filter((s) => s.phase === 2 && s.subject === first);
  const one = <K extends StepKind>(kind: K) => {
    const s = steps.find((x) => x.kind === kind);
    if (!s) throw new Error(`no ${kind} in the swap of ${first}`);
    return s as StepOf<K>;
  };
  const old: KubeadmNodeRef = one('cordon').params.node as KubeadmNodeRef;
  const member = one('etcd-remove-member').params.member as KubeadmMemberRef;
  return { plan, steps, one, old, member, first };
}

const label = (m: MemberRef) => (m.kind === 'kubeadm' ? m.name : (m.name ?? m.replaces));

describe.each(['surge', 'replace'] as Strategy[])('%s', (strategy) => {
  it('every step names what it acts on: its node, and its member for etcd steps', () => {
    const { steps, old, member } = swapOf(strategy);
    for (const s of steps) {
      if (
        ['gate', 'stop-apiserver', 'cordon', 'drain', 'decommission', 'delete-node', 'lb-remove'].includes(
          s.kind,
        )
      )
        expect(s.target.node, s.id).toEqual(old);
      if (['etcd-move-leader', 'etcd-remove-member', 'verify-membership', 'gate'].includes(s.kind))
        expect(s.target.member, s.id).toEqual(member);
      if (
        ['provision', 'wait-member-joined', 'wait-member-voter', 'wait-node-ready', 'lb-add'].includes(s.kind)
      )
        expect(s.target.node?.kind, s.id).toBe('talos');
      if (['wait-member-joined', 'wait-member-voter'].includes(s.kind))
        expect(s.target.member, s.id).toMatchObject({ kind: 'talos', replaces: old.name });
    }
  });

  it('every step shows a person its commands, and how to check it (a gate and a membership check are their own check)', () => {
    const { steps } = swapOf(strategy);
    for (const s of steps) {
      expect(s.action.commands.length, `${s.id} action`).toBeGreaterThan(0);
      if (s.kind !== 'gate' && s.kind !== 'verify-membership')
        expect(s.verify.commands.length, `${s.id} verify`).toBeGreaterThan(0);
    }
  });

  it('the gate says why the cluster can take the swap, with the voter count it will have', () => {
    const { one } = swapOf(strategy);
    const g = one('gate');
    const n = g.expect.etcd!.voters as number;
    if (strategy === 'surge') expect(g.params.reason).toMatch(/^learner-first/);
    else expect(g.params.reason).toContain(`${n - 1} voters tolerate no failure`);
    expect(g.action.commands.map((c) => c.run).join('\n')).toMatch(
      /member list[\s\S]*endpoint health[\s\S]*endpoint status[\s\S]*readyz/,
    );
  });

  it('provisioning starts with all members healthy; replace first waits for the old machine to be off', () => {
    const { one, old } = swapOf(strategy);
    const p = one('provision');
    expect(p.expect.etcd?.healthy).toBe('all');
    if (strategy === 'replace') expect(p.expect.machines).toEqual([{ node: old, state: 'decommissioned' }]);
    else expect(p.expect.machines).toBeUndefined();
  });

  it('the new member must be caught up with the leader before it counts as a voter', () => {
    const { one } = swapOf(strategy);
    const v = one('wait-member-voter');
    expect(v.verify.expect.etcd?.caughtUp).toEqual({
      member: v.params.member,
      maxIndexLag: v.params.maxIndexLag,
    });
    expect(v.params.maxIndexLag).toBeGreaterThan(0);
    expect(v.notes?.join(' ')).toMatch(/no other membership change until this holds/);
  });

  it('each load-balancer step is undone by the opposite change, and waits for the health checks', () => {
    const { one } = swapOf(strategy);
    const add = one('lb-add');
    const remove = one('lb-remove');
    const runs = (s: Step, which: 'action' | 'undo') =>
      (which === 'action' ? s.action.commands : s.undo.possible ? s.undo.commands : [])
        .map((c) => c.run)
        .join('\n');
    expect(runs(add, 'action')).toContain('LB_ACTION=add');
    expect(runs(add, 'undo')).toContain('LB_ACTION=remove');
    expect(runs(remove, 'action')).toContain('LB_ACTION=remove');
    expect(runs(remove, 'undo')).toContain('LB_ACTION=add');
    for (const s of [add, remove]) {
      expect(s.notes?.join(' ')).toContain(`wait ${s.params.settleSeconds} s after the change`);
      expect(s.verify.commands.map((c) => c.run).join('\n')).toContain('readyz');
      expect(s.idempotencyCheck.description).toMatch(/:6443 is (in|out of) rotation$/);
    }
    expect(add.idempotencyCheck.description).toContain(' is in rotation');
    expect(remove.idempotencyCheck.description).toContain(`${remove.params.address}:6443 is out of rotation`);
    expect(add.action.summary).not.toBe(remove.action.summary);
    expect(add.title).toMatch(/^Add /);
    expect(remove.title).toMatch(/^Take /);
  });

  it('the old apiserver is stopped only while it serves, and can be started again', () => {
    const { one, old } = swapOf(strategy);
    const stop = one('stop-apiserver');
    expect(stop.expect.apiservers).toEqual([{ node: old, serving: true }]);
    expect(stop.verify.expect.apiservers).toEqual([{ node: old, serving: false }]);
    expect(stop.verify.commands.length).toBeGreaterThan(0);
    expect(stop.undo.possible && stop.undo.commands.map((c) => c.run).join('\n')).toContain(
      'kube-apiserver.yaml /etc/kubernetes/manifests/kube-apiserver.yaml',
    );
  });

  it('leadership leaves the old member before it is removed, and the removal names its last-member duty', () => {
    const { one, member } = swapOf(strategy);
    const move = one('etcd-move-leader');
    expect(move.verify.expect.etcd?.leader).toEqual({ isNot: member });
    expect(move.verify.commands.length).toBeGreaterThan(0);
    expect(move.notes?.length).toBeGreaterThan(0);
    const rm = one('etcd-remove-member');
    expect(rm.expect.etcd?.leader).toEqual({ isNot: member });
    // Sent through the Talos member first (surge: it has joined; replace: it joins after), never
    // through the member being removed.
    expect(rm.params.via[0]?.kind).toBe(strategy === 'surge' ? 'talos' : 'kubeadm');
    expect(rm.params.via.map(label)).not.toContain(member.name);
    expect(rm.notes?.join(' ')).toMatch(/5 s connected to every voter/);
    expect(rm.verify.commands.map((c) => c.run).join('\n')).toContain('member list');
    const vm = one('verify-membership');
    expect(vm.action.commands.map((c) => c.run).join('\n')).toMatch(/member list[\s\S]*endpoint health/);
  });

  it('the old machine is decommissioned only once its apiserver is out of service and etcd is healthy without it', () => {
    const { one, old } = swapOf(strategy);
    const d = one('decommission');
    expect(d.expect.apiservers).toEqual([{ node: old, serving: false }]);
    expect(d.expect.etcd?.healthy).toBe('all');
  });
});

describe('the last kubeadm member', () => {
  it('its removal says that afterwards etcd runs on Talos members only', () => {
    const plan = plans.get('surge')!;
    const removals = allSteps(plan).filter(
      (s): s is StepOf<'etcd-remove-member'> => s.kind === 'etcd-remove-member',
    );
    const last = removals.filter((s) => s.params.lastKubeadmMember);
    expect(last).toHaveLength(1);
    expect(last[0]!.notes?.join(' ')).toMatch(
      /the last kubeadm member: afterwards etcd runs on Talos members only/,
    );
    for (const s of removals.filter((x) => !x.params.lastKubeadmMember))
      expect(s.notes?.join(' ') ?? '').not.toMatch(/the last kubeadm member/);
  });

  it('replace tolerates only the member being replaced as unhealthy, until it is gone', () => {
    const { one, member } = swapOf('replace');
    expect(one('cordon').expect.etcd?.healthy).toEqual({ allExcept: member });
    expect(swapOf('surge').one('cordon').expect.etcd?.healthy).toBe('all');
  });
});
