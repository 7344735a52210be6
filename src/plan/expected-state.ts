/**
 * Expected state: what the world must look like before a step runs (its gate), after it ran (its
 * verification), and what shows that it already happened (its idempotency check on resume).
 *
 * Every section is optional; an absent section means "not checked by this expectation". The
 * orchestrator (src/run) observes the sections that are present and compares them one by one; a
 * mismatch stops the run with the expected and the observed value. Expectations are step-aware
 * (etcd.md "Gates between steps"): they state the membership *this* step expects, never a
 * steady-state formula such as "members == machines" (the CACPPT deadlock, cacppt#237).
 */

// ---------------------------------------------------------------------------------------------
// References to nodes and members that exist now, or will exist once a step has run

/** A kubeadm node as it is in the snapshot. */
export interface KubeadmNodeRef {
  kind: 'kubeadm';
  name: string;
  /** The address ferry reaches it on (apiserver advertise address, else InternalIP); null if unknown. */
  address: string | null;
}

/**
 * The Talos node that replaces a kubeadm node. Its `name` is null when the provisioner chooses it
 * (capi): the run learns it when the node appears and records it in its journal under `replaces`.
 * Its `address` is null when the provisioner assigns it (surge); with `replace` it is the old one.
 */
export interface TalosNodeRef {
  kind: 'talos';
  replaces: string;
  name: string | null;
  address: string | null;
}

export type NodeRef = KubeadmNodeRef | TalosNodeRef;

/** A kubeadm etcd member as listed in the snapshot. */
export interface KubeadmMemberRef {
  kind: 'kubeadm';
  name: string;
  /** uint64 member id as a decimal string (never a JS number: ids exceed 2^53). */
  id: string;
  /** The same id in hex, as `etcdctl member list` and `talosctl etcd remove-member` take it. */
  idHex: string;
  /** Node the member runs on, when ferry could match it. */
  node: string | null;
  /** First client URL, e.g. https://10.20.0.11:2379; null when the member list has none. */
  clientURL: string | null;
}

/** The etcd member a Talos control plane adds for itself (named after its hostname). */
export interface TalosMemberRef {
  kind: 'talos';
  replaces: string;
  /** Same as the Talos node's name: null when the provisioner chooses it. */
  name: string | null;
}

export type MemberRef = KubeadmMemberRef | TalosMemberRef;

/** An exact count, or an inclusive range while Talos changes membership on its own. */
export type Count = number | { min: number; max: number };

// ---------------------------------------------------------------------------------------------
// Sections

/**
 * - `voter`            a started voting member;
 * - `learner-or-voter` present: Talos added itself as a learner and may already have promoted itself;
 * - `joining`          absent, a learner or a voter: Talos is adding itself (talos.md §4.8);
 * - `absent`           not in the member list (removed, or never added).
 */
export type MemberState = 'voter' | 'learner-or-voter' | 'joining' | 'absent';

export interface MemberExpectation {
  member: MemberRef;
  state: MemberState;
}

/**
 * Which voters must answer `endpoint health`: all, or all but the member being replaced (`replace`
 * tolerates a broken old member; every *other* member must be healthy). Learners are not
 * health-checked (they reject most RPCs, test-infra.md pitfall 8): `caughtUp` covers them.
 */
export type EtcdHealth = 'all' | { allExcept: MemberRef };

export interface EtcdExpectation {
  /** Voting members. */
  voters: Count;
  /** Learners (Talos joins as one, then promotes itself). */
  learners: Count;
  /** Members in the list, voters and learners together. */
  total: Count;
  healthy: EtcdHealth;
  /** Named members and the state each must be in; members not listed are only counted. */
  members: MemberExpectation[];
  /** Leadership constraint, when the step cares. */
  leader?: { is: MemberRef } | { isNot: MemberRef };
  /** A member whose raft applied index must be within `maxIndexLag` of the leader's. */
  caughtUp?: { member: MemberRef; maxIndexLag: number };
}

export interface NodeExpectation {
  node: NodeRef;
  /** The Node object exists. */
  exists: boolean;
  ready?: boolean;
  /** spec.unschedulable. */
  cordoned?: boolean;
  /** No pod left that the Eviction API would evict (DaemonSet and mirror pods do not count). */
  drained?: boolean;
}

export interface BackendExpectation {
  node: NodeRef;
  address: string | null;
  port: number;
  /** In the load balancer's rotation for the control-plane endpoint. */
  inRotation: boolean;
}

export interface ApiserverExpectation {
  node: NodeRef;
  /** Listed in the default/kubernetes EndpointSlice (the in-cluster `kubernetes` Service). */
  serving: boolean;
}

export interface MachineExpectation {
  node: NodeRef;
  /**
   * - `provisioned`     the provisioner reported the machine booted with its Talos config;
   * - `running`         the kubeadm machine still runs its control plane or kubelet;
   * - `decommissioned`  powered off or wiped: nothing answers on its kubelet/etcd/apiserver ports.
   */
  state: 'provisioned' | 'running' | 'decommissioned';
}

export type Where = { kind: 'workstation' } | { kind: 'node'; node: string };

/** A shell command an operator (or ferry) runs, and where. */
export interface Command {
  run: string;
  where: Where;
  /** One short line shown beside it in the runbook. */
  note?: string;
}

export interface CommandExpectation {
  command: Command;
  /** Exit status that means "in place". */
  exitCode: 0;
}

export interface ObjectExpectation {
  kind: string;
  namespace?: string;
  name: string;
  present: boolean;
  /**
   * Dotted field paths and the values they must have, e.g. {"spec.selector.matchLabels.tier": "node"};
   * "(unset)" asks for the field's absence, "(set)" for an object there.
   */
  fields?: Record<string, string>;
}

export interface FileExpectation {
  path: string;
  where: Where;
  exists: boolean;
}

export interface AuditExpectation {
  /** Unsuppressed blockers tolerated: 0, unless the plan was built with --allow-blockers. */
  maxBlockers: number;
  /** Fingerprints of the blockers accepted with --allow-blockers; any other blocker fails the gate. */
  acceptedBlockers: string[];
}

export interface ExpectedState {
  etcd?: EtcdExpectation;
  nodes?: NodeExpectation[];
  loadBalancer?: BackendExpectation[];
  apiservers?: ApiserverExpectation[];
  machines?: MachineExpectation[];
  /** GET /readyz through the control-plane endpoint answers 200. */
  endpoint?: { readyz: true };
  commands?: CommandExpectation[];
  objects?: ObjectExpectation[];
  files?: FileExpectation[];
  audit?: AuditExpectation;
  /**
   * Every PodDisruptionBudget in the cluster has its desired healthy pods (status.currentHealthy ≥
   * status.desiredHealthy): no workload is below its budget's minimum when a worker batch starts.
   */
  budgets?: { healthy: true };
  /**
   * Something ferry cannot observe: the run asks the operator this question and journals the
   * answer (manual checks, hand-made fixes). A "yes" recorded for this step means done.
   */
  operator?: { confirms: string };
}

/** True when the expectation checks nothing. */
export function isEmptyExpectation(e: ExpectedState): boolean {
  return Object.values(e).every((v) => v === undefined || (Array.isArray(v) && v.length === 0));
}

export function countMin(c: Count): number {
  return typeof c === 'number' ? c : c.min;
}

export function countMax(c: Count): number {
  return typeof c === 'number' ? c : c.max;
}
