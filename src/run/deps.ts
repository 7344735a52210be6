/**
 * What a run is given (ports, the plan, the journal), what the operator chose for it, and what it
 * returns. The orchestrator and the step handlers read these; session.ts and assemble.ts build them.
 */
import type { FerryError } from '../errors.js';
import type { PhaseId, Plan, StepKind } from '../plan/model.js';
import type {
  ApiserverStatusPort,
  EtcdAdminPort,
  EtcdProbeControl,
  KubeAdminPort,
  LoadBalancerPort,
  ManagementPort,
  OperatorPort,
  ProvisionerPort,
} from '../ports/run.js';
import type { HealthSignal, Silencer } from '../ports/signals.js';
import type { Journal, StepTransition } from './journal.js';
import type { UnobservedAcceptance } from './unobserved.js';

export interface RunOptions {
  /** Continue a stopped or crashed run of the same plan. */
  resume?: boolean;
  /** Per step kind, seconds: replaces the plan's timeout (tests, rehearsals, impatient operators). */
  timeouts?: Partial<Record<StepKind, number>>;
  drainTimeoutSeconds?: number;
  /** Nodes of a worker batch drained at the same time (`--drain-concurrency`). Default 4. */
  drainConcurrency?: number;
  /** Pods without a controller may be evicted (`--evict-bare-pods`): journaled as accepted. */
  evictBarePods?: boolean;
  /** Replaces the plan's gate stability interval (two observations this far apart). */
  gateStableSeconds?: number;
  /** Replaces the plan's wait after a load-balancer change. */
  lbSettleSeconds?: number;
  /** How long a step's precondition may take to hold before the run stops. Default 30 s. */
  gateGraceSeconds?: number;
  /** Pause between observations while waiting. Default 1 s. */
  pollMs?: number;
  /** Replaces capi-handover's settle window: how long the etcd member list must stay whole. */
  capiSettleSeconds?: number;
  /** Run only these phases (the others are journalled as skipped). */
  phases?: PhaseId[];
  /** Steps of these kinds run even in a phase `phases` leaves out (a capi rehearsal's adoption and hand-over). */
  alsoKinds?: StepKind[];
  /** Run the optional drill. */
  drill?: boolean;
  /** Steps the operator checked by hand and declares done (a step whose outcome ferry cannot tell). */
  markDone?: string[];
  /** Steps the operator checked by hand and wants run again. */
  retry?: string[];
  /**
   * Checks the operator lets pass although ferry could not observe them (`--accept-unobserved`):
   * the only way past an unobserved check. Each use is journalled.
   */
  acceptUnobserved?: UnobservedAcceptance[];
}

/** What an etcd-snapshot step wrote, as the journal lists it (src/app/snapshot-seal.ts). */
export interface SnapshotWritten {
  /** The file that stays: the snapshot, or its `.age` when encrypted. */
  file: string;
  bytes: number;
  /** sha256 of the snapshot itself (after decryption, for an encrypted one). */
  sha256: string;
  /** sha256 of `file` as written. */
  fileSha256: string;
  encrypted: boolean;
}

export interface RunDeps {
  plan: Plan;
  planFile: string;
  journal: Journal;
  etcd: EtcdAdminPort;
  kube: KubeAdminPort;
  provisioner: ProvisionerPort;
  /** Without one, load-balancer steps are operator steps. */
  lb: LoadBalancerPort | undefined;
  operator: OperatorPort;
  apiservers?: ApiserverStatusPort;
  /** The etcd write probe, steered away from a member before it is removed. */
  etcdProbe?: EtcdProbeControl;
  /** The Cluster API management cluster (`--mgmt-kubeconfig`): capi-adopt and capi-handover need it. */
  mgmt?: ManagementPort;
  /** Writes an etcd snapshot file (etcd-snapshot steps); without it they are operator steps. */
  etcdSnapshot?: (file: string, signal: AbortSignal) => Promise<SnapshotWritten>;
  log: (line: string) => void;
  signal?: AbortSignal;
  /** Checked before each step: a reason to stop (the cluster Lease was lost), or undefined. */
  interrupt?: () => string | undefined;
  /** The cluster's own signals (`--alertmanager`, `--probe`): each clear at every gate, or the run stops. */
  signals?: HealthSignal[];
  /** `--silence-expected`: where the alerts a step raises by design are silenced while it runs. */
  silencer?: Silencer;
}

export interface RunResult {
  status: 'completed' | 'stopped';
  stoppedAt?: string;
  error?: FerryError;
  /** Steps finished by this run (done, already-done, skipped), in order. */
  steps: { id: string; outcome: StepTransition }[];
}
