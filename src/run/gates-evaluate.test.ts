/**
 * The rules of the gates, one by one: what each section expects, what it reports it saw, and how the
 * helpers (holds, onlyQuestionsLeft, observable, mismatches, describeChecks, remediationFor) read
 * the checks. Complements gates.test.ts, which walks whole scenarios.
 */
import { describe, expect, it } from 'vitest';
import type {
  EtcdExpectation,
  ExpectedState,
  KubeadmMemberRef,
  KubeadmNodeRef,
  MemberState,
  TalosMemberRef,
  TalosNodeRef,
} from '../plan/expected-state.js';
import type { EtcdEndpointStatus, EtcdMemberInfo, EtcdView, NodeView } from '../ports/run.js';
import { Bindings } from './bindings.js';
import {
  type Check,
  type CheckStatus,
  describeChecks,
  describeEtcd,
  evaluate,
  fieldAt,
  holds,
  mismatches,
  observable,
  onlyQuestionsLeft,
  remediationFor,
} from './gates.js';
import type { NodeObservation, Observed, World } from './observe.js';

// ---- fixtures ----------------------------------------------------------------------------------

const k1: KubeadmMemberRef = {
  kind: 'kubeadm',
  name: 'cp-1',
  id: '13872586097927091956',
  idHex: 'c085d6b2d5a0bcf4',
  node: 'cp-1',
  clientURL: 'https://10.0.0.11:2379',
};
const k2: KubeadmMemberRef = { ...k1, name: 'cp-2', id: '11210328135921524490', idHex: '9b9348b4bbfb450a' };
const k3: KubeadmMemberRef = { ...k1, name: 'cp-3', id: '42', idHex: '2a' };
/** The Talos member replacing cp-1, its name chosen by the plan. */
const t1: TalosMemberRef = { kind: 'talos', replaces: 'cp-1', name: 'talos-cp-1' };
/** The Talos member replacing cp-1, its name left to the provisioner. */
const t1anon: TalosMemberRef = { kind: 'talos', replaces: 'cp-1', name: null };

const cp1: KubeadmNodeRef = { kind: 'kubeadm', name: 'cp-1', address: '10.0.0.11' };
/** A Talos replacement the provisioner names and addresses: unknown until bound. */
const tnode: TalosNodeRef = { kind: 'talos', replaces: 'cp-1', name: null, address: null };
const TNODE_LABEL = '<Talos node replacing cp-1>';

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

function status(m: EtcdMemberInfo, raftIndex = '5000', raftAppliedIndex = raftIndex): EtcdEndpointStatus {
  return {
    ok: true,
    memberId: m.id,
    endpoint: m.clientURLs[0]!,
    leaderId: '',
    raftTerm: '2',
    raftIndex,
    raftAppliedIndex,
    isLearner: m.isLearner,
    version: '3.5.16',
    errors: [],
  };
}

/** Every member answers and is healthy; the first one leads unless `opts` says otherwise. */
function view(members: EtcdMemberInfo[], opts: Partial<EtcdView> = {}): EtcdView {
  return {
    members,
    statuses: members.map((m) => status(m)),
    leaderId: members[0]?.id,
    healthy: members.map((m) => m.id),
    ...opts,
  };
}

function world(more: Partial<World> = {}): World {
  return {
    at: '',
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

const etcdWorld = (v: EtcdView, more: Partial<World> = {}) =>
  world({ etcd: { ok: true, value: v }, ...more });

const ctx = (b = new Bindings()) => ({ bindings: b, kubeadmIds: new Set([k1.id, k2.id, k3.id]) });

/** Bindings that know the Talos replacement of cp-1 by this name (and address, when given). */
function bound(name: string, address?: string): Bindings {
  const b = new Bindings();
  b.merge({ replaces: 'cp-1', name, ...(address !== undefined && { address }) });
  return b;
}

const etcd = (e: Partial<EtcdExpectation>): ExpectedState => ({
  etcd: { voters: 3, learners: 0, total: 3, healthy: 'all', members: [], ...e },
});

function only(checks: Check[]): Check {
  expect(checks).toHaveLength(1);
  return checks[0]!;
}

function bySubject(checks: Check[], subject: string): Check {
  const c = checks.find((x) => x.subject === subject);
  if (!c) throw new Error(`no check about ${subject} in ${JSON.stringify(checks.map((x) => x.subject))}`);
  return c;
}

function nodeView(more: Partial<NodeView> = {}): NodeView {
  return {
    name: 'cp-1',
    ready: true,
    unschedulable: false,
    labels: {},
    addresses: [],
    osImage: undefined,
    ...more,
  };
}

function nodesWorld(o: Observed<NodeObservation>): World {
  return world({ nodes: new Map([['cp-1', o]]) });
}

function synthetic(status: CheckStatus, more: Partial<Check> = {}): Check {
  return { section: 'etcd', subject: 'voters', expected: '3', seen: '3', status, ...more };
}

const three = [member(k1.id, 'cp-1'), member(k2.id, 'cp-2'), member(k3.id, 'cp-3')];

// ---- reading the checks --------------------------------------------------------------------------

describe('reading checks', () => {
  const ok = synthetic('ok');
  const question = synthetic('unknown', { confirm: 'Is it so?' });
  const mute = synthetic('unknown');
  const wrong = synthetic('mismatch', { seen: '2' });
  const unobserved = synthetic('mismatch', { unobserved: true, seen: 'cannot read it: timeout' });

  it('holds only when every check is ok', () => {
    expect(holds([ok, ok])).toBe(true);
    expect(holds([])).toBe(true);
    expect(holds([ok, question])).toBe(false);
    expect(holds([ok, wrong])).toBe(false);
  });

  it('onlyQuestionsLeft: ok and unknown-with-a-question pass; an unknown without a question or any mismatch does not', () => {
    expect(onlyQuestionsLeft([ok])).toBe(true);
    expect(onlyQuestionsLeft([ok, question])).toBe(true);
    expect(onlyQuestionsLeft([question])).toBe(true);
    expect(onlyQuestionsLeft([ok, mute])).toBe(false);
    expect(onlyQuestionsLeft([ok, wrong])).toBe(false);
    expect(onlyQuestionsLeft([question, wrong])).toBe(false);
    // A mismatch stays a contradiction even when a question is attached to it.
    expect(onlyQuestionsLeft([ok, { ...wrong, confirm: 'Is it so?' }])).toBe(false);
  });

  it('observable is false when any check is unknown or unobserved, true when all were seen', () => {
    expect(observable([ok, ok])).toBe(true);
    // A seen mismatch proves the world is not as expected: observable.
    expect(observable([ok, wrong])).toBe(true);
    expect(observable([ok, unobserved])).toBe(false);
    expect(observable([ok, question])).toBe(false);
    expect(observable([mute])).toBe(false);
  });

  it('mismatches returns only the mismatches, unobserved ones included', () => {
    expect(mismatches([ok, wrong, question, unobserved])).toEqual([wrong, unobserved]);
    expect(mismatches([ok, question])).toEqual([]);
  });

  it('describeChecks lists the mismatches (unobserved marked); unknowns only when asked, marked', () => {
    const lines = describeChecks([ok, wrong, question, unobserved]);
    expect(lines).toEqual([
      'etcd voters: expected 3, saw 2',
      '(unobserved) etcd voters: expected 3, saw cannot read it: timeout',
    ]);
    expect(describeChecks([ok, wrong, question], { includeUnknown: true })).toEqual([
      'etcd voters: expected 3, saw 2',
      '(unknown) etcd voters: expected 3, saw 3',
    ]);
    expect(describeChecks([ok], { includeUnknown: true })).toEqual([]);
  });
});

describe('remediationFor', () => {
  const tips: Record<string, string> = {
    etcd: 'inspect etcd',
    nodes: 'check the nodes',
    endpoint: 'the API does not answer through the control-plane endpoint',
    machines: 'check the machine with the provisioner',
    loadBalancer: 'check the load balancer backends',
    apiservers: 'check the apiserver static pod',
    audit: 'fix the blockers ferry audit reports',
  };
  const sections = Object.keys(tips) as Check['section'][];

  it.each(sections)('gives the %s advice only for a mismatch in that section', (section) => {
    // Every other section has a check too, but one that holds.
    const checks = sections.map((s) => synthetic(s === section ? 'mismatch' : 'ok', { section: s }));
    const text = remediationFor(checks);
    expect(text).toContain(tips[section]);
    for (const other of sections.filter((s) => s !== section)) expect(text).not.toContain(tips[other]);
    expect(text).toMatch(/then run `ferry run --resume` \(the run re-observes before it acts\)$/);
  });

  it('with nothing wrong (and nothing unobserved), only says to resume', () => {
    const checks = sections.map((s) => synthetic('ok', { section: s }));
    expect(remediationFor(checks)).toBe('then run `ferry run --resume` (the run re-observes before it acts)');
  });

  it('starts with the unobserved hint when a lookup failed', () => {
    const text = remediationFor([
      synthetic('mismatch', { section: 'apiservers', subject: 'cp-2', unobserved: true }),
    ]);
    expect(text).toMatch(/^ferry could not observe one check/);
    expect(text).toContain("--accept-unobserved 'apiservers:cp-2'");
    expect(text).toContain(tips.apiservers);
  });
});

describe('fieldAt', () => {
  it('follows a dotted path through nested objects and arrays', () => {
    expect(fieldAt({ spec: { selector: { tier: 'node' } } }, 'spec.selector.tier')).toBe('node');
    expect(fieldAt({ spec: { ports: [{ port: 6443 }] } }, 'spec.ports.0.port')).toBe(6443);
    expect(fieldAt({ spec: { replicas: 0 } }, 'spec.replicas')).toBe(0);
  });

  it('is undefined past a null or a non-object value, never a property of a string or number', () => {
    expect(fieldAt({ spec: null }, 'spec.replicas')).toBeUndefined();
    expect(fieldAt(null, 'spec')).toBeUndefined();
    expect(fieldAt({ name: 'kube-proxy' }, 'name.length')).toBeUndefined();
    expect(fieldAt({ replicas: 3 }, 'replicas.toFixed')).toBeUndefined();
    expect(fieldAt({ spec: {} }, 'spec.missing.deeper')).toBeUndefined();
  });
});

// ---- etcd ----------------------------------------------------------------------------------------

describe('describeEtcd', () => {
  it('lists each member as learner or voter, marks the leader, names the unhealthy ones', () => {
    const members = [member(k1.id, 'cp-1'), member(k2.id, 'cp-2'), member('77', '', { isLearner: true })];
    expect(describeEtcd(view(members, { leaderId: k2.id, healthy: [k1.id] }))).toBe(
      'cp-1 voter, cp-2 voter (leader), <unstarted 77> learner; unhealthy: cp-2, <unstarted 77>',
    );
  });

  it('says nothing of health when all are healthy, and says when there is no leader', () => {
    expect(describeEtcd(view(three))).toBe('cp-1 voter (leader), cp-2 voter, cp-3 voter');
    expect(describeEtcd(view(three, { leaderId: undefined }))).toBe(
      'cp-1 voter, cp-2 voter, cp-3 voter; no leader',
    );
  });
});

describe('etcd counts and reads', () => {
  it('a range renders as min–max and holds from min to max inclusive; one outside either end is a mismatch', () => {
    const exp = etcd({ voters: { min: 3, max: 4 }, total: { min: 3, max: 4 } });
    const voters = (n: number) => {
      const ms = Array.from({ length: n }, (_, i) => member(String(100 + i), `m-${i}`));
      return bySubject(evaluate(exp, etcdWorld(view(ms)), ctx()), 'voters');
    };
    expect(voters(3)).toMatchObject({ expected: '3–4', status: 'ok' });
    expect(voters(3).seen).toMatch(/^3 \(/);
    expect(voters(4).status).toBe('ok');
    expect(voters(2).status).toBe('mismatch');
    expect(voters(5).status).toBe('mismatch');
  });

  it('an exact count renders as the number', () => {
    const checks = evaluate(etcd({}), etcdWorld(view(three)), ctx());
    expect(bySubject(checks, 'voters').expected).toBe('3');
    expect(bySubject(checks, 'learners')).toMatchObject({ expected: '0', seen: '0', status: 'ok' });
    expect(bySubject(checks, 'members')).toMatchObject({ expected: '3', seen: '3', status: 'ok' });
  });

  it('an etcd that was not observed at all is an unobserved mismatch', () => {
    const c = only(evaluate(etcd({}), world(), ctx()));
    expect(c).toMatchObject({
      section: 'etcd',
      expected: '3 voter(s)',
      seen: 'etcd cannot be read: not observed',
      status: 'mismatch',
      unobserved: true,
    });
  });
});

describe('etcd health', () => {
  it('"all" expects every member healthy and says "healthy" when they are', () => {
    const c = bySubject(evaluate(etcd({}), etcdWorld(view(three)), ctx()), 'health');
    expect(c).toMatchObject({ expected: 'every member healthy', seen: 'healthy', status: 'ok' });
  });

  it('allExcept names the excepted member, tolerates it unhealthy, but no other', () => {
    const exp = etcd({ healthy: { allExcept: k1 } });
    const tolerated = bySubject(
      evaluate(exp, etcdWorld(view(three, { healthy: [k2.id, k3.id] })), ctx()),
      'health',
    );
    expect(tolerated).toMatchObject({ expected: 'every member but cp-1 healthy', status: 'ok' });
    const other = bySubject(
      evaluate(exp, etcdWorld(view(three, { healthy: [k1.id, k3.id] })), ctx()),
      'health',
    );
    expect(other).toMatchObject({ seen: 'unhealthy: cp-2', status: 'mismatch' });
  });

  it('a member expected to be a voter is health-checked', () => {
    const exp = etcd({ members: [{ member: k1, state: 'voter' }] });
    const c = bySubject(evaluate(exp, etcdWorld(view(three, { healthy: [k2.id, k3.id] })), ctx()), 'health');
    expect(c).toMatchObject({ seen: 'unhealthy: cp-1', status: 'mismatch' });
  });

  it('a member expected joining or learner-or-voter is not asked to be healthy yet; expected a voter it is', () => {
    const members = [...three, member('88', 'talos-cp-1', { isLearner: true })];
    const w = etcdWorld(view(members, { healthy: three.map((m) => m.id) }));
    const health = (state: MemberState) =>
      bySubject(
        evaluate(etcd({ learners: 1, total: 4, members: [{ member: t1, state }] }), w, ctx()),
        'health',
      ).status;
    expect(health('learner-or-voter')).toBe('ok');
    expect(health('joining')).toBe('ok');
    expect(health('voter')).toBe('mismatch');
    expect(health('absent')).toBe('mismatch');
  });
});

describe('etcd member states', () => {
  const learner = member('88', 'talos-cp-1', { isLearner: true });
  const voter = member('88', 'talos-cp-1');
  /** Started by etcd as a voter, but never started (no name yet). */
  const unstartedVoter = member('88', '');

  function memberCheck(
    state: MemberState,
    members: EtcdMemberInfo[],
    ref: TalosMemberRef = t1,
    b = new Bindings(),
  ) {
    const checks = evaluate(etcd({ members: [{ member: ref, state }] }), etcdWorld(view(members)), ctx(b));
    return checks.find((c) => c.subject.startsWith('member '))!;
  }

  it("'voter' needs a started, non-learner member", () => {
    expect(memberCheck('voter', [...three, voter])).toMatchObject({
      subject: 'member talos-cp-1',
      expected: 'voter',
      seen: 'voter',
      status: 'ok',
    });
    expect(memberCheck('voter', [...three, learner])).toMatchObject({ seen: 'learner', status: 'mismatch' });
    expect(memberCheck('voter', [...three, unstartedVoter])).toMatchObject({
      seen: 'voter',
      status: 'mismatch',
    });
    expect(memberCheck('voter', three)).toMatchObject({ seen: 'absent', status: 'mismatch' });
  });

  it("'learner-or-voter' holds for any listed member, not for an absent one", () => {
    expect(memberCheck('learner-or-voter', [...three, learner])).toMatchObject({
      seen: 'learner',
      status: 'ok',
    });
    expect(memberCheck('learner-or-voter', [...three, voter])).toMatchObject({ seen: 'voter', status: 'ok' });
    expect(memberCheck('learner-or-voter', three)).toMatchObject({ seen: 'absent', status: 'mismatch' });
  });

  it("'joining' holds absent, as a learner and as a voter", () => {
    expect(memberCheck('joining', three).status).toBe('ok');
    expect(memberCheck('joining', [...three, learner]).status).toBe('ok');
    expect(memberCheck('joining', [...three, voter]).status).toBe('ok');
  });

  it("'absent' holds only when the member is not listed", () => {
    expect(memberCheck('absent', three)).toMatchObject({ seen: 'absent', status: 'ok' });
    expect(memberCheck('absent', [...three, learner])).toMatchObject({ seen: 'learner', status: 'mismatch' });
  });

  it('a found member is labelled by its etcd name, without a note; one not found by the plan label', () => {
    const b = new Bindings();
    b.merge({ replaces: 'cp-1', memberId: '88' });
    const found = memberCheck('voter', [...three, member('88', 'talos-xyz')], t1anon, b);
    expect(found).toMatchObject({ subject: 'member talos-xyz', seen: 'voter', status: 'ok' });
    const missing = memberCheck('absent', three, t1anon);
    expect(missing).toMatchObject({ subject: 'member <Talos member replacing cp-1>', seen: 'absent' });
  });
});

describe('etcd leader', () => {
  it('names the actual leader wherever it is in the list; "is" and "isNot" read it both ways', () => {
    const w = etcdWorld(view(three, { leaderId: k2.id }));
    const leader = (l: EtcdExpectation['leader']) =>
      bySubject(evaluate(etcd({ leader: l }), w, ctx()), 'leader');
    expect(leader({ is: k2 })).toMatchObject({ expected: 'cp-2 leads', seen: 'cp-2 leads', status: 'ok' });
    expect(leader({ is: k1 }).status).toBe('mismatch');
    expect(leader({ isNot: k1 })).toMatchObject({ expected: 'cp-1 does not lead', status: 'ok' });
    expect(leader({ isNot: k2 }).status).toBe('mismatch');
  });

  it('with no leader, neither "is" nor "isNot" holds', () => {
    const w = etcdWorld(view(three, { leaderId: undefined }));
    const leader = (l: EtcdExpectation['leader']) =>
      bySubject(evaluate(etcd({ leader: l }), w, ctx()), 'leader');
    expect(leader({ isNot: k1 })).toMatchObject({ seen: 'no leader leads', status: 'mismatch' });
    expect(leader({ is: k1 }).status).toBe('mismatch');
  });
});

describe('etcd caught up', () => {
  const talos = member('88', 'talos-cp-1', { isLearner: true });
  const members = [...three, talos];
  const exp = (maxIndexLag: number) => etcd({ learners: 1, total: 4, caughtUp: { member: t1, maxIndexLag } });
  const subject = 'talos-cp-1 caught up';
  const lagging = (statuses: EtcdEndpointStatus[], opts: Partial<EtcdView> = {}) =>
    etcdWorld(view(members, { statuses, ...opts }));
  const behind1000 = [...three.map((m) => status(m, '5000')), status(talos, '4990', '4000')];

  it('a lag of exactly maxIndexLag holds; one entry more does not', () => {
    const at = bySubject(evaluate(exp(1000), lagging(behind1000), ctx()), subject);
    expect(at).toMatchObject({
      expected: 'within 1000 entries of the leader',
      seen: '1000 entries behind',
      status: 'ok',
    });
    const over = bySubject(evaluate(exp(999), lagging(behind1000), ctx()), subject);
    expect(over).toMatchObject({ seen: '1000 entries behind', status: 'mismatch' });
  });

  it('a member not in the list is not caught up', () => {
    const c = bySubject(evaluate(exp(1000), etcdWorld(view(three)), ctx()), subject);
    expect(c).toMatchObject({ seen: 'not in the member list', status: 'mismatch' });
  });

  it('a member whose status does not answer (no status, or a failed one) is not caught up', () => {
    const none = bySubject(evaluate(exp(1000), lagging(three.map((m) => status(m))), ctx()), subject);
    expect(none).toMatchObject({ seen: 'its status does not answer', status: 'mismatch' });
    const failed = [
      ...three.map((m) => status(m)),
      { ok: false as const, memberId: '88', endpoint: talos.clientURLs[0]!, error: 'deadline exceeded' },
    ];
    const broken = bySubject(evaluate(exp(1000), lagging(failed), ctx()), subject);
    expect(broken).toMatchObject({ seen: 'its status does not answer', status: 'mismatch' });
  });

  it('without a leader there is nothing to catch up with', () => {
    const c = bySubject(evaluate(exp(1000), lagging(behind1000, { leaderId: undefined }), ctx()), subject);
    expect(c).toMatchObject({ seen: 'no leader', status: 'mismatch' });
  });
});

// ---- nodes ---------------------------------------------------------------------------------------

describe('nodes', () => {
  it('a Node whose name is not known yet is "not provisioned": absent holds, exists does not', () => {
    const absent = only(evaluate({ nodes: [{ node: tnode, exists: false }] }, world(), ctx()));
    expect(absent).toMatchObject({ subject: TNODE_LABEL, expected: 'absent', status: 'ok' });
    expect(absent.seen).toContain('not provisioned');
    expect(only(evaluate({ nodes: [{ node: tnode, exists: true }] }, world(), ctx())).status).toBe(
      'mismatch',
    );
  });

  it('a Node that could not be looked up is an unobserved mismatch with its cause', () => {
    const failed = only(
      evaluate({ nodes: [{ node: cp1, exists: true }] }, nodesWorld({ ok: false, error: 'HTTP 403' }), ctx()),
    );
    expect(failed).toMatchObject({
      subject: 'cp-1',
      expected: 'exists',
      seen: 'cannot read it: HTTP 403',
      status: 'mismatch',
      unobserved: true,
    });
    const missing = only(evaluate({ nodes: [{ node: cp1, exists: false }] }, world(), ctx()));
    expect(missing).toMatchObject({
      expected: 'absent',
      seen: 'cannot read it: not observed',
      status: 'mismatch',
      unobserved: true,
    });
  });

  it('the Node exists or not, as expected; with no Node nothing else is checked', () => {
    const gone = nodesWorld({ ok: true, value: { node: null } });
    const absent = only(
      evaluate(
        { nodes: [{ node: cp1, exists: false, ready: true, cordoned: true, drained: true }] },
        gone,
        ctx(),
      ),
    );
    expect(absent).toMatchObject({ expected: 'no Node', seen: 'no Node', status: 'ok' });
    expect(only(evaluate({ nodes: [{ node: cp1, exists: true }] }, gone, ctx()))).toMatchObject({
      expected: 'Node exists',
      seen: 'no Node',
      status: 'mismatch',
    });
    const there = nodesWorld({ ok: true, value: { node: nodeView() } });
    expect(only(evaluate({ nodes: [{ node: cp1, exists: false }] }, there, ctx())).status).toBe('mismatch');
    expect(only(evaluate({ nodes: [{ node: cp1, exists: true }] }, there, ctx())).status).toBe('ok');
  });

  it('Ready is checked when asked, and must match', () => {
    const ready = (node: NodeView, want: boolean) =>
      evaluate(
        { nodes: [{ node: cp1, exists: true, ready: want }] },
        nodesWorld({ ok: true, value: { node } }),
        ctx(),
      );
    const notReady = ready(nodeView({ ready: false }), true);
    expect(notReady).toHaveLength(2);
    expect(notReady[1]).toMatchObject({ expected: 'Ready', seen: 'not Ready', status: 'mismatch' });
    expect(ready(nodeView({ ready: true }), true)[1]).toMatchObject({ seen: 'Ready', status: 'ok' });
    expect(ready(nodeView({ ready: false }), false)[1]).toMatchObject({
      expected: 'not Ready',
      status: 'ok',
    });
  });

  describe('drained', () => {
    const drained = (evictable: string[] | undefined, want = true) =>
      evaluate(
        { nodes: [{ node: cp1, exists: true, drained: want }] },
        nodesWorld({ ok: true, value: { node: nodeView(), ...(evictable && { evictable }) } }),
        ctx(),
      )[1]!;
    const pods = (n: number) => Array.from({ length: n }, (_, i) => `shop/web-${i + 1}`);

    it('no evictable pod (none listed, or an empty list) is drained', () => {
      expect(drained(undefined)).toMatchObject({ seen: 'no evictable pod', status: 'ok' });
      expect(drained([])).toMatchObject({ seen: 'no evictable pod', status: 'ok' });
      expect(drained([], false)).toMatchObject({ expected: 'pods running', status: 'mismatch' });
    });

    it('lists up to 5 evictable pods in full; more are cut to 5 and an ellipsis', () => {
      const five = drained(pods(5));
      expect(five).toMatchObject({
        seen: '5 evictable pod(s): shop/web-1, shop/web-2, shop/web-3, shop/web-4, shop/web-5',
        status: 'mismatch',
      });
      const six = drained(pods(6));
      expect(six.seen).toBe(
        '6 evictable pod(s): shop/web-1, shop/web-2, shop/web-3, shop/web-4, shop/web-5, …',
      );
      expect(drained(pods(1), false)).toMatchObject({ expected: 'pods running', status: 'ok' });
    });
  });
});

// ---- load balancer, apiservers, machines -----------------------------------------------------------

describe('load balancer backends', () => {
  const lb = (
    inRotation: boolean,
    address: string | null = null,
    node: KubeadmNodeRef | TalosNodeRef = tnode,
  ) => ({
    loadBalancer: [{ node, address, port: 6443, inRotation }],
  });
  const seenAs = (v: boolean | undefined) =>
    world({ loadBalancer: new Map([['cp-1', { ok: true, value: v }]]) });

  it('a backend whose name is not known yet holds only when expected out of rotation', () => {
    const out = only(evaluate(lb(false), world(), ctx()));
    expect(out).toMatchObject({
      subject: `${TNODE_LABEL} (?:6443)`,
      expected: 'out of rotation',
      status: 'ok',
    });
    expect(out.seen).toContain('not provisioned');
    expect(out.unobserved).toBeUndefined();
    const inRot = only(evaluate(lb(true), world(), ctx()));
    expect(inRot).toMatchObject({ expected: 'in rotation', status: 'mismatch' });
    expect(inRot.seen).toContain('not provisioned');
  });

  it('a backend with no lookup recorded is an unobserved mismatch', () => {
    const c = only(evaluate(lb(false, '10.0.0.11', cp1), world(), ctx()));
    expect(c).toMatchObject({ seen: 'cannot read it: not observed', status: 'mismatch', unobserved: true });
  });

  it('a seen backend holds when its rotation matches', () => {
    expect(only(evaluate(lb(true, null, cp1), seenAs(true), ctx()))).toMatchObject({
      expected: 'in rotation',
      seen: 'in rotation',
      status: 'ok',
    });
    expect(only(evaluate(lb(true, null, cp1), seenAs(false), ctx()))).toMatchObject({
      seen: 'out of rotation',
      status: 'mismatch',
    });
    expect(only(evaluate(lb(false, null, cp1), seenAs(false), ctx())).status).toBe('ok');
  });

  it('names the backend by its bound name and address, else by the planned address', () => {
    const w = world({ loadBalancer: new Map([['talos-a', { ok: true, value: undefined }]]) });
    const both = only(evaluate(lb(true, '10.0.0.99'), w, ctx(bound('talos-a', '10.0.0.41'))));
    expect(both).toMatchObject({
      subject: 'talos-a (10.0.0.41:6443)',
      status: 'unknown',
      confirm: 'Is talos-a in rotation in the load balancer?',
    });
    const planned = only(evaluate(lb(true, '10.0.0.99'), w, ctx(bound('talos-a'))));
    expect(planned.subject).toBe('talos-a (10.0.0.99:6443)');
  });
});

describe('apiservers', () => {
  const api = (serving: boolean, node: KubeadmNodeRef | TalosNodeRef = tnode) => ({
    apiservers: [{ node, serving }],
  });
  const seenAs = (name: string, v: boolean | undefined) =>
    world({ apiservers: new Map([[name, { ok: true, value: v }]]) });

  it('an apiserver whose node is not known yet holds only when expected out of service', () => {
    const out = only(evaluate(api(false), world(), ctx()));
    expect(out).toMatchObject({ subject: TNODE_LABEL, expected: 'apiserver out of service', status: 'ok' });
    expect(out.seen).toContain('not provisioned');
    expect(only(evaluate(api(true), world(), ctx())).status).toBe('mismatch');
  });

  it('a seen apiserver holds when serving matches', () => {
    expect(only(evaluate(api(false, cp1), seenAs('cp-1', true), ctx()))).toMatchObject({
      expected: 'apiserver out of service',
      seen: 'apiserver serving',
      status: 'mismatch',
    });
    expect(only(evaluate(api(true, cp1), seenAs('cp-1', true), ctx())).status).toBe('ok');
  });

  it('asks about the apiserver by the bound name of its node', () => {
    const c = only(evaluate(api(true), seenAs('talos-a', undefined), ctx(bound('talos-a'))));
    expect(c).toMatchObject({
      subject: 'talos-a',
      status: 'unknown',
      confirm: 'Is the apiserver on talos-a serving?',
    });
  });
});

describe('machines', () => {
  const machine = (
    state: 'provisioned' | 'running' | 'decommissioned',
    node: KubeadmNodeRef | TalosNodeRef = tnode,
  ) => ({
    machines: [{ node, state }],
  });
  const seenAs = (name: string, v: 'provisioned' | 'running' | 'decommissioned' | undefined) =>
    world({ machines: new Map([[name, { ok: true, value: v }]]) });

  it('a machine whose name is not known yet is a mismatch, whatever state is expected', () => {
    for (const state of ['provisioned', 'running', 'decommissioned'] as const) {
      const c = only(evaluate(machine(state), world(), ctx()));
      expect(c).toMatchObject({ subject: TNODE_LABEL, status: 'mismatch' });
      expect(c.seen).toContain('not provisioned');
    }
  });

  it('a seen machine holds when its state matches', () => {
    expect(only(evaluate(machine('decommissioned', cp1), seenAs('cp-1', 'running'), ctx()))).toMatchObject({
      expected: 'machine decommissioned',
      seen: 'machine running',
      status: 'mismatch',
    });
    expect(only(evaluate(machine('running', cp1), seenAs('cp-1', 'running'), ctx())).status).toBe('ok');
  });

  it('asks about the machine by its bound name', () => {
    const c = only(evaluate(machine('provisioned'), seenAs('talos-a', undefined), ctx(bound('talos-a'))));
    expect(c).toMatchObject({
      subject: 'talos-a',
      status: 'unknown',
      confirm: 'Is the machine talos-a provisioned?',
    });
  });
});

// ---- endpoint, commands, objects, files, audit, operator ----------------------------------------------

describe('endpoint', () => {
  it('holds only when /readyz was seen to answer 200', () => {
    const exp: ExpectedState = { endpoint: { readyz: true } };
    expect(only(evaluate(exp, world({ endpoint: true }), ctx()))).toMatchObject({
      section: 'endpoint',
      expected: '/readyz answers 200',
      seen: '/readyz answers 200',
      status: 'ok',
    });
    expect(only(evaluate(exp, world({ endpoint: false }), ctx()))).toMatchObject({
      seen: '/readyz fails',
      status: 'mismatch',
    });
    expect(only(evaluate(exp, world(), ctx())).status).toBe('mismatch');
    expect(evaluate({}, world({ endpoint: false }), ctx())).toEqual([]);
  });
});

describe('commands', () => {
  it('a command is not run by ferry: a question, settled by the operator', () => {
    const run = 'talosctl -n 10.0.0.41 health';
    const exp: ExpectedState = {
      commands: [{ command: { run, where: { kind: 'workstation' } }, exitCode: 0 }],
    };
    const asked = evaluate(exp, world(), ctx());
    expect(only(asked)).toMatchObject({
      section: 'commands',
      subject: run,
      expected: 'exit 0',
      seen: 'not run by ferry',
      status: 'unknown',
      confirm: `Does \`${run}\` exit 0?`,
    });
    expect(onlyQuestionsLeft(asked)).toBe(true);
    expect(holds(asked)).toBe(false);
    const yes = only(evaluate(exp, world({ confirmed: new Set([asked[0]!.confirm!]) }), ctx()));
    expect(yes).toMatchObject({ status: 'ok', seen: 'not run by ferry; the operator confirmed it' });
  });
});

describe('objects', () => {
  const secret = { kind: 'Secret', namespace: 'kube-system', name: 'x', present: true };

  it('an object with no read recorded, or whose read failed, is an unobserved mismatch', () => {
    expect(only(evaluate({ objects: [secret] }, world(), ctx()))).toMatchObject({
      subject: 'Secret kube-system/x',
      expected: 'present',
      seen: 'cannot read it: not observed',
      status: 'mismatch',
      unobserved: true,
    });
    const w = world({ objects: new Map([['Namespace//talos', { ok: false, error: 'forbidden' }]]) });
    const ns = { kind: 'Namespace', name: 'talos', present: false };
    expect(only(evaluate({ objects: [ns] }, w, ctx()))).toMatchObject({
      subject: 'Namespace talos',
      expected: 'absent',
      seen: 'cannot read it: forbidden',
      status: 'mismatch',
      unobserved: true,
    });
  });

  it('an absent object holds when expected absent, and its fields are not looked at', () => {
    const w = world({ objects: new Map([['Secret/kube-system/x', { ok: true, value: null }]]) });
    const fields = { 'data.key': 'abc' };
    expect(only(evaluate({ objects: [{ ...secret, present: false, fields }] }, w, ctx()))).toMatchObject({
      seen: 'absent',
      status: 'ok',
    });
    expect(only(evaluate({ objects: [{ ...secret, fields }] }, w, ctx()))).toMatchObject({
      seen: 'absent',
      status: 'mismatch',
    });
  });

  it('each field must read as expected; an unset field reads "(unset)"', () => {
    const w = world({
      objects: new Map([['Secret/kube-system/x', { ok: true, value: { spec: { replicas: 3 } } }]]),
    });
    const checks = evaluate(
      { objects: [{ ...secret, fields: { 'spec.replicas': '3', 'spec.paused': 'false' } }] },
      w,
      ctx(),
    );
    expect(checks.map((c) => [c.subject, c.seen, c.status])).toEqual([
      ['Secret kube-system/x', 'present', 'ok'],
      ['Secret kube-system/x spec.replicas', '3', 'ok'],
      ['Secret kube-system/x spec.paused', '(unset)', 'mismatch'],
    ]);
  });
});

describe('files', () => {
  const files = (exists: boolean, where: { kind: 'workstation' } | { kind: 'node'; node: string }) => ({
    files: [{ path: 'etcd.db', where, exists }],
  });
  const seenAs = (v: boolean | undefined) => world({ files: new Map([['etcd.db', v]]) });

  it('a workstation file is seen: it holds when it exists as expected, with no question', () => {
    const there = only(evaluate(files(true, { kind: 'workstation' }), seenAs(true), ctx()));
    expect(there).toMatchObject({
      subject: 'etcd.db on workstation',
      expected: 'exists',
      seen: 'exists',
      status: 'ok',
    });
    expect(there.confirm).toBeUndefined();
    const gone = only(evaluate(files(true, { kind: 'workstation' }), seenAs(false), ctx()));
    expect(gone).toMatchObject({ seen: 'absent', status: 'mismatch' });
    expect(gone.confirm).toBeUndefined();
    expect(only(evaluate(files(false, { kind: 'workstation' }), seenAs(false), ctx()))).toMatchObject({
      expected: 'absent',
      status: 'ok',
    });
  });

  it("a file out of ferry's reach is unknown and asks", () => {
    const c = only(evaluate(files(true, { kind: 'node', node: 'cp-1' }), seenAs(undefined), ctx()));
    expect(c).toMatchObject({
      subject: 'etcd.db on node cp-1',
      seen: "out of ferry's reach",
      status: 'unknown',
      confirm: 'Does etcd.db exist on node cp-1?',
    });
  });
});

describe('audit', () => {
  const blocker = (ruleId: string, fingerprint: string) => ({
    ruleId,
    severity: 'blocker' as const,
    title: '',
    fingerprint,
    subject: '',
    remediation: '',
  });
  const w = world({ audit: { blockers: [blocker('r1', 'f1'), blocker('r2', 'f2'), blocker('r3', 'f3')] } });
  const audit = (maxBlockers: number, acceptedBlockers: string[]) =>
    only(evaluate({ audit: { maxBlockers, acceptedBlockers } }, w, ctx()));

  it('accepted blockers do not count; the others are listed by rule', () => {
    expect(audit(0, ['f1'])).toMatchObject({
      expected: 'at most 0 unaccepted blocker(s)',
      seen: '2: r2, r3',
      status: 'mismatch',
    });
    expect(audit(0, ['f1', 'f2', 'f3'])).toMatchObject({ seen: 'no unaccepted blocker', status: 'ok' });
  });

  it('up to maxBlockers unaccepted blockers hold, one more does not', () => {
    expect(audit(2, ['f1']).status).toBe('ok');
    expect(audit(1, ['f1']).status).toBe('mismatch');
  });
});

describe('operator', () => {
  it('is unknown until the operator confirms, then ok as "confirmed"', () => {
    const exp: ExpectedState = { operator: { confirms: 'the fix is in place' } };
    expect(only(evaluate(exp, world(), ctx()))).toMatchObject({
      expected: 'confirms: the fix is in place',
      seen: 'not confirmed yet',
      status: 'unknown',
      confirm: 'the fix is in place',
    });
    const yes = only(evaluate(exp, world({ confirmed: new Set(['the fix is in place']) }), ctx()));
    expect(yes).toMatchObject({ seen: 'confirmed', status: 'ok' });
  });
});
