/**
 * `ferry upgrade plan`'s input and output as plain data: the management cluster's objects for one
 * Cluster (and optionally the workload cluster's), a target, and the plan: stages in order, the
 * objects each writes, how each worker pool rolls, and what refuses the upgrade.
 */
import type { RemovedApi } from '../knowledge/removed-apis.js';
import type { KubeObject, MgmtSnapshot, Snapshot } from '../snapshot/model.js';

export type UpgradeTarget = { kind: 'kubernetes'; version: string } | { kind: 'talos'; version: string };

/** An object from a manifest file (--manifests), with where it was read. */
export interface ManifestObject {
  object: KubeObject;
  file: string;
}

export interface UpgradeInput {
  cluster: { namespace: string; name: string };
  mgmt: MgmtSnapshot;
  /** The workload cluster (a snapshot, or collected live); null when not given. */
  workload: Snapshot | null;
  manifests: readonly ManifestObject[];
  target: UpgradeTarget;
  /** --template-id: one machine-image id per Talos stage, in stage order. */
  templateIds: readonly string[];
  /** --surge-replicas: scale a workload whose budget allows no disruption up by one around its pool. */
  surgeReplicas: boolean;
}

export type Blocker =
  | { kind: 'cluster-not-found'; cluster: string }
  | { kind: 'no-talos-control-plane'; cluster: string; controlPlane: string | null }
  | { kind: 'paused'; objects: string[] }
  | { kind: 'upgrade-in-progress'; versions: { version: string; machines: string[] }[] }
  | { kind: 'downgrade'; what: 'Kubernetes' | 'Talos'; from: string; to: string }
  | { kind: 'version-unknown'; what: string; found: string | null }
  | { kind: 'talos-line-unknown'; line: string; known: readonly string[] }
  | { kind: 'talos-floor'; from: string; to: string; minUpgradeFrom: string }
  | {
      kind: 'kubernetes-outside-talos-window';
      kubernetes: string;
      talos: string;
      window: { min: string; maxMinor: string };
    }
  | { kind: 'kubelet-skew'; pool: string; kubelet: string; apiserver: string; maxBehind: number }
  | { kind: 'removed-api'; object: string; file: string | null; api: RemovedApi }
  | { kind: 'pdb-blocks-drain'; pool: string; pdb: string; rule: string; fix: string }
  | { kind: 'template-missing'; referrer: string; template: string }
  | { kind: 'infrastructure-unsupported'; template: string; templateKind: string }
  | { kind: 'template-id-missing'; stage: number; talos: string; commands: string[] }
  | { kind: 'template-id-in-use'; templateId: string; usedBy: string }
  | { kind: 'template-id-malformed'; templateId: string; templateKind: string; expected: string }
  | { kind: 'not-observed'; reads: string[] }
  | { kind: 'control-plane-rollout-stuck'; controlPlane: string; replicas: number };

export type BlockerKind = Blocker['kind'];

/** One object ferry would write to the management cluster, in order. */
export type Write =
  | { kind: 'create'; object: KubeObject; why: string }
  | { kind: 'patch'; target: string; apiVersion: string; patch: Record<string, unknown>; why: string }
  /** Delete one object of the management cluster (an OnDelete control plane's Machine). */
  | { kind: 'delete'; target: string; why: string }
  /** In the workload cluster: --surge-replicas around one pool's roll. */
  | { kind: 'scale-workload'; workload: string; replicas: number; why: string }
  /** Wait until the previous write's rollout is done before the next. */
  | { kind: 'wait'; what: string; seconds: number };

export interface PoolRoll {
  /** The MachineDeployment. */
  name: string;
  replicas: number;
  /** The workload Nodes of its Machines (empty without a workload cluster). */
  nodes: string[];
  maxSurge: number;
  maxUnavailable: number;
  /** Why those numbers. */
  why: string;
  /** Outages the drains cause (single replicas, bare pods …), from the batch planner. */
  outages: string[];
  seconds: number;
}

export interface Stage {
  /** 1-based. */
  index: number;
  kind: 'kubernetes' | 'talos';
  from: string;
  to: string;
  /** Where the version came from (the target, ferry's table, …). */
  versionSource: string;
  controlPlane: { name: string; replicas: number; seconds: number };
  pools: PoolRoll[];
  writes: Write[];
  seconds: number;
}

export interface UpgradePlan {
  kind: 'FerryUpgradePlan';
  format: 1;
  cluster: string;
  target: UpgradeTarget;
  current: { kubernetes: string; talos: string | null; talosSource: string };
  stages: Stage[];
  blockers: Blocker[];
  warnings: string[];
  /** Seconds, summed over the stages. */
  seconds: number;
}

export type { KubeObject };
