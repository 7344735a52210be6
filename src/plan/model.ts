/**
 * The migration plan: ordered phases of typed steps (design.md "Plan"). Building a plan is pure
 * (build.ts); running it is the orchestrator's job (src/run), which reads only these types.
 *
 * Contract with the orchestrator:
 * - Steps run in the order of `phases[*].steps[*]`; a step's `id` is stable for a given plan and
 *   is what the journal records ("PHASE.INDEX.KIND.SUBJECT", e.g. "2.05.drain.cp-1").
 * - Before a step: observe `expect` (its gate). Mismatch → stop (exit 3), report expected vs seen.
 * - Then perform `action` (ferry's ports, the provisioner, or wait for the operator: `performer`),
 *   within `timeoutSeconds`, then observe `verify.expect`.
 * - On resume, for the step in flight: observe `idempotencyCheck.doneWhen` first. If it holds, the
 *   step already happened: record it done and move on. If it does not, follow
 *   `idempotencyCheck.ifNotDone`; never repeat a destructive action without observing first.
 * - A step with a `condition` is skipped (journalled as skipped) when the condition is false at
 *   run time, e.g. leadership is moved only if the old member leads *then*.
 */
import type { Provisioner } from '../facts/target.js';
import type { CapiNames } from '../kit/capi-names.js';
import type { BlockedPdb, LowerBoundTerm, Outage, PlannedBatch, SurgedWorkload } from './batches/model.js';
import type { Command, ExpectedState, MemberRef, NodeRef, TalosNodeRef } from './expected-state.js';

/**
 * 2: worker batches are computed (workerRoll), and the scale-workload steps of --surge-replicas.
 * 3: a worker batch drains in one drain-batch step (its nodes in parallel), not one drain per node.
 * 4: a capi plan adopts in a capi-adopt step (phase 1) and hands over in a capi-handover step
 *    (phase 5), both carried out by ferry against the management cluster.
 */
export const PLAN_FORMAT_VERSION = 4;
export const PLAN_KIND = 'FerryPlan';

export const STRATEGIES = ['surge', 'replace'] as const;
/**
 * - `surge`: a new Talos node at a new address joins first, then the old node leaves
 *   (etcd: N → N + 1 learner → N + 1 voters → N). Needs spare capacity and an address.
 * - `replace`: the old node leaves first and a Talos node comes back at the same address
 *   (etcd: N → N − 1 → N). Tolerates no member failure while N − 1 (its gate demands every other
 *   member healthy); for fixed addresses (e.g. OpenTofu with static IPs).
 */
export type Strategy = (typeof STRATEGIES)[number];

export type PhaseId = 0 | 1 | 2 | 3 | 4 | 5;

export const PHASE_NAMES = {
  0: 'preflight',
  1: 'preparation',
  2: 'control-planes',
  3: 'workers',
  4: 'last-control-plane',
  5: 'after-care',
} as const satisfies Record<PhaseId, string>;

export type PhaseName = (typeof PHASE_NAMES)[PhaseId];

export interface Phase {
  id: PhaseId;
  name: PhaseName;
  title: string;
  /** What the phase achieves and why it is ordered so. */
  summary: string;
  steps: Step[];
}

// ---------------------------------------------------------------------------------------------
// Steps

/** Who carries out the action when `ferry run` executes the step. */
export type Performer =
  /** ferry itself through its ports (kube, etcd, talos). */
  | 'ferry'
  /** the provisioner adapter (manual: print and wait; exec: run a command; capi: Cluster API objects). */
  | 'provisioner'
  /** the load-balancer command given to `ferry run --lb-cmd`; without one, the operator. */
  | 'load-balancer'
  /** a person: the run prints the commands and waits until `verify.expect` holds (or confirmation). */
  | 'operator';

export interface Action {
  summary: string;
  performer: Performer;
  /** What an operator would type to do the same by hand: the runbook. */
  commands: Command[];
}

export interface Verification {
  /** The state once the step is done; the run observes it after the action. */
  expect: ExpectedState;
  /** Commands an operator runs to check it by hand. */
  commands: Command[];
}

export type Undo =
  | { possible: true; summary: string; commands: Command[] }
  | { possible: false; reason: string };

export interface IdempotencyCheck {
  /** For a human: how a resumed run tells whether the step already took effect. */
  description: string;
  /** When this holds, the step already happened: record it done, do not act again. */
  doneWhen: ExpectedState;
  /**
   * When `doneWhen` clearly does not hold after a crash: `redo` (the action did not take effect and
   * repeating it is safe), or `stop` (it may have half-happened in a way ferry cannot see, e.g. a
   * machine being created: stop at the gate and let the operator decide, exit 3). When the world
   * cannot be observed at all, the run stops before a destructive step whatever this says.
   */
  ifNotDone: 'redo' | 'stop';
}

/** What a step acts on. */
export interface StepTarget {
  node?: NodeRef;
  member?: MemberRef;
  address?: string | null;
}

export type StepCondition =
  /** Only when the member in `params.from` leads at run time. */
  'if-member-leads';

interface StepBase {
  /** "PHASE.INDEX.KIND.SUBJECT", stable: the journal's key. */
  id: string;
  phase: PhaseId;
  /** 1-based position inside the phase. */
  index: number;
  /** The kubeadm node this step is about ("cluster" for cluster-wide steps): part of the id. */
  subject: string;
  title: string;
  target: StepTarget;
  /** Precondition: the gate the run checks before acting. */
  expect: ExpectedState;
  action: Action;
  verify: Verification;
  timeoutSeconds: number;
  /** True when the action cannot be taken back by an inverse action (member removed, machine wiped). */
  destructive: boolean;
  undo: Undo;
  idempotencyCheck: IdempotencyCheck;
  condition?: StepCondition;
  /** Offered, not required: the run asks before doing it (the drill). */
  optional?: boolean;
  /** Worker batch (phase 3): its nodes' pods can all go at once within every PodDisruptionBudget. */
  batch?: number;
  /** Steps (ids) that must be done first, beyond the order of the plan. */
  after?: string[];
  /** Extra context for the runbook: hazards, one-way doors, what the numbers mean. */
  notes?: string[];
}

export interface PdbRef {
  namespace: string;
  name: string;
  /** status.disruptionsAllowed at snapshot time; 0 means this drain will wait (or time out). */
  disruptionsAllowed: number | null;
}

/** One node of a drain-batch step, with what the snapshot showed on it. */
export interface DrainNode {
  node: NodeRef;
  /** PDBs selecting pods on this node at snapshot time. */
  pdbs: PdbRef[];
  /** Pods the Eviction API would evict, at snapshot time. */
  pods: number;
}

/** An Argo CD Application or Flux Kustomization/HelmRelease a `gitops-suspend` step patches. */
export interface GitopsOwnerRef {
  apiVersion: string;
  kind: 'Application' | 'Kustomization' | 'HelmRelease';
  namespace: string;
  name: string;
}

/** A workload --surge-replicas scales: the scale subresource of a Deployment or StatefulSet. */
export interface WorkloadRef {
  kind: 'Deployment' | 'StatefulSet';
  namespace: string;
  name: string;
}

export interface FindingRef {
  ruleId: string;
  severity: 'blocker' | 'risk' | 'info';
  title: string;
  fingerprint: string;
  subject: string;
  remediation: string;
}

/** Parameters per step kind: what the orchestrator needs beyond the common fields. */
export interface StepParams {
  /** Phase 0: the audit must show no unsuppressed blocker (or only the accepted ones). */
  'preflight-audit': { blockers: FindingRef[]; allowBlockers: boolean; suppressed: number };
  /** Observe only: the world must match `expect` (twice, `stableSeconds` apart). */
  gate: { reason: string; stableSeconds: number };
  'etcd-snapshot': { file: string; reason: string };
  /** A kubeadm-side preparation step (kit kubeadm/steps.json), on one node or cluster-wide. */
  'kubeadm-prep': {
    source: /** `after`: prep ids that must be verified on every node first (resolved into the step's `after`). */
      | { kind: 'kit'; prepId: string; script: string; after: string[] }
      /** No kit: the step is named by theme and made by `ferry generate`. */
      | { kind: 'generate'; theme: PrepTheme };
    scope: 'node' | 'cluster';
    node: string | null;
  };
  /** Apply a file of the kit to the cluster (probe RBAC, Cilium values). */
  'apply-kit-file': { file: string; purpose: 'probe-rbac' | 'cilium-values' };
  manual: { instructions: string[]; findings?: FindingRef[] };
  provision: {
    node: TalosNodeRef;
    role: 'controlplane' | 'worker';
    provisioner: Provisioner;
    talosVersion: string;
    /** Kit file with the machine config (patch) for this role, when the kit has one. */
    machineConfig: string | null;
  };
  /**
   * A worker batch's machines, all asked for at once (one MachineDeployment patch, every command
   * of the batch, every instruction): a batch of N waits about one boot, not N.
   */
  'provision-request': { machines: StepParams['provision'][] };
  /** One machine of a `provision-request`: bind its Node (name, address) as it registers. */
  'provision-detect': StepParams['provision'];
  /** Talos adds its member itself as a learner: wait until it appears. */
  'wait-member-joined': { member: MemberRef; node: TalosNodeRef };
  /** ... and until it promoted itself, caught up and every member is healthy. */
  'wait-member-voter': { member: MemberRef; node: TalosNodeRef; maxIndexLag: number };
  'wait-node-ready': { node: NodeRef };
  'lb-add': { node: NodeRef; address: string | null; port: number; endpoint: string; settleSeconds: number };
  'lb-remove': {
    node: NodeRef;
    address: string | null;
    port: number;
    endpoint: string;
    settleSeconds: number;
  };
  cordon: { node: NodeRef };
  /** Eviction API only: never delete pods; PodDisruptionBudgets are respected. */
  drain: {
    node: NodeRef;
    evictionOnly: true;
    ignoreDaemonSets: true;
    deleteEmptyDirData: boolean;
    /** PDBs selecting pods on this node at snapshot time. */
    pdbs: PdbRef[];
    /** Pods the Eviction API would evict, at snapshot time. */
    pods: number;
  };
  /**
   * A worker batch's drain: every node of the batch (all cordoned before) drained together, at
   * most `--drain-concurrency` at a time, through the Eviction API; done when the nodes hold only
   * DaemonSet and mirror pods and every evicted controller-owned pod's replacement is Ready on
   * another node.
   */
  'drain-batch': {
    nodes: DrainNode[];
    evictionOnly: true;
    ignoreDaemonSets: true;
    deleteEmptyDirData: boolean;
  };
  /** Take the kubeadm apiserver out of the `kubernetes` Service before its local member goes. */
  'stop-apiserver': { node: NodeRef; manifest: string };
  /** MoveLeader, sent to the current leader, towards the first caught-up voter of `to`. */
  'etcd-move-leader': { from: MemberRef; to: MemberRef[]; leaderAtSnapshot: boolean };
  /** MemberRemove, sent through `via` (never to the member itself: test-infra.md pitfall 4). */
  'etcd-remove-member': {
    member: MemberRef;
    via: MemberRef[];
    /** True for the last kubeadm member: afterwards the cluster runs on Talos members only. */
    lastKubeadmMember: boolean;
  };
  /** A fresh member list must equal the expected membership. */
  'verify-membership': { removed: MemberRef | null };
  decommission: { node: NodeRef; provisioner: Provisioner; wipes: string[] };
  'delete-node': { node: NodeRef };
  /**
   * --surge-replicas: set the workload's replicas (scale subresource): one more before its first
   * node drains, so that its PodDisruptionBudget allows a disruption; back to `from` after its last.
   */
  'scale-workload': {
    workload: WorkloadRef;
    replicas: number;
    /** The replica count at snapshot time, which a stopped run restores. */
    from: number;
    purpose: 'surge' | 'restore';
    /** The budget that made it necessary. */
    pdb: string;
  };
  /** Observe only: the workload has `readyReplicas` Ready pods. */
  'wait-workload-ready': { workload: WorkloadRef; readyReplicas: number };
  'delete-bootstrap-token': { tokenIds: string[] };
  'relabel-kube-proxy': { namespace: string; name: string; labels: Record<string, string> };
  'wipe-pki-copies': { copies: { where: string; path: string; why: string }[] };
  drill: { node: NodeRef | null };
  /**
   * Cluster API: apply the kit's objects to the management cluster in the order that keeps its
   * controllers off the running cluster (src/capi/adopt-plan.ts), verifying each; the
   * TalosControlPlane stays paused. `kit`: the kit directory as given to `ferry plan`; `names`:
   * what it calls its objects (null without a kit: the run refuses the step).
   */
  'capi-adopt': { kit: string | null; names: CapiNames | null };
  /**
   * Cluster API: once no kubeadm etcd member remains, unpause the TalosControlPlane (and the
   * Cluster, were it still paused), wait until it is ready with every replica ready, and watch the
   * etcd member list for `settleSeconds`: a member removed by its etcd audit stops the run.
   */
  /**
   * Turn a GitOps owner's reconciliation off before the first change (`pause`) or back on as it
   * was after the migration (`resume`), with one JSON merge patch; `undo` is the patch a stopped
   * run applies to give a pause back while nothing it owns has changed yet.
   */
  'gitops-suspend': {
    owner: GitopsOwnerRef;
    action: 'pause' | 'resume';
    patch: Record<string, unknown>;
    undo: Record<string, unknown>;
    /** The objects it owns that the migration changes, as "Kind ns/name". */
    owns: string[];
  };
  'capi-handover': {
    kit: string | null;
    names: CapiNames | null;
    /** Talos control planes the TalosControlPlane has by then. */
    replicas: number;
    settleSeconds: number;
  };
}

export type StepKind = keyof StepParams;

export const STEP_KINDS = [
  'preflight-audit',
  'gate',
  'etcd-snapshot',
  'kubeadm-prep',
  'apply-kit-file',
  'manual',
  'provision',
  'provision-request',
  'provision-detect',
  'wait-member-joined',
  'wait-member-voter',
  'wait-node-ready',
  'lb-add',
  'lb-remove',
  'cordon',
  'drain',
  'drain-batch',
  'stop-apiserver',
  'etcd-move-leader',
  'etcd-remove-member',
  'verify-membership',
  'decommission',
  'delete-node',
  'scale-workload',
  'wait-workload-ready',
  'delete-bootstrap-token',
  'relabel-kube-proxy',
  'wipe-pki-copies',
  'drill',
  'capi-adopt',
  'capi-handover',
  'gitops-suspend',
] as const satisfies readonly StepKind[];

/** Themes of the kubeadm-side preparation, used when there is no kit to read steps from. */
export type PrepTheme = 'apiserver-sans' | 'sa-issuer' | 'encryption-keys';

/** A step, discriminated by `kind`: `if (s.kind === 'drain') s.params.pdbs`. */
export type Step = { [K in StepKind]: StepBase & { kind: K; params: StepParams[K] } }[StepKind];

export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

/** A step before it is placed in a phase (build.ts assigns id, phase and index). */
export type DraftStep = WithoutPlacement<Step>;
type WithoutPlacement<S> = S extends unknown ? Omit<S, 'id' | 'phase' | 'index'> : never;

// ---------------------------------------------------------------------------------------------
// The plan

export interface ControlPlaneOrder {
  node: string;
  address: string | null;
  phase: 2 | 4;
  /** 1-based position among all control planes. */
  position: number;
  member: { id: string; name: string } | null;
  /** This member led etcd when the snapshot was taken. */
  leaderAtSnapshot: boolean;
  replacement: TalosNodeRef;
}

export interface WorkerOrder {
  node: string;
  address: string | null;
  batch: number;
  replacement: TalosNodeRef;
}

/** A worker batch as planned (batches/planner.ts), with its expected length and why it is this size. */
export interface WorkerBatch extends PlannedBatch {
  seconds: number;
  /** What bounded it, in words (from `bound`). */
  why: string;
}

/** Phase 3 as computed: batches, the outages they cause, and how long they should take. */
export interface WorkerRoll {
  /** --max-unavailable as given (default 25%) and the workers per batch it allows. */
  maxUnavailable: { given: string; nodes: number };
  /** --surge: Talos workers brought up before the first drain, and what they are assumed to be. */
  surgeWorkers: { count: number; note: string } | null;
  surgeReplicas: boolean;
  batches: WorkerBatch[];
  /** What the roll takes down, never hidden: single replicas, bare pods, pods no node can take. */
  outages: Outage[];
  /** PodDisruptionBudgets that allow no disruption: `ferry plan` refuses while there is one. */
  blocked: BlockedPdb[];
  /** Workloads --surge-replicas scales up around their drains. */
  surged: SurgedWorkload[];
  estimate: {
    seconds: number;
    /** Of which: --surge workers coming up before the first drain. */
    surgeSeconds: number;
    lowerBoundSeconds: number;
    /** Largest first: the first term is the bound. */
    lowerBound: LowerBoundTerm[];
    assumptions: string[];
  };
}

export interface KitReference {
  /** The kit directory as given on the command line. */
  path: string;
  generatedAt: string | null;
  /** Kit files the plan refers to. */
  files: string[];
}

export interface Plan {
  kind: typeof PLAN_KIND;
  formatVersion: typeof PLAN_FORMAT_VERSION;
  ferryVersion: string;
  createdAt: string;
  cluster: { name: string | null; endpoint: string | null };
  /** What the plan was built from; a run refuses a plan whose snapshot digest it cannot match. */
  source: {
    snapshot: string;
    snapshotCreatedAt: string;
    /** sha256 of the snapshot's canonical JSON. */
    snapshotDigest: string;
    /** sha256 of the derived facts' canonical JSON (includes the target). */
    factsDigest: string;
    kit: KitReference | null;
  };
  strategy: Strategy;
  provisioner: Provisioner;
  target: {
    talosVersion: string;
    kubernetesVersion: string | null;
    kubeprism: 'on' | 'off';
    infra: string;
  };
  etcd: {
    /** Voting members at snapshot time: the count every swap returns to. */
    voters: number;
    leader: { id: string; name: string; node: string | null } | null;
    version: string | null;
  };
  audit: {
    blockers: FindingRef[];
    risks: number;
    suppressed: number;
    allowBlockers: boolean;
    /** Findings the kit given to --kit resolves (its files carry the fix): no longer blockers here. */
    resolvedByKit?: FindingRef[];
  };
  controlPlanes: ControlPlaneOrder[];
  workers: WorkerOrder[];
  workerRoll: WorkerRoll;
  /** Commands to set up once before the runbook (etcd client, kubeconfig). */
  setup: Command[];
  warnings: string[];
  phases: Phase[];
  /** What `ferry run` checks the plan against: a plan is the contract the operator reviewed. */
  integrity: PlanIntegrity;
}

/** A plan before it is sealed (build.ts builds this, integrity.ts seals it). */
export type PlanContent = Omit<Plan, 'integrity'>;

/**
 * The digest of a plan and, to name what differs when it no longer matches, fingerprints of its
 * parts. Fingerprints are the first 12 hex digits of the sha256 of a part's canonical JSON
 * (digest.ts): they only locate a difference; `digest` (full sha256) decides.
 */
export interface PlanIntegrity {
  /** sha256 of the canonical JSON of the whole plan without `integrity` (createdAt included). */
  digest: string;
  /** Top-level fields but `phases`: field → fingerprint. */
  fields: Record<string, string>;
  /** Each phase without its steps. */
  phases: string[];
  /** Every step in run order: its id, the index of its phase, and field → fingerprint. */
  steps: StepFingerprint[];
}

export interface StepFingerprint {
  id: string;
  phase: number;
  fields: Record<string, string>;
}

/** Every step in run order. */
export function allSteps(plan: Pick<Plan, 'phases'>): Step[] {
  return plan.phases.flatMap((p) => p.steps);
}

/** "2.05.drain.cp-1": phase, zero-padded index, kind, subject. */
export function stepId(
  phase: PhaseId,
  index: number,
  width: number,
  kind: StepKind,
  subject: string,
): string {
  return `${phase}.${String(index).padStart(width, '0')}.${kind}.${subject}`;
}

/** The display name of a node reference: its name, or what will name it. */
export function nodeLabel(n: NodeRef): string {
  if (n.kind === 'kubeadm') return n.name;
  return n.name ?? `<Talos node replacing ${n.replaces}>`;
}

export function memberLabel(m: MemberRef): string {
  if (m.kind === 'kubeadm') return m.name;
  return m.name ?? `<Talos member replacing ${m.replaces}>`;
}
