import type { Step } from '../plan/model.js';

/**
 * The ports the orchestrator drives. The run core (orchestrator, gates, observe, resume) imports
 * only these types; adapters (src/adapters/*) implement them for real clusters, the lab and tests.
 */

// ---- etcd -----------------------------------------------------------------------------------

export interface EtcdMemberInfo {
  /** uint64 as a decimal string: never a JS number (ids exceed 2^53). */
  id: string;
  /** Empty while an added member has not started yet. */
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export type EtcdEndpointStatus =
  | {
      ok: true;
      memberId: string;
      endpoint: string;
      leaderId: string;
      raftTerm: string;
      raftIndex: string;
      raftAppliedIndex: string;
      isLearner: boolean;
      version: string;
      errors: string[];
    }
  | { ok: false; memberId: string; endpoint: string; error: string };

/** One consistent look at etcd: member list, each member's status and health. */
export interface EtcdView {
  members: EtcdMemberInfo[];
  statuses: EtcdEndpointStatus[];
  /** The leader by the highest-term self-report, undefined while none. */
  leaderId: string | undefined;
  /** Member ids that answered `endpoint health` (status, and a linearizable read for voters). */
  healthy: string[];
}

export interface EtcdAdminPort {
  observe(): Promise<EtcdView>;
  /** MoveLeader, sent to the current leader; returns once `targetId` leads. */
  moveLeader(targetId: string, signal?: AbortSignal): Promise<void>;
  /** MemberRemove through another member; resolves once a fresh list no longer holds it. */
  removeMember(id: string, signal?: AbortSignal): Promise<'removed' | 'already-absent'>;
  /** Client URLs the adapter talks to now (rebuilt from the member list after each change). */
  endpoints(): string[];
  /** Tries these first from now on (a resumed run knows the members its predecessor saw last). */
  useEndpoints(urls: string[]): void;
  close(): void;
}

// ---- Kubernetes -----------------------------------------------------------------------------

export interface NodeView {
  name: string;
  ready: boolean;
  unschedulable: boolean;
  labels: Record<string, string>;
  addresses: string[];
  osImage: string | undefined;
}

export interface PodView {
  namespace: string;
  name: string;
  uid: string;
  terminating: boolean;
  /** Owned by a DaemonSet, or a mirror pod: drain leaves it. */
  ignoredByDrain: boolean;
  /** The node it is bound to ('' while unscheduled). */
  node: string;
  ready: boolean;
  /** Phase Succeeded or Failed: it runs nothing any more. */
  finished: boolean;
  /** Its controller (the owner reference with controller: true); null for a bare pod. */
  controller: { kind: string; name: string } | null;
  labels: Record<string, string>;
  /**
   * The only nodes its rules let it run on, when they name nodes (a kubernetes.io/hostname
   * nodeSelector, required node affinity naming nodes: util/node-pins.ts); undefined otherwise.
   */
  pinnedTo: string[] | undefined;
  /** The scheduler's message while it cannot place the pod (PodScheduled False, Unschedulable). */
  unschedulable?: string | undefined;
}

/** What one eviction request came to. */
export type EvictOutcome =
  | { kind: 'evicted' }
  | { kind: 'gone' }
  /** 429: a budget has no room now; `pdb` when the answer names it. */
  | { kind: 'blocked'; pdb: string | undefined; message: string }
  /**
   * HTTP 500 "This pod has more than one PodDisruptionBudget, which the eviction subresource does
   * not support.": not transient, no retry makes it pass; the budgets must be fixed.
   */
  | { kind: 'several-budgets'; message: string };

export interface PdbView {
  namespace: string;
  name: string;
  /** spec.selector as the API has it (matchLabels / matchExpressions); null when absent. */
  selector: unknown;
  /** status.disruptionsAllowed; null before the disruption controller filled it. */
  disruptionsAllowed: number | null;
  /** status.currentHealthy and status.desiredHealthy; null before the controller filled them. */
  currentHealthy?: number | null;
  desiredHealthy?: number | null;
}

export interface LeaseView {
  holderIdentity: string | null;
  renewTime: string | null;
  leaseDurationSeconds: number | null;
  resourceVersion: string;
  annotations: Record<string, string>;
}

export interface LeaseWrite {
  holderIdentity: string | null;
  leaseDurationSeconds: number;
  renewTime: string;
  acquireTime?: string;
  annotations: Record<string, string>;
}

export interface LeasePort {
  getLease(namespace: string, name: string): Promise<LeaseView | undefined>;
  /** Fails with a conflict when it exists already. */
  createLease(namespace: string, name: string, lease: LeaseWrite): Promise<LeaseView>;
  /** Fails with a conflict (HTTP 409) when `resourceVersion` is stale. */
  replaceLease(
    namespace: string,
    name: string,
    resourceVersion: string,
    lease: LeaseWrite,
  ): Promise<LeaseView>;
  deleteLease(namespace: string, name: string, resourceVersion: string): Promise<void>;
}

export interface KubeAdminPort extends LeasePort {
  getNode(name: string): Promise<NodeView | undefined>;
  listNodes(): Promise<NodeView[]>;
  setUnschedulable(name: string, unschedulable: boolean): Promise<void>;
  /** Pods bound to the node, with what drain would do with each. */
  podsOnNode(node: string): Promise<PodView[]>;
  /** One request to the Eviction API (policy/v1); never a delete. */
  evict(namespace: string, name: string): Promise<EvictOutcome>;
  /** Every pod of a namespace, listed fresh (a StatefulSet pod comes back under its old name). */
  listPods(namespace: string): Promise<PodView[]>;
  /** The namespace's budgets, or every namespace's when none is given. */
  listPdbs(namespace?: string): Promise<PdbView[]>;
  getPdb(namespace: string, name: string): Promise<PdbView | undefined>;
  deleteNode(name: string): Promise<void>;
  /** Sets spec.replicas of a Deployment or StatefulSet through its scale subresource. */
  scaleWorkload(
    kind: 'Deployment' | 'StatefulSet',
    namespace: string,
    name: string,
    replicas: number,
  ): Promise<void>;
  /** Addresses in the `default/kubernetes` EndpointSlices; undefined when the server has none. */
  apiserverAddresses(): Promise<string[] | undefined>;
  /** A generic object, for `objects` expectations; undefined on 404. */
  getObject(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): Promise<Record<string, unknown> | undefined>;
  /** A JSON merge patch to one object (a GitOps owner's suspension); a missing object is an error. */
  mergePatchObject(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    patch: Record<string, unknown>,
  ): Promise<void>;
  /** GET /readyz through the endpoint of the kubeconfig. */
  readyz(): Promise<boolean>;
}

// ---- provisioner, load balancer, operator -----------------------------------------------------

export interface ActionContext {
  /** The step being run, for messages and the environment of commands. */
  stepId: string;
  timeoutMs: number;
  signal: AbortSignal;
  log: (line: string) => void;
}

export interface ProvisionRequest {
  /** The kubeadm node the new machine replaces. */
  replaces: string;
  /** The name the plan chose, or null when the provisioner chooses it. */
  name: string | null;
  address: string | null;
  role: 'controlplane' | 'worker';
  talosVersion: string;
  /** Kit file with the role's machine config, when there is one. */
  machineConfig: string | null;
  endpoint: string | null;
  /**
   * Nodes that are not this machine: the kubeadm nodes the plan replaces and the replacements
   * already known. When `name` is null, a provisioner that watches for the machine takes the new
   * Talos Node that is none of these.
   */
  claimed: string[];
}

export interface ProvisionResult {
  name: string;
  address: string | null;
}

export interface DecommissionRequest {
  node: string;
  address: string | null;
  role: 'controlplane' | 'worker';
}

export type MachineState = 'provisioned' | 'running' | 'decommissioned';

export interface ProvisionerPort {
  readonly kind: string;
  /** One machine, from asking for it to its name and address (a control plane; one at a time). */
  provision(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult>;
  /**
   * A worker batch: asks for every machine at once and returns without waiting for them to boot.
   * `started` is called as each machine is known (lab, exec: the name and address it got), so a
   * batch that fails part-way keeps what it started; the rest `detect` finds later (capi, manual).
   * The run asks again only for machines not bound yet, and asking twice for one must not start a
   * second. Without it, the run provisions the batch one machine at a time.
   */
  requestBatch?(
    reqs: ProvisionRequest[],
    ctx: ActionContext,
    started: (req: ProvisionRequest, result: ProvisionResult) => void,
  ): Promise<void>;
  /**
   * One machine of a requested batch, once it registers. Called side by side for the batch: two
   * calls never bind the same machine.
   */
  detect?(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult>;
  decommission(req: DecommissionRequest, ctx: ActionContext): Promise<void>;
  /** What the provisioner knows of a machine; undefined when it cannot tell. */
  machineState?(node: string, address: string | null): Promise<MachineState | undefined>;
}

/** How the run tells whether a control plane's apiserver serves, beyond the kubernetes Service. */
export interface ApiserverStatusPort {
  /** Behind the in-cluster `kubernetes` Service / running at all; undefined when unknown. */
  serving(node: string, address: string | null): Promise<boolean | undefined>;
}

export interface BackendRef {
  node: string;
  address: string | null;
  port: number;
}

export interface LoadBalancerPort {
  readonly kind: string;
  remove(b: BackendRef, ctx: ActionContext): Promise<void>;
  add(b: BackendRef, ctx: ActionContext): Promise<void>;
  /** Whether the backend is in rotation; undefined when the load balancer cannot be asked. */
  inRotation?(b: BackendRef): Promise<boolean | undefined>;
}

/** A person at the terminal (or, in a rehearsal, the lab standing in for one). */
export interface OperatorPort {
  /**
   * Carries out an operator step itself when it can (the lab stops an apiserver instance, powers a
   * machine off); false when a person must.
   */
  perform?(step: Step, ctx: ActionContext & { node: string | undefined }): Promise<boolean>;
  /** Shows a person what to do for a step. */
  instruct(stepId: string, lines: string[]): void;
  /** A yes/no question about something ferry cannot observe; resolves with the answer. */
  ask(stepId: string, question: string, signal: AbortSignal): Promise<boolean>;
}

// ---- probes ---------------------------------------------------------------------------------

export interface ProbeSample {
  /** Milliseconds since the probe started. */
  t: number;
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface ProbeSummary {
  name: string;
  /** What it measures, for the report. */
  description: string;
  attempts: number;
  failures: number;
  /** Longest run of consecutive failures, first failure start to next success. */
  longestFailureWindowMs: number;
  /** Longest time between two consecutive successes (write probes: the write gap). */
  longestGapMs: number;
  /** When the longest gap started, ms since the probe started. */
  longestGapAtMs: number;
  /** Failure messages and how often each occurred (the first 10 kinds). */
  errors: { message: string; count: number }[];
  /** Extra findings, e.g. acknowledged writes lost. */
  extra?: Record<string, number | string>;
}

/** A finished probe as a run's report reads it. */
export interface ProbeRecord {
  summary: ProbeSummary;
  /** At most 600 points, every failure kept: what the report plots. */
  samples: ProbeSample[];
  /** Wall-clock time the probe started. */
  startedAt: string;
}

export interface Probe {
  readonly name: string;
  start(): void;
  stop(): Promise<ProbeSummary>;
  summary(): ProbeSummary;
  samples(): ProbeSample[];
}

/** Lets the orchestrator tell the etcd probe which members to write to before leadership moves or a member goes. */
export interface EtcdProbeControl {
  /** The first endpoint is written to first. Resolves once no write is on its way to a member left out. */
  setEndpoints(endpoints: string[]): Promise<void>;
}

// ---- Cluster API management cluster ----------------------------------------------------------

/** What an adoption pass did (src/capi/adopt-apply.ts). */
export interface AdoptOutcome {
  /** Steps carried out and verified, described. */
  applied: string[];
  alreadyDone: string[];
  nothingToDo: boolean;
}

/** The TalosControlPlane as the management cluster shows it. */
export interface ControlPlaneView {
  namespace: string;
  name: string;
  /** It carries the cluster.x-k8s.io/paused annotation. */
  paused: boolean;
  /** Its Cluster's spec.paused. */
  clusterPaused: boolean;
  /** spec.replicas; status.replicas (Machines by label), status.readyReplicas, status.ready. */
  replicas: number | undefined;
  statusReplicas: number | undefined;
  readyReplicas: number | undefined;
  ready: boolean;
}

export interface ManagementPort {
  /**
   * Applies the kit's Cluster API objects in the safe order, each verified; steps the cluster
   * already shows are skipped. The TalosControlPlane is unpaused only with `kubeadmMembersRemain`
   * false.
   */
  adopt(opts: { kubeadmMembersRemain: boolean }): Promise<AdoptOutcome>;
  /** Undefined when the TalosControlPlane does not exist. */
  controlPlane(): Promise<ControlPlaneView | undefined>;
  /** Puts the paused annotation back on the TalosControlPlane. */
  pauseControlPlane(): Promise<void>;
}
