import { describe, expect, it } from 'vitest';
import type {
  EtcdExpectation,
  KubeadmMemberRef,
  TalosMemberRef,
  TalosNodeRef,
} from '../plan/expected-state.js';
import type { EtcdMemberInfo, EtcdView } from '../ports/run.js';
import { Bindings, resolveMember } from './bindings.js';
import { describeChecks, evaluate, holds, observable } from './gates.js';
import type { World } from './observe.js';

const k1: KubeadmMemberRef = {
  kind: 'kubeadm',
  name: 'cp-1',
  id: '13872586097927091956',
  idHex: 'c085d6b2d5a0bcf4',
  node: 'cp-1',
  clientURL: 'https://10.0.0.11:2379',
};
const k2: KubeadmMemberRef = {
  ...k1,
  name: 'cp-2',
  id: '11210328135921524490',
  idHex: '9b9348b4bbfb450a',
  node: 'cp-2',
};
const t1: TalosMemberRef = { kind: 'talos', replaces: 'cp-1', name: 'talos-cp-1' };
const t1node: TalosNodeRef = { kind: 'talos', replaces: 'cp-1', name: 'talos-cp-1', address: null };

function member(id: string, name: string, opts: Partial<EtcdMemberInfo> = {}): EtcdMemberInfo {
  return {
    id,
    name,
    peerURLs: [`https://10.0.0.${id.length}:2380`],
    clientURLs: [`https://10.0.0.${id.length}:2379`],
    isLearner: false,
    ...opts,
  };
}

function view(members: EtcdMemberInfo[], opts: Partial<EtcdView> = {}): EtcdView {
  return {
    members,
    statuses: members.map((m) => ({
      ok: true as const,
      memberId: m.id,
      endpoint: m.clientURLs[0]!,
      leaderId: members[0]!.id,
      raftTerm: '2',
      raftIndex: m.id === members[0]!.id ? '5000' : '4990',
      raftAppliedIndex: m.id === members[0]!.id ? '5000' : '4990',
      isLearner: m.isLearner,
      version: '3.5.16',
      errors: [],
    })),
    leaderId: members[0]!.id,
    healthy: members.map((m) => m.id),
    ...opts,
  };
}

function world(v: EtcdView | { error: string }, more: Partial<World> = {}): World {
  return {
    at: '',
    etcd: 'error' in v ? { ok: false, error: v.error } : { ok: true, value: v },
    nodes: new Map(),
    loadBalancer: new Map(),
    apiservers: new Map(),
    machines: new Map(),
    objects: new Map(),
    files: new Map(),
    confirmed: new Set(),
    audit: { blockers: [] },
    ...more,
  };
}

const ctx = (b = new Bindings()) => ({ bindings: b, kubeadmIds: new Set([k1.id, k2.id]) });
const etcd = (e: Partial<EtcdExpectation>): { etcd: EtcdExpectation } => ({
  etcd: { voters: 3, learners: 0, total: 3, healthy: 'all', members: [], ...e },
});

describe('etcd gates', () => {
  const three = [member(k1.id, 'cp-1'), member(k2.id, 'cp-2'), member('42', 'cp-3')];

  it('counts voters, learners and members, with ranges while Talos joins', () => {
    expect(holds(evaluate(etcd({}), world(view(three)), ctx()))).toBe(true);
    const joining = [...three, member('77', '', { isLearner: true })];
    const exp = etcd({
      voters: { min: 3, max: 4 },
      learners: { min: 0, max: 1 },
      total: { min: 3, max: 4 },
      members: [{ member: t1, state: 'joining' }],
    });
    const checks = evaluate(exp, world(view(joining, { healthy: three.map((m) => m.id) })), ctx());
    // The unstarted learner is the member this step expects to be joining: not asked to be healthy.
    expect(describeChecks(checks)).toEqual([]);
    const strict = evaluate(etcd({}), world(view(joining)), ctx());
    expect(describeChecks(strict)).toEqual([
      'etcd learners: expected 0, saw 1',
      'etcd members: expected 3, saw 4',
    ]);
  });

  it('knows kubeadm members by their exact id, and says so when a namesake has another id', () => {
    const readded = [member('99', 'cp-1'), member(k2.id, 'cp-2'), member('42', 'cp-3')];
    const checks = evaluate(etcd({ members: [{ member: k1, state: 'voter' }] }), world(view(readded)), ctx());
    expect(describeChecks(checks)).toEqual([
      `etcd member cp-1: expected voter, saw absent (a member named cp-1 exists with id 99, not ${k1.id} as planned: it is another member (re-added?), not the one the plan means)`,
    ]);
  });

  it('finds a Talos member by name, by its bound id, or as the one unnamed learner', () => {
    const members = [...three, member('88', '', { isLearner: true, peerURLs: ['https://10.0.0.41:2380'] })];
    const b = new Bindings();
    expect(resolveMember(t1, members, b, ctx().kubeadmIds)).toMatchObject({
      found: true,
      how: 'only-unnamed',
    });
    b.merge({ replaces: 'cp-1', address: '10.0.0.41' });
    const two = [...members, member('89', '', { isLearner: true, peerURLs: ['https://10.0.0.42:2380'] })];
    expect(resolveMember(t1, two, b, ctx().kubeadmIds)).toMatchObject({
      found: true,
      how: 'peer-address',
      member: { id: '88' },
    });
    const named = [...three, member('88', 'talos-cp-1')];
    expect(resolveMember(t1, named, new Bindings(), ctx().kubeadmIds)).toMatchObject({
      found: true,
      how: 'name',
    });
    b.merge({ replaces: 'cp-1', memberId: '88' });
    expect(resolveMember(t1, [...three], b, ctx().kubeadmIds)).toEqual({ found: false });
  });

  it('checks health (but for the member being replaced), leadership and catching up', () => {
    const v = view(three, { healthy: [k2.id, '42'] });
    expect(describeChecks(evaluate(etcd({}), world(v), ctx()))).toEqual([
      'etcd health: expected every member healthy, saw unhealthy: cp-1',
    ]);
    expect(holds(evaluate(etcd({ healthy: { allExcept: k1 } }), world(v), ctx()))).toBe(true);
    const notLeader = evaluate(etcd({ leader: { isNot: k1 } }), world(view(three)), ctx());
    expect(describeChecks(notLeader)).toEqual(['etcd leader: expected cp-1 does not lead, saw cp-1 leads']);
    const lagging = view([...three, member('88', 'talos-cp-1')]);
    const st = lagging.statuses.find((s) => s.memberId === '88')!;
    if (st.ok) st.raftAppliedIndex = '2000';
    const caught = evaluate(
      etcd({ voters: 4, total: 4, caughtUp: { member: t1, maxIndexLag: 1000 } }),
      world(lagging),
      ctx(),
    );
    expect(describeChecks(caught)).toEqual([
      'etcd talos-cp-1 caught up: expected within 1000 entries of the leader, saw 3000 entries behind',
    ]);
  });

  it('an unreadable etcd is a mismatch that proves nothing (not observable)', () => {
    const checks = evaluate(etcd({}), world({ error: 'no etcd member answered' }), ctx());
    expect(holds(checks)).toBe(false);
    expect(observable(checks)).toBe(false);
  });
});

describe('other sections', () => {
  it('nodes: exists, Ready, cordoned, drained; a name not known yet is unknown', () => {
    const w = world(view([member('1', 'a')]), {
      nodes: new Map([
        [
          'cp-1',
          {
            ok: true,
            value: {
              node: {
                name: 'cp-1',
                ready: true,
                unschedulable: false,
                labels: {},
                addresses: [],
                osImage: undefined,
              },
              evictable: ['shop/web-1'],
            },
          },
        ],
      ]),
    });
    const node = { kind: 'kubeadm' as const, name: 'cp-1', address: null };
    const checks = evaluate(
      { nodes: [{ node, exists: true, ready: true, cordoned: true, drained: true }] },
      w,
      ctx(),
    );
    expect(describeChecks(checks)).toEqual([
      'nodes cp-1: expected cordoned, saw schedulable',
      'nodes cp-1: expected drained (no evictable pod), saw 1 evictable pod(s): shop/web-1',
    ]);
    // A replacement not provisioned yet (no name bound) is absent: "absent" holds, "exists" does not.
    const unnamed = { ...t1node, name: null };
    expect(evaluate({ nodes: [{ node: unnamed, exists: false }] }, w, ctx())[0]?.status).toBe('ok');
    expect(evaluate({ nodes: [{ node: unnamed, exists: true }] }, w, ctx())[0]?.status).toBe('mismatch');
  });

  it('load balancer, apiservers, machines: a failed lookup is an unobserved mismatch with its cause; "cannot tell" needs a person', () => {
    const node = { kind: 'kubeadm' as const, name: 'cp-1', address: '10.0.0.11' };
    const expect3: Parameters<typeof evaluate>[0] = {
      loadBalancer: [{ node, address: '10.0.0.11', port: 6443, inRotation: false }],
      apiservers: [{ node, serving: false }],
      machines: [{ node, state: 'decommissioned' }],
    };
    const failed = evaluate(
      expect3,
      world(view([member('1', 'a')]), {
        loadBalancer: new Map([['cp-1', { ok: false, error: 'asking the load balancer: exit 2' }]]),
        apiservers: new Map([['cp-1', { ok: false, error: 'HTTP 403 Forbidden' }]]),
        machines: new Map([['cp-1', { ok: false, error: 'ETIMEDOUT' }]]),
      }),
      ctx(),
    );
    expect(failed.map((c) => [c.status, c.unobserved])).toEqual([
      ['mismatch', true],
      ['mismatch', true],
      ['mismatch', true],
    ]);
    expect(holds(failed)).toBe(false);
    expect(observable(failed)).toBe(false);
    expect(describeChecks(failed)[1]).toBe(
      '(unobserved) apiservers cp-1: expected apiserver out of service, saw cannot read it: HTTP 403 Forbidden',
    );

    const cannotTell = world(view([member('1', 'a')]), {
      loadBalancer: new Map([['cp-1', { ok: true, value: undefined }]]),
      apiservers: new Map([['cp-1', { ok: true, value: undefined }]]),
      machines: new Map([['cp-1', { ok: true, value: undefined }]]),
    });
    const asked = evaluate(expect3, cannotTell, ctx());
    expect(asked.map((c) => c.status)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(asked.every((c) => c.confirm)).toBe(true);
    expect(holds(asked)).toBe(false); // fail closed: not seen, not confirmed
    const confirmed = evaluate(
      expect3,
      { ...cannotTell, confirmed: new Set(asked.map((c) => c.confirm!)) },
      ctx(),
    );
    expect(holds(confirmed)).toBe(true);

    const seen = evaluate(
      expect3,
      world(view([member('1', 'a')]), {
        loadBalancer: new Map([['cp-1', { ok: true, value: true }]]),
        apiservers: new Map([['cp-1', { ok: true, value: false }]]),
        machines: new Map([['cp-1', { ok: true, value: 'decommissioned' }]]),
      }),
      ctx(),
    );
    expect(seen.map((c) => c.status)).toEqual(['mismatch', 'ok', 'ok']);
  });

  it('objects with fields, files on the workstation and on nodes, the audit and operator confirmations', () => {
    const w = world(view([member('1', 'a')]), {
      objects: new Map([
        [
          'DaemonSet/kube-system/kube-proxy',
          { ok: true, value: { spec: { selector: { matchLabels: { tier: 'control-plane' } } } } },
        ],
      ]),
      files: new Map([
        ['etcd.db', true],
        ['/etc/kubernetes/pki', undefined],
      ]),
      confirmed: new Set(['the fix is in place']),
      audit: {
        blockers: [
          { ruleId: 'r1', severity: 'blocker', title: '', fingerprint: 'f1', subject: '', remediation: '' },
        ],
      },
    });
    const checks = evaluate(
      {
        objects: [
          {
            kind: 'DaemonSet',
            namespace: 'kube-system',
            name: 'kube-proxy',
            present: true,
            fields: { 'spec.selector.matchLabels.tier': 'node' },
          },
        ],
        files: [
          { path: 'etcd.db', where: { kind: 'workstation' }, exists: true },
          { path: '/etc/kubernetes/pki', where: { kind: 'node', node: 'cp-1' }, exists: false },
        ],
        audit: { maxBlockers: 0, acceptedBlockers: ['f1'] },
        operator: { confirms: 'the fix is in place' },
      },
      w,
      ctx(),
    );
    expect(describeChecks(checks)).toEqual([
      'objects DaemonSet kube-system/kube-proxy spec.selector.matchLabels.tier: expected node, saw control-plane',
    ]);
    const nodeFile = checks.find((c) => c.subject.startsWith('/etc/kubernetes/pki'))!;
    expect(nodeFile).toMatchObject({
      status: 'unknown',
      confirm: 'Does /etc/kubernetes/pki no longer exist on node cp-1?',
    });
    expect(checks.find((c) => c.section === 'audit')?.status).toBe('ok');
    expect(checks.find((c) => c.section === 'operator')?.status).toBe('ok');
  });
});

describe('budgets gate: no workload below its PodDisruptionBudget', () => {
  const pdb = (name: string, current: number | null, desired: number | null) => ({
    namespace: 'shop',
    name,
    selector: {},
    disruptionsAllowed: current !== null && desired !== null ? Math.max(0, current - desired) : null,
    currentHealthy: current,
    desiredHealthy: desired,
  });
  const gate = (budgets: World['budgets']) =>
    evaluate(
      { budgets: { healthy: true } },
      world({ error: 'no etcd asked' }, { ...(budgets && { budgets }) }),
      ctx(),
    );

  it('holds when every budget has its desired healthy pods', () => {
    const checks = gate({ ok: true, value: [pdb('web', 3, 2), pdb('db', 1, 1)] });
    expect(holds(checks)).toBe(true);
    expect(checks.map((c) => c.seen)).toEqual(['all 2 at it']);
  });

  it('names each budget below its minimum, and one whose status is not filled yet', () => {
    const checks = gate({ ok: true, value: [pdb('web', 3, 2), pdb('api', 1, 2), pdb('new', null, null)] });
    expect(holds(checks)).toBe(false);
    expect(describeChecks(checks)).toEqual([
      'budgets PodDisruptionBudget shop/api: expected at least its desired healthy pods, saw 1 healthy of 2 desired',
      'budgets PodDisruptionBudget shop/new: expected at least its desired healthy pods, saw no status.currentHealthy/desiredHealthy yet',
    ]);
    expect(observable(checks)).toBe(true);
  });

  it('a list the server refused is not observed, never "none below"', () => {
    const checks = gate({ ok: false, error: 'listing the PodDisruptionBudgets: 403 Forbidden' });
    expect(holds(checks)).toBe(false);
    expect(observable(checks)).toBe(false);
    expect(describeChecks(checks)[0]).toBe(
      '(unobserved) budgets PodDisruptionBudgets: expected at least its desired healthy pods, saw cannot list them: listing the PodDisruptionBudgets: 403 Forbidden',
    );
  });
});
