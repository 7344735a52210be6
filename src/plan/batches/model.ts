/**
 * The worker batch planner's input and output, as plain data: a model of the workers, the pods
 * a drain would evict from them and the PodDisruptionBudgets over those pods (built from a
 * snapshot by from-snapshot.ts, or by a test's generator), and the batches it plans. Nothing
 * here reads a snapshot or does I/O.
 */
import type { Taint } from '../../snapshot/model.js';

/** cpu in millicores, memory in bytes, pods as a count; Infinity when a node does not say. */
export interface Vec {
  cpu: number;
  memory: number;
  pods: number;
}

export type Resource = keyof Vec;

export interface ModelNode {
  name: string;
  /** Labels and taints: a replacement carries the same (the kit's pool patches), bar its hostname. */
  labels: Record<string, string>;
  taints: Taint[];
  allocatable: Vec;
  /** Requests of what stays on the node and comes back on its replacement: DaemonSet and mirror pods. */
  fixed: Vec;
  /** Cordoned at snapshot time: takes no pod (its replacement does). */
  unschedulable: boolean;
}

/** A required node selector term: requirements ANDed (terms of one list are ORed). */
export interface NodeTerm {
  key: string;
  operator: string;
  values: string[];
}

/** Where a pod may run, shared by every pod of a template (the planner caches fits per rule set). */
export interface Scheduling {
  tolerations: { key?: string; operator?: string; value?: string; effect?: string }[];
  nodeSelector: Record<string, string>;
  /** Lists of ORed terms, every list must hold: the pod's required node affinity, its volumes' node affinity. */
  required: NodeTerm[][][];
}

/**
 * A hard spreading rule over pods of one group: topology spread with DoNotSchedule, or required pod
 * anti-affinity (maxSkew 0: at most one pod of the group per domain).
 */
export interface SpreadRule {
  /** namespace + selector + topology key: pods carrying the same rule count together. */
  group: string;
  topologyKey: string;
  /** topologySpreadConstraints maxSkew; 0 for anti-affinity. */
  maxSkew: number;
}

export type OwnerKind = 'Deployment' | 'StatefulSet' | 'ReplicaSet' | 'Job' | 'CronJob' | string;

export interface Owner {
  kind: OwnerKind;
  namespace: string;
  name: string;
  /** spec.replicas of a Deployment, StatefulSet or ReplicaSet; null for other owners. */
  replicas: number | null;
}

/** Why a pod cannot run on another node, whatever the capacity. */
export type Pin = { kind: 'local-volume'; volume: string } | { kind: 'node-name'; field: string };

export interface ModelPod {
  namespace: string;
  name: string;
  /** The worker it runs on. */
  node: string;
  requests: Vec;
  /** The top controller; null for a bare pod (nothing recreates it once evicted). */
  owner: Owner | null;
  /** Indexes into ClusterModel.pdbs. */
  pdbs: number[];
  /** Index into ClusterModel.schedulings. */
  scheduling: number;
  spread: SpreadRule[];
  pin: Pin | null;
  /** terminationGracePeriodSeconds (default 30). */
  graceSeconds: number;
}

export interface ModelPdb {
  namespace: string;
  name: string;
  /** status.disruptionsAllowed, or computed from the spec and the pods' readiness when absent. */
  allowed: number;
  /** Where `allowed` came from. */
  source: 'status' | 'spec';
  /** Allowed disruptions once the workload runs one replica more (--surge-replicas); 0 when that does not help. */
  allowedWithExtraReplica: number;
  /** The one scalable workload (Deployment, StatefulSet) whose pods it selects, when there is one. */
  workload: Owner | null;
  /** spec.minAvailable / spec.maxUnavailable as written, for messages. */
  rule: string;
}

export interface ClusterModel {
  /** The workers to replace, in the order batches take them (natural name order). */
  workers: ModelNode[];
  pods: ModelPod[];
  pdbs: ModelPdb[];
  schedulings: Scheduling[];
}

// ---------------------------------------------------------------------------------------------
// What the planner makes

/**
 * What a pod that found no node lacked: a resource no admitted node has enough of, room only on
 * nodes its spreading rules exclude, or enough of each resource but not on one node.
 */
export type Shortage = Resource | 'spread' | 'fragmentation';

/** Why a batch is not bigger: what the next node it could not take ran into. */
export type BatchBound =
  | { kind: 'max-unavailable'; max: number }
  | { kind: 'pdb'; pdb: string; allowed: number }
  | { kind: 'capacity'; shortage: Shortage; pod: string }
  /** The nodes left hold pods of this batch's drained nodes now (they take its pods). */
  | { kind: 'placement' }
  /** Every worker left is in it. */
  | { kind: 'nodes-left' }
  /** A PDB allows no disruption: the node drains alone, and its drain waits on that budget. */
  | { kind: 'blocked'; pdb: string };

export interface PlannedBatch {
  /** 1-based. */
  index: number;
  nodes: string[];
  /** Pods the drains evict (a pod that moved here in an earlier batch counts again). */
  pods: number;
  /** Drain rounds: a PDB with more of its pods in the batch than it allows goes round by round. */
  rounds: number;
  /** Longest terminationGracePeriodSeconds of the pods evicted. */
  graceSeconds: number;
  bound: BatchBound;
  /** Workloads scaled up by one before this batch (--surge-replicas), and restored after it. */
  scaleUp: string[];
  restore: string[];
}

export type OutageReason =
  /** One replica: down from its eviction until its replacement is Ready. */
  | 'single-replica'
  /** No controller: evicted, nothing recreates it. */
  | 'bare-pod'
  /** Its data is on a node-local volume of the drained node. */
  | 'local-volume'
  /** Pinned to the drained node by name. */
  | 'node-name'
  /** No node that stays matches its selector, affinity and tolerations. */
  | 'no-node-fits'
  /** Nodes match, but none has room for its requests when its node drains. */
  | 'no-room';

export interface Outage {
  /** The workload (Deployment, StatefulSet, …) or "Pod" for a pod without one. */
  kind: string;
  namespace: string;
  name: string;
  reason: OutageReason;
  /** The worker whose drain causes it. */
  node: string;
  batch: number;
  /** Expected length; null when it lasts until someone acts (a bare pod, a node-local volume). */
  seconds: number | null;
  detail: string;
}

/** A PodDisruptionBudget that lets none of its pods go: the drains of its nodes cannot finish. */
export interface BlockedPdb {
  pdb: string;
  rule: string;
  nodes: string[];
  /** The workload --surge-replicas would scale, when scaling up by one makes room. */
  surgeable: string | null;
  fix: string;
}

export interface SurgedWorkload {
  /** "Deployment shop/checkout" */
  workload: Owner;
  pdb: string;
  from: number;
  to: number;
  /** The batch before which it is scaled up, and the one after which it is restored. */
  firstBatch: number;
  lastBatch: number;
}

/** One term of the makespan's lower bound (estimate.ts): what it counts and the seconds it gives. */
export type LowerBoundTerm =
  | {
      kind: 'pdb';
      pdb: string;
      pods: number;
      allowed: number;
      rounds: number;
      /**
       * Batches its pods need when a batch drains in at most the plan's rounds (a batch evicts at
       * most rounds × allowed of them). Absent in plans written before it was counted: 1.
       */
      batches?: number;
      seconds: number;
    }
  | { kind: 'max-unavailable'; workers: number; max: number; batches: number; seconds: number }
  | {
      kind: 'capacity';
      resource: Resource;
      moved: number;
      spare: number;
      batches: number;
      seconds: number;
    };
