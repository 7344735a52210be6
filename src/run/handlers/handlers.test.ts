/**
 * Each step handler against a recording context: what it asks of which port, with which
 * arguments, what it logs and returns, and where it stops. The orchestrator around them (gates,
 * verification, journal, resume) is orchestrator.test.ts's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { buildPlan } from '../../plan/build.js';
import type { KubeadmMemberRef, MemberRef, NodeRef } from '../../plan/expected-state.js';
import { allSteps, type Plan, type StepKind, type StepOf } from '../../plan/model.js';
import { examplePlan, inputsFor } from '../../plan/testing-example.js';
import type { EtcdMemberInfo, EtcdView, EvictOutcome, LoadBalancerPort, PodView } from '../../ports/run.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { Bindings, type NodeBinding, resolveMember } from '../bindings.js';
import type { RunDeps, RunOptions } from '../deps.js';
import type { StepContext } from './context.js';
import { MAX_TRANSFER_LAG } from './etcd-move-leader.js';
import { HANDLERS } from './index.js';
import { claimedNames } from './provision.js';

let plan: Plan;
/** Worker batches of up to 3 nodes (--max-unavailable 3, --surge-replicas for shop/checkout). */
let batched: Plan;
beforeAll(async () => {
  plan = await examplePlan();
  batched = buildPlan({
    ...inputsFor(await exampleSnapshot()),
    options: { surgeReplicas: true, maxUnavailable: { kind: 'count', nodes: 3 } },
  });
});

function batchStep(): StepOf<'drain-batch'> {
  const s = allSteps(batched).find(
    (x): x is StepOf<'drain-batch'> => x.kind === 'drain-batch' && x.params.nodes.length >= 2,
  );
  if (!s) throw new Error('no worker batch of two or more nodes');
  return s;
}

function stepOf<K extends StepKind>(kind: K, pick: (s: StepOf<K>) => boolean = () => true): StepOf<K> {
  const s = allSteps(plan).find((x): x is StepOf<K> => x.kind === kind && pick(x as StepOf<K>));
  if (!s) throw new Error(`the example plan has no matching ${kind} step`);
  return s;
}

const subjectIs = (node: string) => (s: { subject: string }) => s.subject === node;

async function act<K extends StepKind>(step: StepOf<K>, ctx: StepContext) {
  const h = HANDLERS[step.kind as K];
  if (h.mode !== 'act') throw new Error(`${step.kind} has no action`);
  return (h.act as (s: StepOf<K>, c: StepContext) => Promise<unknown>)(step, ctx);
}

type TestPod = { pod: string; uid: string; controller?: { kind: string; name: string } | null };
type TestCluster = ReturnType<typeof testCluster>;

/** Pods per node for the drain handlers; `refuse` answers one eviction of a pod with an outcome. */
function testCluster(pods: Record<string, TestPod[]>) {
  return {
    pods: new Map(Object.entries(pods)),
    refuse: new Map<string, EvictOutcome>(),
    listings: new Map<string, number>(),
    inFlight: 0,
    maxInFlight: 0,
  };
}

function podView(node: string, p: TestPod): PodView {
  const [namespace, name] = p.pod.split('/') as [string, string];
  return {
    namespace,
    name,
    uid: p.uid,
    terminating: false,
    ignoredByDrain: false,
    node,
    ready: true,
    controller: p.controller === undefined ? { kind: 'Job', name: 'j' } : p.controller,
    labels: {},
    finished: false,
    pinnedTo: undefined,
  };
}

/** A context whose ports record every call; `view` is what etcd shows. */
function recorder(
  o: {
    signal?: AbortSignal;
    view?: EtcdView;
    lb?: boolean;
    snapshot?: boolean;
    options?: RunOptions;
    bindings?: NodeBinding[];
    cluster?: TestCluster;
    journaled?: { stepId: string | null; purpose: string; data: unknown }[];
  } = {},
) {
  const calls: string[] = [];
  const logs: string[] = [];
  const cluster = o.cluster ?? testCluster({});
  const journaled: { stepId: string | null; purpose: string; data: unknown }[] = [...(o.journaled ?? [])];
  const steered: { except?: string; first?: string }[] = [];
  const bound: NodeBinding[] = [];
  const bindings = Bindings.from(o.bindings ?? []);
  const kubeadmIds = new Set(plan.controlPlanes.flatMap((c) => (c.member ? [c.member.id] : [])));
  let view = o.view ?? { members: [], statuses: [], leaderId: undefined, healthy: [] };
  let failSteerAfter: number | undefined;
  const signal = o.signal ?? new AbortController().signal;
  const lb: LoadBalancerPort = {
    kind: 'test',
    add: async (b) => void calls.push(`lb add ${b.node} ${b.address}:${b.port}`),
    remove: async (b) => void calls.push(`lb remove ${b.node} ${b.address}:${b.port}`),
  };
  const deps = {
    plan,
    planFile: '/plans/p/plan.json',
    etcd: {
      observe: async () => view,
      moveLeader: async (id: string, s?: AbortSignal) => {
        calls.push(`moveLeader ${id}${s === signal ? ' (run signal)' : ''}`);
      },
      removeMember: async (id: string, s?: AbortSignal) => {
        calls.push(`removeMember ${id}${s === signal ? ' (run signal)' : ''}`);
        const before = view.members.length;
        view = { ...view, members: view.members.filter((m) => m.id !== id) };
        return before === view.members.length ? ('already-absent' as const) : ('removed' as const);
      },
    },
    kube: {
      setUnschedulable: async (n: string, u: boolean) => void calls.push(`unschedulable ${n} ${u}`),
      deleteNode: async (n: string) => void calls.push(`deleteNode ${n}`),
      scaleWorkload: async (kind: string, ns: string, name: string, replicas: number) =>
        void calls.push(`scale ${kind} ${ns}/${name} ${replicas}`),
      podsOnNode: async (n: string) => {
        cluster.listings.set(n, (cluster.listings.get(n) ?? 0) + 1);
        return (cluster.pods.get(n) ?? []).map((p) => podView(n, p));
      },
      evict: async (ns: string, name: string) => {
        const pod = `${ns}/${name}`;
        calls.push(`evict ${pod}`);
        const outcome = cluster.refuse.get(pod);
        if (outcome) {
          cluster.refuse.delete(pod); // refused once, then allowed
          return outcome;
        }
        cluster.inFlight += 1;
        cluster.maxInFlight = Math.max(cluster.maxInFlight, cluster.inFlight);
        await new Promise((r) => setTimeout(r, 20));
        cluster.inFlight -= 1;
        for (const [node, ps] of cluster.pods)
          cluster.pods.set(
            node,
            ps.filter((p) => p.pod !== pod),
          );
        return { kind: 'evicted' as const };
      },
      listPods: async () => [],
      listPdbs: async () => [],
      getPdb: async (ns: string, name: string) => ({
        namespace: ns,
        name,
        selector: {},
        disruptionsAllowed: 1,
      }),
    },
    journal: {
      observe: (stepId: string | null, purpose: string, _ok: boolean | null, data: unknown) =>
        void journaled.push({ stepId, purpose, data }),
      observations: (f: { stepId?: string; purpose?: string }) =>
        journaled
          .filter((j) => j.stepId === f.stepId && j.purpose === f.purpose)
          .map((j) => ({ data: j.data })),
    },
    provisioner: {
      kind: 'test',
      provision: async (req: Record<string, unknown>) => {
        calls.push(`provision ${JSON.stringify(req)}`);
        return { name: 'talos-abc', address: '10.9.9.9' };
      },
      decommission: async (req: Record<string, unknown>) =>
        void calls.push(`decommission ${JSON.stringify(req)}`),
    },
    lb: o.lb ? lb : undefined,
    ...(o.snapshot && {
      etcdSnapshot: async (file: string, s: AbortSignal) => {
        calls.push(`snapshot ${file}${s === signal ? ' (run signal)' : ''}`);
        return { file, bytes: 1, sha256: 'a', fileSha256: 'a', encrypted: false };
      },
    }),
  } as unknown as RunDeps;
  const ctx: StepContext = {
    deps,
    options: o.options ?? {},
    bindings,
    kubeadmIds,
    action: { stepId: 's', timeoutMs: 1234, signal, log: (l) => logs.push(l) },
    log: (l) => logs.push(l),
    requireName(ref: NodeRef) {
      const n = bindings.nodeName(ref);
      if (!n) throw new FerryError('gate', `the name of ${ref.kind} node is not known`);
      return n;
    },
    bind(b) {
      bound.push(b);
      bindings.merge(b);
    },
    operatorAction: async () => {
      calls.push('operator');
      return { operator: true };
    },
    steerProbe: async (_v, except, first) => {
      if (failSteerAfter !== undefined && steered.length >= failSteerAfter) throw new Error('probe gone');
      steered.push({ ...(except && { except }), ...(first && { first }) });
    },
    resolveMember: (ref, v) => resolveMember(ref, v.members, bindings, kubeadmIds),
  };
  return {
    ctx,
    calls,
    logs,
    journaled,
    cluster,
    steered,
    bound,
    failSteerAfter: (n: number) => {
      failSteerAfter = n;
    },
  };
}

const member = (id: string, name: string, o: Partial<EtcdMemberInfo> = {}): EtcdMemberInfo => ({
  id,
  name,
  peerURLs: [`https://10.0.0.${id}:2380`],
  clientURLs: [`https://10.0.0.${id}:2379`],
  isLearner: false,
  ...o,
});

function etcdView(
  members: EtcdMemberInfo[],
  leaderId: string,
  o: { unhealthy?: string[]; applied?: Record<string, number>; statusFails?: string[] } = {},
): EtcdView {
  return {
    members,
    statuses: members.map((m) =>
      o.statusFails?.includes(m.id)
        ? { ok: false as const, endpoint: m.clientURLs[0]!, error: 'deadline exceeded' }
        : {
            ok: true as const,
            memberId: m.id,
            endpoint: m.clientURLs[0]!,
            leaderId,
            raftTerm: '3',
            raftIndex: '100000',
            raftAppliedIndex: String(o.applied?.[m.id] ?? 100_000),
            isLearner: m.isLearner,
            version: '3.5.16',
            errors: [],
          },
    ),
    leaderId,
    healthy: members.filter((m) => !o.unhealthy?.includes(m.id)).map((m) => m.id),
  } as EtcdView;
}

describe('node steps', () => {
  it('cordon marks the node unschedulable, by the name it has now', async () => {
    const r = recorder();
    const s = stepOf('cordon', subjectIs('cp-1'));
    expect(await act(s, r.ctx)).toEqual({ node: 'cp-1' });
    expect(r.calls).toEqual(['unschedulable cp-1 true']);
  });

  it('drain evicts through the Eviction API, logs evictions and refusals, and journals each against the step', async () => {
    const cluster = testCluster({
      'cp-1': [
        { pod: 'shop/web-1', uid: 'u1' },
        { pod: 'shop/web-2', uid: 'u2' },
      ],
    });
    cluster.refuse.set('shop/web-2', { kind: 'blocked', pdb: 'shop/web', message: 'would violate' });
    const r = recorder({ cluster });
    const s = stepOf('drain', subjectIs('cp-1'));
    expect(await act(s, r.ctx)).toEqual({ node: 'cp-1', evicted: ['shop/web-1', 'shop/web-2'] });
    expect(r.calls).toEqual(['evict shop/web-1', 'evict shop/web-2', 'evict shop/web-2']);
    expect(r.logs.slice(0, 3)).toEqual([
      'evicted shop/web-1 from cp-1',
      'eviction of shop/web-2 refused by PodDisruptionBudget shop/web: would violate',
      'evicted shop/web-2 from cp-1',
    ]);
    expect(r.journaled.map((j) => `${j.stepId} ${j.purpose} ${(j.data as { kind: string }).kind}`)).toEqual([
      's drain-progress baseline',
      's drain-progress evicted',
      's drain-progress blocked',
      's drain-progress evicted',
      's drain-progress node-drained',
      's drain-progress replacements-ready',
    ]);
  });

  it('drain stops before any eviction when a pod has no controller, and names it', async () => {
    const cluster = testCluster({
      'cp-1': [
        { pod: 'shop/web-1', uid: 'u1' },
        { pod: 'shop/debug', uid: 'u2', controller: null },
      ],
    });
    const r = recorder({ cluster });
    const err = await act(stepOf('drain', subjectIs('cp-1')), r.ctx).then(
      () => undefined,
      (e: unknown) => e as FerryError,
    );
    expect(err?.kind).toBe('gate');
    expect(err?.message).toContain('shop/debug');
    expect(err?.message).toContain('nothing was evicted');
    expect(err?.remediation).toContain('--evict-bare-pods');
    expect(r.calls).toEqual([]);
  });

  it('drain with --evict-bare-pods evicts it, and journals that the operator accepted it', async () => {
    const cluster = testCluster({ 'cp-1': [{ pod: 'shop/debug', uid: 'u2', controller: null }] });
    const r = recorder({ cluster, options: { evictBarePods: true } });
    await act(stepOf('drain', subjectIs('cp-1')), r.ctx);
    expect(r.calls).toEqual(['evict shop/debug']);
    expect(r.journaled.find((j) => (j.data as { kind: string }).kind === 'bare-pods-accepted')?.data).toEqual(
      {
        kind: 'bare-pods-accepted',
        pods: ['shop/debug'],
      },
    );
  });

  it('drain-batch cordons every node, then drains them in parallel, never more than --drain-concurrency at once', async () => {
    const s = batchStep();
    const names = s.params.nodes.map((n) => (n.node.kind === 'kubeadm' ? n.node.name : ''));
    const pods = (n: string) => [1, 2, 3].map((i) => ({ pod: `app/${n}-${i}`, uid: `${n}-${i}` }));
    const cluster = testCluster(Object.fromEntries(names.map((n) => [n, pods(n)])));
    const r = recorder({ cluster, options: { drainConcurrency: 2 } });
    const out = (await act(s, r.ctx)) as { podsMoved: number; nodes: { node: string; evicted: number }[] };
    expect(r.calls.slice(0, names.length)).toEqual(names.map((n) => `unschedulable ${n} true`));
    expect(out.podsMoved).toBe(3 * names.length);
    expect(out.nodes.map((n) => n.node)).toEqual(names);
    // Two nodes at a time: each evicts its pods one after another.
    expect(cluster.maxInFlight).toBe(Math.min(2, names.length));
  });

  it('a resumed drain-batch never evicts a pod an earlier attempt evicted: it waits for it to go', async () => {
    const s = batchStep();
    const first = s.params.nodes[0]!.node;
    const name = first.kind === 'kubeadm' ? first.name : '';
    const cluster = testCluster({
      [name]: [
        { pod: 'app/a', uid: 'ua' },
        { pod: 'app/b', uid: 'ub' },
      ],
    });
    const prior = [
      {
        stepId: 's',
        purpose: 'drain-progress',
        data: { kind: 'evicted', evicted: { node: name, pod: 'app/a', uid: 'ua', controller: null } },
      },
    ];
    const r = recorder({ cluster, journaled: prior });
    // app/a (evicted before the kill) leaves once the kubelet is done with it.
    const gone = setInterval(() => {
      if ((cluster.listings.get(name) ?? 0) >= 2)
        cluster.pods.set(
          name,
          (cluster.pods.get(name) ?? []).filter((p) => p.pod !== 'app/a'),
        );
    }, 5);
    try {
      await act(s, r.ctx);
    } finally {
      clearInterval(gone);
    }
    expect(r.calls.filter((c) => c.startsWith('evict'))).toEqual(['evict app/b']);
  });

  it('delete-node deletes the Node of the old machine', async () => {
    const r = recorder();
    expect(await act(stepOf('delete-node', subjectIs('cp-2')), r.ctx)).toEqual({ node: 'cp-2' });
    expect(r.calls).toEqual(['deleteNode cp-2']);
  });

  it('decommission tells the provisioner the role and address of the machine', async () => {
    const r = recorder();
    const cp = stepOf('decommission', subjectIs('cp-3'));
    const worker = stepOf('decommission', (s) => !plan.controlPlanes.some((c) => c.node === s.subject));
    expect(await act(cp, r.ctx)).toEqual({ node: 'cp-3' });
    await act(worker, r.ctx);
    const address = (ref: NodeRef) => (ref.kind === 'kubeadm' ? ref.address : null);
    expect(r.calls).toEqual([
      `decommission ${JSON.stringify({ node: 'cp-3', address: address(cp.params.node), role: 'controlplane' })}`,
      `decommission ${JSON.stringify({ node: worker.subject, address: address(worker.params.node), role: 'worker' })}`,
    ]);
  });

  it('a node step whose Talos name is not known yet stops as a gate, before any call', async () => {
    const r = recorder();
    const s = stepOf('wait-node-ready', (x) => x.params.node.kind === 'talos');
    const talosRef = s.params.node;
    const unnamed = {
      ...stepOf('cordon'),
      params: { node: { ...talosRef, name: null } },
    } as StepOf<'cordon'>;
    await expect(act(unnamed, r.ctx)).rejects.toMatchObject({ kind: 'gate' });
    expect(r.calls).toEqual([]);
  });
});

describe('load balancer', () => {
  const lbStep = (kind: 'lb-add' | 'lb-remove') =>
    stepOf(kind, (s) => (kind === 'lb-add' ? s.params.node.kind === 'talos' : s.subject === 'cp-1'));

  it('without a load-balancer port both are operator steps', async () => {
    const r = recorder();
    expect(await act(lbStep('lb-add'), r.ctx)).toEqual({ operator: true });
    expect(await act(lbStep('lb-remove'), r.ctx)).toEqual({ operator: true });
    expect(r.calls).toEqual(['operator', 'operator']);
  });

  it('adds the new control plane at the address it was given, removes the old one at its own', async () => {
    const add = lbStep('lb-add');
    const talos = add.params.node as Extract<NodeRef, { kind: 'talos' }>;
    const r = recorder({
      lb: true,
      options: { lbSettleSeconds: 0 },
      bindings: [{ replaces: talos.replaces, name: 'talos-abc', address: '10.9.9.9' }],
    });
    const remove = lbStep('lb-remove');
    expect(await act(add, r.ctx)).toEqual({
      backend: { node: 'talos-abc', address: '10.9.9.9', port: add.params.port },
    });
    await act(remove, r.ctx);
    const old = remove.params.node.kind === 'kubeadm' ? remove.params.node.address : null;
    expect(r.calls).toEqual([
      `lb add talos-abc 10.9.9.9:${add.params.port}`,
      `lb remove cp-1 ${old}:${remove.params.port}`,
    ]);
    expect(r.logs).toEqual([]);
  });

  it("waits the shorter of the plan's and the operator's settle time", async () => {
    const remove = lbStep('lb-remove');
    expect(remove.params.settleSeconds).toBeGreaterThan(0.05);
    const r = recorder({ lb: true, options: { lbSettleSeconds: 0.05 } });
    const t0 = Date.now();
    await act(remove, r.ctx);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(r.logs).toEqual(['waiting 0.05 s for the load balancer to settle']);

    const longer = { ...remove, params: { ...remove.params, settleSeconds: 0.02 } };
    const r2 = recorder({ lb: true, options: { lbSettleSeconds: 60 } });
    await act(longer, r2.ctx);
    expect(r2.logs).toEqual(['waiting 0.02 s for the load balancer to settle']);

    // The run's signal cuts the wait short (a stop during the settle time).
    const ac = new AbortController();
    const r4 = recorder({ lb: true, options: {}, signal: ac.signal });
    const t1 = Date.now();
    setTimeout(() => ac.abort(new Error('stopped')), 20);
    await expect(act(remove, r4.ctx)).rejects.toThrow();
    expect(Date.now() - t1).toBeLessThan(remove.params.settleSeconds * 1000);

    const r3 = recorder({ lb: true, options: {} });
    await act({ ...remove, params: { ...remove.params, settleSeconds: 0.01 } }, r3.ctx);
    expect(r3.logs).toEqual(['waiting 0.01 s for the load balancer to settle']);
  });
});

describe('etcd-snapshot', () => {
  it('writes a relative file beside the plan, an absolute one where it says, with the run signal', async () => {
    const s = stepOf('etcd-snapshot');
    const r = recorder({ snapshot: true });
    await act({ ...s, params: { ...s.params, file: 'snap.db' } }, r.ctx);
    // What the writer reports (sealed, hashed) is the step's journaled result.
    expect(await act({ ...s, params: { ...s.params, file: '/backups/snap.db' } }, r.ctx)).toEqual({
      file: '/backups/snap.db',
      bytes: 1,
      sha256: 'a',
      fileSha256: 'a',
      encrypted: false,
    });
    expect(r.calls).toEqual([
      'snapshot /plans/p/snap.db (run signal)',
      'snapshot /backups/snap.db (run signal)',
    ]);
  });

  it('is an operator step when the run has no etcd client for it', async () => {
    const r = recorder();
    expect(await act(stepOf('etcd-snapshot'), r.ctx)).toEqual({ operator: true });
  });
});

describe('provision', () => {
  it('asks for the planned machine and binds the name and address the provisioner reports', async () => {
    const s = stepOf('provision', subjectIs('cp-1'));
    const r = recorder();
    expect(await act(s, r.ctx)).toEqual({ name: 'talos-abc', address: '10.9.9.9' });
    const req = JSON.parse(r.calls[0]!.replace(/^provision /, ''));
    expect(req).toMatchObject({
      replaces: 'cp-1',
      name: s.params.node.name,
      address: s.params.node.address,
      role: s.params.role,
      talosVersion: s.params.talosVersion,
      machineConfig: s.params.machineConfig,
      endpoint: plan.cluster.endpoint,
    });
    expect(req.claimed).toEqual(claimedNames(plan, Bindings.from([]), 'cp-1'));
    expect(r.bound).toEqual([{ replaces: 'cp-1', name: 'talos-abc', address: '10.9.9.9' }]);
  });

  it('a resumed provision asks for the machine already bound', async () => {
    const s = stepOf('provision', subjectIs('cp-2'));
    const r = recorder({ bindings: [{ replaces: 'cp-2', name: 'talos-xyz', address: '10.8.8.8' }] });
    await act(s, r.ctx);
    expect(JSON.parse(r.calls[0]!.replace(/^provision /, ''))).toMatchObject({
      name: 'talos-xyz',
      address: '10.8.8.8',
    });
  });

  it('claims every old node, the other planned names and the names bound so far, never its own', () => {
    const b = Bindings.from([
      { replaces: 'cp-2', name: 'talos-bound' },
      { replaces: 'cp-1', name: 'talos-mine' },
      { replaces: 'cp-3' },
    ]);
    const claimed = claimedNames(plan, b, 'cp-1');
    for (const c of plan.controlPlanes) expect(claimed).toContain(c.node);
    for (const w of plan.workers) expect(claimed).toContain(w.node);
    expect(claimed).toContain('talos-bound');
    expect(claimed).not.toContain('talos-mine');
    const own = plan.controlPlanes.find((c) => c.node === 'cp-1')?.replacement.name;
    const others = [...plan.controlPlanes, ...plan.workers]
      .map((x) => x.replacement)
      .filter((x) => x.replaces !== 'cp-1' && x.name)
      .map((x) => x.name);
    for (const n of others) expect(claimed).toContain(n);
    if (own && !plan.controlPlanes.some((c) => c.node === own)) expect(claimed).not.toContain(own);
    expect(new Set(claimed).size).toBe(claimed.length);
  });
});

describe('etcd-remove-member', () => {
  const kubeadm = (node: string): KubeadmMemberRef => {
    const s = stepOf('etcd-remove-member', subjectIs(node));
    return s.params.member as KubeadmMemberRef;
  };

  it('steers the probe off the member, removes it with the run signal, steers again', async () => {
    const s = stepOf('etcd-remove-member', subjectIs('cp-1'));
    const m = kubeadm('cp-1');
    const r = recorder({ view: etcdView([member(m.id, m.name), member('7', 'talos-a')], '7') });
    expect(await act(s, r.ctx)).toEqual({ memberId: m.id, outcome: 'removed' });
    expect(r.calls).toEqual([`removeMember ${m.id} (run signal)`]);
    expect(r.steered).toEqual([{ except: m.id }, {}]);
    expect(r.logs).toEqual([`etcd member ${m.name} (${m.id}) removed`]);
  });

  it('says when the member was already gone by the time MemberRemove ran', async () => {
    const s = stepOf('etcd-remove-member', subjectIs('cp-1'));
    const m = kubeadm('cp-1');
    const r = recorder({ view: etcdView([member(m.id, m.name)], m.id) });
    // Removed by someone else between the list and the call: the port reports it absent.
    (r.ctx.deps.etcd as { removeMember: unknown }).removeMember = async () => 'already-absent';
    expect(await act(s, r.ctx)).toEqual({ memberId: m.id, outcome: 'already-absent' });
    expect(r.logs).toEqual([`etcd member ${m.name} (${m.id}) was already gone`]);
  });

  it('a member no longer listed is nothing to send', async () => {
    const s = stepOf('etcd-remove-member', subjectIs('cp-1'));
    const r = recorder({ view: etcdView([member('7', 'talos-a')], '7') });
    const out = (await act(s, r.ctx)) as { removed: boolean; reason: string };
    expect(out.removed).toBe(false);
    expect(out.reason).toMatch(/^cp-1 is no longer listed/);
    expect(r.calls).toEqual([]);
    expect(r.steered).toEqual([]);
  });

  it('a probe that cannot be steered after the removal does not fail the step', async () => {
    const s = stepOf('etcd-remove-member', subjectIs('cp-1'));
    const m = kubeadm('cp-1');
    const r = recorder({ view: etcdView([member(m.id, m.name), member('7', 'talos-a')], '7') });
    r.failSteerAfter(1);
    expect(await act(s, r.ctx)).toEqual({ memberId: m.id, outcome: 'removed' });
  });
});

describe('etcd-move-leader', () => {
  const moveStep = () => stepOf('etcd-move-leader');
  /** The step's old member, plus one member per candidate (named as bound Talos members). */
  function world(
    o: { learner?: number[]; unhealthy?: number[]; lagging?: number[]; leader?: 'from' | 'other' } = {},
  ) {
    const s = moveStep();
    const from = s.params.from as KubeadmMemberRef;
    const cands = s.params.to as MemberRef[];
    const ids = cands.map((c, i) => (c.kind === 'kubeadm' ? c.id : String(100 + i)));
    const bindings = cands.map((c, i) =>
      c.kind === 'talos'
        ? { replaces: c.replaces, name: `talos-${i}`, memberId: ids[i]! }
        : { replaces: `x${i}` },
    );
    const members = [
      member(from.id, from.name),
      ...cands.map((c, i) =>
        member(ids[i]!, c.kind === 'talos' ? `talos-${i}` : c.name, {
          isLearner: o.learner?.includes(i) ?? false,
        }),
      ),
    ];
    const applied: Record<string, number> = {};
    for (const i of o.lagging ?? []) applied[ids[i]!] = 100_000 - Number(MAX_TRANSFER_LAG) - 1;
    const view = etcdView(members, o.leader === 'other' ? ids[0]! : from.id, {
      unhealthy: (o.unhealthy ?? []).map((i) => ids[i]!),
      applied,
    });
    return { s, from, ids, r: recorder({ view, bindings }) };
  }

  it('the example moves leadership away from a kubeadm member towards several candidates', () => {
    const s = moveStep();
    expect(s.params.from.kind).toBe('kubeadm');
    expect(s.params.to.length).toBeGreaterThanOrEqual(2);
  });

  it('moves to the first candidate when it is a healthy, caught-up voter; steers the probe around it', async () => {
    const { s, from, ids, r } = world();
    expect(await act(s, r.ctx)).toEqual({ moved: true, from: from.id, to: ids[0] });
    expect(r.calls).toEqual([`moveLeader ${ids[0]} (run signal)`]);
    expect(r.steered).toEqual([{}, { except: from.id, first: ids[0] }]);
    expect(r.logs).toEqual([`etcd leadership moved from ${from.name} to talos-0`]);
  });

  it.each([
    ['a learner', { learner: [0] }],
    ['unhealthy', { unhealthy: [0] }],
    [`more than ${MAX_TRANSFER_LAG} entries behind`, { lagging: [0] }],
  ])('skips a first candidate that is %s', async (_what, o) => {
    const { s, ids, r } = world(o);
    expect(await act(s, r.ctx)).toMatchObject({ moved: true, to: ids[1] });
  });

  it('a candidate exactly at the lag limit may lead', async () => {
    const { s, ids, r } = world();
    const v = await r.ctx.deps.etcd.observe();
    const st = v.statuses.find((x) => x.ok && x.memberId === ids[0]) as { raftAppliedIndex: string };
    st.raftAppliedIndex = String(100_000 - Number(MAX_TRANSFER_LAG));
    expect(await act(s, r.ctx)).toMatchObject({ to: ids[0] });
  });

  it('when the leader has no status, lag cannot be judged and is not held against a candidate', async () => {
    const { s, from, ids, r } = world({ lagging: [0] });
    const v = await r.ctx.deps.etcd.observe();
    const i = v.statuses.findIndex((x) => x.ok && x.memberId === from.id);
    v.statuses[i] = {
      ok: false,
      endpoint: 'https://x:2379',
      error: 'deadline',
    } as (typeof v.statuses)[number];
    expect(await act(s, r.ctx)).toMatchObject({ to: ids[0] });
  });

  it('a candidate without an endpoint status is not judged on lag', async () => {
    const { s, ids, r } = world();
    const v = await r.ctx.deps.etcd.observe();
    v.statuses = v.statuses.filter((x) => !(x.ok && x.memberId === ids[0]));
    expect(await act(s, r.ctx)).toMatchObject({ to: ids[0] });
  });

  it("lag is measured against the leader's index, wherever its status is listed", async () => {
    const { s, from, ids, r } = world();
    const v = await r.ctx.deps.etcd.observe();
    // The leader's status last; the first listed is a candidate far ahead of the first candidate.
    const leader = v.statuses.find((x) => x.ok && x.memberId === from.id)!;
    v.statuses = [...v.statuses.filter((x) => x !== leader), leader];
    for (const x of v.statuses) if (x.ok && x.memberId === ids[1]) x.raftIndex = '900000';
    for (const x of v.statuses) if (x.ok && x.memberId === ids[0]) x.raftAppliedIndex = '99500';
    v.statuses.unshift(
      v.statuses.splice(
        v.statuses.findIndex((x) => x.ok && x.memberId === ids[1]),
        1,
      )[0]!,
    );
    expect(await act(s, r.ctx)).toMatchObject({ to: ids[0] });
  });

  it('stops as a gate, moving nothing, when no candidate qualifies', async () => {
    const { s, r } = world({ learner: [0], unhealthy: [1], lagging: [2, 3, 4] });
    const err = await act(s, r.ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect(err).toMatchObject({ kind: 'gate' });
    const names = s.params.to.map((m) => m.name ?? m.kind).join(', ');
    expect((err as Error).message).toBe(
      `no caught-up, healthy voter to move etcd leadership to (candidates: ${names})`,
    );
    expect(r.calls).toEqual([]);
  });

  it('a member that does not lead (any more) is left alone; the probe is steered off it', async () => {
    const { s, from, r } = world({ leader: 'other' });
    expect(await act(s, r.ctx)).toEqual({ moved: false, reason: 'it does not lead (any more)' });
    expect(r.calls).toEqual([]);
    expect(r.steered).toEqual([{ except: from.id }]);
  });

  it('a member that is not listed at all stops as a gate', async () => {
    const { s, r } = world();
    const v = await r.ctx.deps.etcd.observe();
    v.members.splice(0, 1);
    await expect(act(s, r.ctx)).rejects.toMatchObject({
      kind: 'gate',
      message: `etcd member ${s.params.from.name} is not in the member list`,
    });
  });
});

describe('--surge-replicas', () => {
  let surged: Plan;
  beforeAll(async () => {
    surged = buildPlan({ ...inputsFor(await exampleSnapshot()), options: { surgeReplicas: true } });
  });
  const scaleStep = (purpose: 'surge' | 'restore') => {
    const s = allSteps(surged).find(
      (x): x is StepOf<'scale-workload'> => x.kind === 'scale-workload' && x.params.purpose === purpose,
    );
    if (!s) throw new Error(`no ${purpose} step`);
    return s;
  };

  it('scale-workload sets the replicas through the kube port: one more first, the count it had after', async () => {
    const r = recorder();
    expect(await act(scaleStep('surge'), r.ctx)).toEqual({
      workload: 'Deployment shop/checkout',
      replicas: 3,
    });
    expect(await act(scaleStep('restore'), r.ctx)).toEqual({
      workload: 'Deployment shop/checkout',
      replicas: 2,
    });
    expect(r.calls).toEqual(['scale Deployment shop/checkout 3', 'scale Deployment shop/checkout 2']);
    expect(r.logs).toEqual([
      'Deployment shop/checkout: spec.replicas 3',
      'Deployment shop/checkout: spec.replicas 2',
    ]);
  });

  it('wait-workload-ready has no action: its verification waits for the Ready replicas', () => {
    expect(HANDLERS['wait-workload-ready'].mode).toBe('wait');
    const w = allSteps(surged).find((x) => x.kind === 'wait-workload-ready')!;
    expect(w.verify.expect.objects).toEqual([
      {
        kind: 'Deployment',
        namespace: 'shop',
        name: 'checkout',
        present: true,
        fields: { 'spec.replicas': '3', 'status.readyReplicas': '3' },
      },
    ]);
  });
});

describe('provision-request and provision-detect (a worker batch)', () => {
  function requestStep(): StepOf<'provision-request'> {
    const s = allSteps(batched).find(
      (x): x is StepOf<'provision-request'> =>
        x.kind === 'provision-request' && x.params.machines.length >= 2,
    );
    if (!s) throw new Error('no worker batch of two or more machines');
    return s;
  }
  const detectsOf = (req: StepOf<'provision-request'>) =>
    allSteps(batched).filter(
      (x): x is StepOf<'provision-detect'> =>
        x.kind === 'provision-detect' &&
        req.params.machines.some((m) => m.node.replaces === x.params.node.replaces),
    );
  type Port = RunDeps['provisioner'];
  const withProvisioner = (r: ReturnType<typeof recorder>, p: Partial<Port>) => {
    Object.assign(r.ctx.deps, { provisioner: { kind: 'test', ...p } });
    return r;
  };

  it('asks for every machine of the batch in one call and binds each the provisioner says it started', async () => {
    const step = requestStep();
    const asked: string[][] = [];
    const r = withProvisioner(recorder(), {
      requestBatch: async (reqs, _ctx, started) => {
        asked.push(reqs.map((q) => q.replaces));
        started(reqs[0]!, { name: 'talos-first', address: '10.1.1.1' });
      },
    });
    const replaces = step.params.machines.map((m) => m.node.replaces);
    expect(await act(step, r.ctx)).toEqual({
      requested: replaces,
      alreadyBound: 0,
      started: { [replaces[0]!]: 'talos-first' },
    });
    expect(asked).toEqual([replaces]);
    expect(r.bound).toEqual([{ replaces: replaces[0], name: 'talos-first', address: '10.1.1.1' }]);
  });

  it('asked again, asks only for the machines not bound yet', async () => {
    const step = requestStep();
    const [first, ...rest] = step.params.machines.map((m) => m.node.replaces);
    const asked: string[][] = [];
    const r = withProvisioner(recorder({ bindings: [{ replaces: first!, name: 'talos-bound' }] }), {
      requestBatch: async (reqs) => void asked.push(reqs.map((q) => q.replaces)),
    });
    expect(await act(step, r.ctx)).toMatchObject({ requested: rest, alreadyBound: 1 });
    expect(asked).toEqual([rest]);
  });

  it('a provisioner that cannot ask ahead provisions the batch one machine at a time, binding each', async () => {
    const step = requestStep();
    const r = recorder();
    await act(step, r.ctx);
    expect(r.calls.map((c) => JSON.parse(c.replace(/^provision /, '')).replaces)).toEqual(
      step.params.machines.map((m) => m.node.replaces),
    );
    expect(r.bound.map((b) => b.name)).toEqual(step.params.machines.map(() => 'talos-abc'));
  });

  it('a detection bound by the request returns it without asking; otherwise it asks and binds', async () => {
    const [d1, d2] = detectsOf(requestStep());
    const detected: string[] = [];
    const r = withProvisioner(
      recorder({ bindings: [{ replaces: d1!.params.node.replaces, name: 'talos-1', address: null }] }),
      {
        detect: async (q) => {
          detected.push(q.replaces);
          return { name: 'talos-2', address: '10.2.2.2' };
        },
      },
    );
    expect(await act(d1!, r.ctx)).toEqual({ name: 'talos-1', address: null, boundBy: 'request' });
    expect(await act(d2!, r.ctx)).toEqual({ name: 'talos-2', address: '10.2.2.2', boundBy: 'detect' });
    expect(detected).toEqual([d2!.params.node.replaces]);
    expect(r.bound).toEqual([{ replaces: d2!.params.node.replaces, name: 'talos-2', address: '10.2.2.2' }]);
  });

  it('a detection with nothing bound and no way to look stops, naming the request step to retry', async () => {
    const req = requestStep();
    const [d1] = detectsOf(req);
    const r = withProvisioner(recorder(), { provision: async () => ({ name: 'x', address: null }) });
    Object.assign(r.ctx.deps, { plan: batched });
    const err = (await act(d1!, r.ctx).catch((e: unknown) => e)) as FerryError;
    expect(err.kind).toBe('gate');
    expect(err.remediation).toContain(`--retry ${req.id}`);
  });
});

describe('modes', () => {
  it('the waits and observations have no action; the act kinds do', () => {
    const modes = Object.fromEntries(Object.entries(HANDLERS).map(([k, h]) => [k, h.mode]));
    expect(modes).toMatchObject({
      'preflight-audit': 'observe',
      gate: 'observe',
      'verify-membership': 'observe',
      'wait-member-joined': 'wait',
      'wait-member-voter': 'wait',
      'wait-node-ready': 'wait',
      'wait-workload-ready': 'wait',
      'scale-workload': 'act',
      cordon: 'act',
      drain: 'act',
      provision: 'act',
    });
    const pointOfNoReturn = Object.entries(HANDLERS)
      .filter(([, h]) => h.mode === 'act' && h.pointOfNoReturn)
      .map(([k]) => k)
      .sort();
    expect(pointOfNoReturn).toEqual(['decommission', 'delete-node', 'etcd-remove-member']);
  });

  it.each([
    'stop-apiserver',
    'kubeadm-prep',
    'apply-kit-file',
    'manual',
    'delete-bootstrap-token',
    'relabel-kube-proxy',
    'wipe-pki-copies',
  ] as const)('%s is carried out by a person (or the lab standing in)', async (kind) => {
    const s = allSteps(plan).find((x) => x.kind === kind);
    const r = recorder();
    const fake = s ?? ({ kind, id: 'x', subject: 'cluster', params: {} } as unknown as StepOf<typeof kind>);
    expect(await act(fake as StepOf<typeof kind>, r.ctx)).toEqual({ operator: true });
  });
});
