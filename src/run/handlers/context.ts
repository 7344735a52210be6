/**
 * What a step handler gets: the run's ports and options, what the run learned (bindings), and the
 * few orchestrator services a handler may call. Handlers act; the orchestrator gates, verifies,
 * journals and resumes around them.
 */
import type { MemberRef, NodeRef } from '../../plan/expected-state.js';
import type { Step, StepKind, StepOf } from '../../plan/model.js';
import type { ActionContext, EtcdView } from '../../ports/run.js';
import type { Bindings, MemberResolution, NodeBinding } from '../bindings.js';
import type { RunDeps, RunOptions } from '../deps.js';

/** What an action reports; journalled with `action-done`. */
export type ActionResult = Record<string, unknown> | undefined;

export interface StepContext {
  readonly deps: RunDeps;
  readonly options: RunOptions;
  readonly bindings: Bindings;
  /** Ids of the plan's kubeadm members: never mistaken for a joining Talos member. */
  readonly kubeadmIds: ReadonlySet<string>;
  /** For the adapters: the step id, its timeout, the run's abort signal, an indented log. */
  readonly action: ActionContext;
  log(line: string): void;
  /** The Node name of a reference, or a gate stop when provisioning has not reported it. */
  requireName(ref: NodeRef): string;
  /** Journals what the run learned about a replacement (its name, address, member id). */
  bind(b: NodeBinding): void;
  /** Prints the step's commands for a person (or lets the lab do it). */
  operatorAction(): Promise<Record<string, unknown>>;
  /** Points the etcd probe at the healthy voters, `firstId` (default: the leader) first, never `exceptId`. */
  steerProbe(view: EtcdView, exceptId?: string, firstId?: string): Promise<void>;
  /** A plan's member reference in a member list (by id, or by name for a Talos member). */
  resolveMember(ref: MemberRef, view: EtcdView): MemberResolution;
}

/**
 * How a step kind is carried out:
 * - `observe`: nothing to do but observe; its gate and verification are the step, run every time
 *   (never "already done");
 * - `wait`: nothing to do; its verification waits for something the cluster does by itself;
 * - `act`: an action through a port (or a person). `pointOfNoReturn`: once done, the node's member
 *   or machine is gone, so a stopped run does not give the node its cordon back.
 * Provisions never run side by side: a provisioner may bind the next new node it sees (manual,
 * unnamed) or scale a shared MachineDeployment by one (capi).
 */
export type Handler<K extends StepKind> = (
  | { readonly mode: 'observe' }
  | { readonly mode: 'wait' }
  | {
      readonly mode: 'act';
      readonly pointOfNoReturn?: true;
      act(step: StepOf<K>, ctx: StepContext): Promise<ActionResult>;
    }
) & {
  /**
   * Consecutive steps of this kind in one worker batch run side by side: each acts on its own
   * node and needs nothing of the others (a batch of ten waits one boot, not ten).
   */
  readonly concurrent?: true;
};

/** One handler per step kind: a new kind does not compile until it has one. */
export type Handlers = { readonly [K in StepKind]: Handler<K> };

/** A step a person carries out: the run prints its commands and waits for its verification. */
export function operatorStep<K extends StepKind>(): Handler<K> {
  return { mode: 'act', act: (_step: Step, ctx: StepContext) => ctx.operatorAction() };
}
