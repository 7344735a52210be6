/**
 * Phase 3: workers, batch by batch. Kept simple on purpose (issue 6: workers are the next issue):
 * a gate per batch, then per node the same provision/drain/decommission steps as a control plane,
 * without etcd or load-balancer steps. Nodes of one batch share no PodDisruptionBudget.
 */
import type { Provisioner } from '../facts/target.js';
import { cmd, endpointReadyzCmd, healthCmd, kubectl, memberListCmd } from './commands.js';
import type { EtcdModel } from './etcd-sim.js';
import type { ExpectedState, KubeadmNodeRef, TalosNodeRef } from './expected-state.js';
import type { MachineConfigPicker } from './kit.js';
import type { DraftStep, PdbRef, Strategy } from './model.js';
import {
  cordonStep,
  decommissionStep,
  deleteNodeStep,
  drainStep,
  provisionStep,
  waitReadyStep,
} from './node-steps.js';
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

export function workerBatch(ctx: WorkerContext, batch: number, swaps: WorkerSwap[]): DraftStep[] {
  const first = swaps[0];
  if (!first) return [];
  const healthy: ExpectedState = {
    etcd: ctx.etcd.expectation('all'),
    nodes: swaps.map((s) => ({ node: s.old, exists: true })),
    endpoint: { readyz: true },
  };
  const steps: DraftStep[] = [
    gateStep({
      subject: first.old.name,
      title: `Gate before worker batch ${batch}: ${swaps.map((s) => s.old.name).join(', ')}`,
      target: { node: first.old },
      reason: 'the control plane is healthy before workers move',
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
  for (const s of swaps) steps.push(...workerSwap(ctx, batch, s));
  return steps;
}

function workerSwap(ctx: WorkerContext, batch: number, s: WorkerSwap): DraftStep[] {
  const subject = s.old.name;
  const join = [
    provisionStep({
      subject,
      batch,
      node: s.replacement,
      role: 'worker',
      provisioner: ctx.provisioner,
      talosVersion: ctx.talosVersion,
      machineConfig: ctx.machineConfig('worker', s.old.name, s.replacement.name),
      ...(ctx.strategy === 'replace'
        ? { pre: { machines: [{ node: s.old, state: 'decommissioned' as const }] } }
        : {}),
    }),
    waitReadyStep({ subject, batch, node: s.replacement }),
  ];
  const leave = [
    cordonStep({ subject, batch, node: s.old }),
    drainStep({
      subject,
      batch,
      node: s.old,
      info: ctx.drainInfo(s.old.name),
      timeoutSeconds: ctx.drainTimeoutSeconds,
    }),
    decommissionStep({
      subject,
      batch,
      node: s.old,
      provisioner: ctx.provisioner,
      role: 'worker',
      comesBack: ctx.strategy === 'replace',
    }),
    deleteNodeStep({ subject, batch, node: s.old }),
  ];
  return ctx.strategy === 'surge' ? [...join, ...leave] : [...leave, ...join];
}
