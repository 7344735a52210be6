/**
 * Test support: the orchestrator against an in-memory world (etcd members, nodes with pods,
 * machines) and a small control-plane plan: cordon, drain, move leadership, remove the member,
 * decommission. Used by the orchestrator's unit tests and by the signal tests with a real
 * Alertmanager.
 */
import type { ExpectedState, KubeadmMemberRef, KubeadmNodeRef } from '../plan/expected-state.js';
import type { Plan, Step } from '../plan/model.js';
import type {
  EtcdAdminPort,
  EtcdMemberInfo,
  EtcdView,
  KubeAdminPort,
  MachineState,
  NodeView,
  OperatorPort,
  ProvisionerPort,
} from '../ports/run.js';
import type { RunDeps } from './deps.js';
import type { Journal } from './journal.js';
import { Orchestrator, type RunOptions } from './orchestrator.js';

export const n1: KubeadmNodeRef = { kind: 'kubeadm', name: 'n1', address: '10.0.0.1' };
export const m1: KubeadmMemberRef = {
  kind: 'kubeadm',
  name: 'n1',
  id: '18446744073709551601',
  idHex: 'fffffffffffffff1',
  node: 'n1',
  clientURL: 'https://10.0.0.1:2379',
};
export const m2: KubeadmMemberRef = {
  kind: 'kubeadm',
  name: 'n2',
  id: '18446744073709551602',
  idHex: 'fffffffffffffff2',
  node: 'n2',
  clientURL: 'https://10.0.0.2:2379',
};

/** An in-memory cluster: etcd members, nodes with pods, machines. */
export class World {
  members: EtcdMemberInfo[] = [
    m1,
    m2,
    { ...m2, id: '3', name: 'n3', clientURL: 'https://10.0.0.3:2379' },
  ].map((m) => ({
    id: m.id,
    name: m.name,
    peerURLs: [],
    clientURLs: [m.clientURL!],
    isLearner: false,
  }));
  leader = m1.id;
  nodes = new Map<string, NodeView>([
    [
      'n1',
      {
        name: 'n1',
        ready: true,
        unschedulable: false,
        labels: {},
        addresses: ['10.0.0.1'],
        osImage: 'Debian',
      },
    ],
  ]);
  pods = new Map<string, string[]>([['n1', ['app/web-1']]]);
  machines = new Map<string, MachineState | undefined>([['n1', 'running']]);
  calls: string[] = [];
  drainFails = false;
  unhealthy = new Set<string>();
  /** raftAppliedIndex per member id; the leader's raftIndex is 10,000. */
  applied = new Map<string, number>();
  /** The next this many etcd observations fail (etcd does not answer). */
  failObserve = 0;

  view(): EtcdView {
    return {
      members: this.members.map((m) => ({ ...m })),
      statuses: this.members.map((m) => ({
        ok: true as const,
        memberId: m.id,
        endpoint: m.clientURLs[0]!,
        leaderId: this.leader,
        raftTerm: '2',
        raftIndex: '10000',
        raftAppliedIndex: String(this.applied.get(m.id) ?? 10_000),
        isLearner: m.isLearner,
        version: '3.5.16',
        errors: [],
      })),
      leaderId: this.leader,
      healthy: this.members.filter((m) => !this.unhealthy.has(m.id)).map((m) => m.id),
    };
  }

  etcd: EtcdAdminPort = {
    observe: async () => {
      if (this.failObserve > 0) {
        this.failObserve--;
        throw new Error('context deadline exceeded (https://10.0.0.2:2379)');
      }
      return this.view();
    },
    moveLeader: async (id) => {
      this.calls.push(`moveLeader ${id}`);
      this.leader = id;
    },
    removeMember: async (id) => {
      this.calls.push(`removeMember ${id}`);
      const before = this.members.length;
      this.members = this.members.filter((m) => m.id !== id);
      return before === this.members.length ? 'already-absent' : 'removed';
    },
    endpoints: () => this.members.map((m) => m.clientURLs[0]!),
    useEndpoints: () => {},
    close: () => {},
  };

  kube = {
    getNode: async (name: string) => this.nodes.get(name),
    setUnschedulable: async (name: string, v: boolean) => {
      this.calls.push(`setUnschedulable ${name} ${v}`);
      const n = this.nodes.get(name);
      if (n) n.unschedulable = v;
    },
    podsOnNode: async (name: string) =>
      (this.pods.get(name) ?? []).map((p) => ({
        namespace: p.split('/')[0]!,
        name: p.split('/')[1]!,
        uid: p,
        terminating: false,
        ignoredByDrain: false,
        node: name,
        ready: true,
        // A Job's pod: a controller, and nothing the drain waits to see replaced.
        controller: { kind: 'Job', name: 'batch' },
        labels: {},
        finished: false,
        pinnedTo: undefined,
      })),
    evict: async (ns: string, name: string) => {
      this.calls.push(`evict ${ns}/${name}`);
      if (this.drainFails)
        return {
          kind: 'blocked' as const,
          pdb: 'app/web',
          message: 'the budget app/web allows no disruption',
        };
      for (const [node, pods] of this.pods)
        this.pods.set(
          node,
          pods.filter((p) => p !== `${ns}/${name}`),
        );
      return { kind: 'evicted' as const };
    },
    listPods: async () => [],
    listPdbs: async () => [],
    getPdb: async (ns: string, name: string) => ({
      namespace: ns,
      name,
      selector: {},
      disruptionsAllowed: 0,
    }),
    readyz: async () => true,
    scaleWorkload: async (kind: string, ns: string, name: string, replicas: number) => {
      this.calls.push(`scale ${kind} ${ns}/${name} ${replicas}`);
      this.replicas = replicas;
    },
  } as unknown as KubeAdminPort;
  replicas = 2;

  provisioner: ProvisionerPort = {
    kind: 'fake',
    provision: async () => {
      throw new Error('not in this plan');
    },
    decommission: async (req) => {
      this.calls.push(`decommission ${req.node}`);
      this.machines.set(req.node, 'decommissioned');
    },
    machineState: async (node) => this.machines.get(node),
  };

  operator: OperatorPort = { instruct: () => {}, ask: async () => true };
}

export function step(
  s: Partial<Step> & Pick<Step, 'id' | 'kind' | 'params'>,
  expect: ExpectedState,
  verify: ExpectedState,
  doneWhen = verify,
): Step {
  const [phase, index] = s.id.split('.');
  return {
    phase: Number(phase),
    index: Number(index),
    subject: 'n1',
    title: s.kind,
    target: { node: n1, member: m1 },
    expect,
    action: { summary: s.kind, performer: 'ferry', commands: [] },
    verify: { expect: verify, commands: [] },
    timeoutSeconds: 2,
    destructive: false,
    undo: { possible: false, reason: 'test' },
    idempotencyCheck: { description: `${s.kind} done`, doneWhen, ifNotDone: 'redo' },
    ...s,
  } as Step;
}

export const voters3 = (): ExpectedState => ({
  etcd: { voters: 3, learners: 0, total: 3, healthy: 'all', members: [{ member: m1, state: 'voter' }] },
});
export const removed: ExpectedState = {
  etcd: { voters: 2, learners: 0, total: 2, healthy: 'all', members: [{ member: m1, state: 'absent' }] },
};

export function plan(): Plan {
  const steps: Step[] = [
    step(
      { id: '2.01.cordon.n1', kind: 'cordon', params: { node: n1 } },
      { nodes: [{ node: n1, exists: true }] },
      { nodes: [{ node: n1, exists: true, cordoned: true }] },
    ),
    step(
      {
        id: '2.02.drain.n1',
        kind: 'drain',
        params: {
          node: n1,
          evictionOnly: true,
          ignoreDaemonSets: true,
          deleteEmptyDirData: true,
          pdbs: [],
          pods: 1,
        },
      },
      { nodes: [{ node: n1, exists: true, cordoned: true }] },
      { nodes: [{ node: n1, exists: true, cordoned: true, drained: true }] },
    ),
    step(
      {
        id: '2.03.etcd-move-leader.n1',
        kind: 'etcd-move-leader',
        condition: 'if-member-leads',
        params: { from: m1, to: [m2], leaderAtSnapshot: true },
      },
      voters3(),
      { etcd: { ...voters3().etcd!, leader: { isNot: m1 } } },
    ),
    step(
      {
        id: '2.04.etcd-remove-member.n1',
        kind: 'etcd-remove-member',
        destructive: true,
        params: { member: m1, via: [m2], lastKubeadmMember: false },
      },
      voters3(),
      removed,
    ),
    step(
      {
        id: '2.05.decommission.n1',
        kind: 'decommission',
        destructive: true,
        action: { summary: 'decommission', performer: 'provisioner', commands: [] },
        params: { node: n1, provisioner: 'exec', wipes: [] },
      },
      removed,
      { machines: [{ node: n1, state: 'decommissioned' }] },
    ),
  ];
  const last = steps[4]!;
  last.idempotencyCheck.ifNotDone = 'stop';
  return {
    phases: [{ id: 2, name: 'control-planes', title: '', summary: '', steps }],
    controlPlanes: [],
    audit: { blockers: [], risks: 0, suppressed: 0, allowBlockers: false },
    cluster: { name: 'test', endpoint: null },
  } as unknown as Plan;
}

/** An orchestrator over `w`, journaling to `journal`, with short polls and grace. */
export function worldOrchestrator(
  w: World,
  p: Plan,
  at: { journal: Journal; planFile: string },
  options: RunOptions = {},
  logs: string[] = [],
  extra: Partial<Pick<RunDeps, 'etcdProbe' | 'signals' | 'silencer' | 'signal' | 'interrupt'>> = {},
): Orchestrator {
  return new Orchestrator(
    {
      ...extra,
      plan: p,
      planFile: at.planFile,
      journal: at.journal,
      etcd: w.etcd,
      kube: w.kube,
      provisioner: w.provisioner,
      lb: undefined,
      operator: w.operator,
      log: (l) => logs.push(l),
    },
    { pollMs: 20, gateGraceSeconds: 1, ...options },
  );
}

/** Journals the start of a run of `p` (its first phase's steps). */
export function beginRun(journal: Journal, p: Plan): void {
  journal.beginRun({
    planFile: 'plan.json',
    planDigest: 'd',
    steps: p.phases[0]!.steps.map((s, i) => ({
      id: s.id,
      position: i,
      kind: s.kind,
      subject: s.subject,
      destructive: s.destructive,
      title: s.title,
    })),
  });
}
