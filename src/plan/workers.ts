/**
 * Phase 3: workers, batch by batch, in the batches batches/planner.ts computed. A batch's nodes
 * are worked on together, step kind by step kind: gate → (batch 1: --surge workers) → (surge:
 * every replacement asked for at once, each bound as it registers, then all waited for) → (--surge-replicas: scale up, wait Ready) → cordon all → drain all (one
 * drain-batch step, its nodes in parallel) →
 * decommission all → delete the Nodes → (replace: replacements up) → (restore replicas). Every
 * node is cordoned before any is drained, so a pod evicted from one never lands on another node
 * of the same batch.
 */
import type { Provisioner } from '../facts/target.js';
import type { SurgedWorkload } from './batches/model.js';
import { cmd, endpointReadyzCmd, healthCmd, kubectl, memberListCmd } from './commands.js';
import { drainBatchStep } from './drain-batch-step.js';
import type { EtcdModel } from './etcd-sim.js';
import type { ExpectedState, KubeadmNodeRef, TalosNodeRef } from './expected-state.js';
import type { MachineConfigPicker } from './kit.js';
import type { DraftStep, PdbRef, Strategy, WorkerBatch, WorkloadRef } from './model.js';
import {
  type BatchMachine,
  cordonStep,
  decommissionStep,
  deleteNodeStep,
  provisionBatchSteps,
  waitReadyStep,
} from './node-steps.js';
import { scaleStep, waitWorkloadReadyStep } from './scale-steps.js';
import { gateStep } from './steps.js';

export interface WorkerContext {
  strategy: Strategy;
  provisioner: Provisioner;
  talosVersion: string;
  endpointUrl: string;
  etcd: EtcdModel;
  machineConfig: MachineConfigPicker;
  drainTimeoutSeconds: number;
  drainInfo: (node: string) => { pdbs: PdbRef[]; pods: number };
}

export interface WorkerSwap {
  old: KubeadmNodeRef;
  replacement: TalosNodeRef;
}

export interface WorkerBatchInput {
  batch: WorkerBatch;
  swaps: WorkerSwap[];
  /** --surge workers, brought up in batch 1 before anything drains; `like` names the pool's node whose config they boot. */
  surge: { nodes: TalosNodeRef[]; like: string } | null;
  scaleUp: SurgedWorkload[];
  restore: SurgedWorkload[];
  /** PDBs --surge-replicas makes room under ("ns/name"). */
  surgedPdbs: ReadonlySet<string>;
}

export function workloadRef(s: SurgedWorkload): WorkloadRef {
  return {
    kind: s.workload.kind === 'StatefulSet' ? 'StatefulSet' : 'Deployment',
    namespace: s.workload.namespace,
    name: s.workload.name,
  };
}

export function workerBatch(ctx: WorkerContext, b: WorkerBatchInput): DraftStep[] {
  const first = b.swaps[0];
  if (!first) return [];
  const batch = b.batch.index;
  const subject = first.old.name;
  const healthy: ExpectedState = {
    etcd: ctx.etcd.expectation('all'),
    nodes: b.swaps.map((s) => ({ node: s.old, exists: true })),
    endpoint: { readyz: true },
    // A workload below its budget (pods the last batch moved not Ready yet, a lagging controller)
    // would be emptied further by this batch's drains: the batch waits for it, then stops.
    budgets: { healthy: true },
  };
  const steps: DraftStep[] = [
    gateStep({
      subject,
      title: `Gate before worker batch ${batch}: ${b.swaps.map((s) => s.old.name).join(', ')}`,
      target: { node: first.old },
      reason: `the control plane is healthy before workers move; batch of ${b.batch.why}`,
      expect: healthy,
      commands: [
        memberListCmd(),
        healthCmd(),
        cmd(kubectl('get nodes -o wide')),
        endpointReadyzCmd(ctx.endpointUrl),
      ],
      batch,
    }),
  ];
  // Every machine of the batch is asked for at once, then each bound and waited for side by side
  // (the orchestrator's concurrent kinds): the batch waits about one boot, not one per node.
  const provisionAll = (machines: BatchMachine[]) =>
    machines.length === 0
      ? []
      : [
          ...provisionBatchSteps({
            subject: machines[0]!.subject,
            batch,
            provisioner: ctx.provisioner,
            talosVersion: ctx.talosVersion,
            machines,
          }),
          ...machines.map((m) => waitReadyStep({ subject: m.subject, batch, node: m.node })),
        ];
  const join = (swaps: readonly WorkerSwap[]) =>
    provisionAll(
      swaps.map((s) => ({
        subject: s.old.name,
        node: s.replacement,
        machineConfig: ctx.machineConfig('worker', s.old.name, s.replacement.name),
        ...(ctx.strategy === 'replace'
          ? { pre: { machines: [{ node: s.old, state: 'decommissioned' as const }] } }
          : {}),
      })),
    );
  const surge = b.surge?.nodes ?? [];
  steps.push(
    ...provisionAll(
      surge.map((node) => ({
        subject,
        node,
        machineConfig: ctx.machineConfig('worker', b.surge!.like, node.name),
      })),
    ),
  );
  if (ctx.strategy === 'surge') steps.push(...join(b.swaps));
  for (const w of b.scaleUp) {
    const workload = workloadRef(w);
    steps.push(
      scaleStep({ subject, batch, workload, from: w.from, to: w.to, purpose: 'surge', pdb: w.pdb }),
      waitWorkloadReadyStep({ subject, batch, workload, replicas: w.to }),
    );
  }
  for (const s of b.swaps) steps.push(cordonStep({ subject: s.old.name, batch, node: s.old }));
  steps.push(
    drainBatchStep({
      batch,
      nodes: b.swaps.map((s) => ({ node: s.old, info: ctx.drainInfo(s.old.name) })),
      perNodeTimeoutSeconds: ctx.drainTimeoutSeconds,
      surged: b.surgedPdbs,
    }),
  );
  for (const s of b.swaps)
    steps.push(
      decommissionStep({
        subject: s.old.name,
        batch,
        node: s.old,
        provisioner: ctx.provisioner,
        role: 'worker',
        comesBack: ctx.strategy === 'replace',
      }),
    );
  for (const s of b.swaps) steps.push(deleteNodeStep({ subject: s.old.name, batch, node: s.old }));
  if (ctx.strategy === 'replace') steps.push(...join(b.swaps));
  const last = b.swaps.at(-1)!.old.name;
  for (const w of b.restore)
    steps.push(
      scaleStep({
        subject: last,
        batch,
        workload: workloadRef(w),
        from: w.from,
        to: w.to,
        purpose: 'restore',
        pdb: w.pdb,
      }),
    );
  return steps;
}
