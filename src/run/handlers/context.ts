/**
 * What a step handler gets: the run's ports and options, what the run learned (bindings), and the
 * few orchestrator services a handler may call. Handlers act; the orchestrator gates, verifies,
 * journals and resumes around them.
 */

import type { ExpectedAlert } from '../../knowledge/expected-alerts.js';
import type { ExpectedState, MemberRef, NodeRef } from '../../plan/expected-state.js';
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

/** The run past one step, for the hooks that look at the whole plan: its steps, the finished ones. */
export interface RunView {
  readonly deps: RunDeps;
  readonly options: RunOptions;
  readonly steps: readonly Step[];
  readonly finished: ReadonlySet<string>;
}

/** How a step's gate is observed. */
export interface GateSpec {
  readonly expect: ExpectedState;
  /** How long it may take to hold. Default: --gate-grace (30 s). */
  readonly timeoutMs?: number | undefined;
  /** It must hold this long (observed at both ends) before the step goes on. */
  readonly stableMs?: number | undefined;
}

/** What a stop hook sees: the run, the step that stopped it (what is given back is journalled against it). */
export interface StopContext extends RunView {
  readonly stepId: string;
  log(line: string): void;
  /** Once this step is finished its subject's member or machine is gone (Handler `pointOfNoReturn`). */
  pointOfNoReturn(step: Step): boolean;
}

/**
 * What a stopped run gives back of what steps of a kind changed (cordons, replica counts). Runs
 * once per stop, whichever step stopped the run; kinds that share one give it back once.
 */
export interface StopHook {
  /** What it gives back, for the log line when it cannot: "cordon state". */
  readonly what: string;
  giveBack(ctx: StopContext): Promise<void>;
}

/**
 * How a step kind is carried out:
 * - `observe`: nothing to do but observe; its gate and verification are the step, run every time
 *   (never "already done");
 * - `wait`: nothing to do; its verification waits for something the cluster does by itself;
 * - `act`: an action through a port (or a person). `pointOfNoReturn`: once done, the node's member
 *   or machine is gone, so a stopped run does not give the node its cordon back.
 * Provisions never run side by side (a control plane's scales the TalosControlPlane by one); a
 * worker batch's detections do, the provisioner keeping each to its own machine.
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
  /**
   * Before the step's idempotency check and gate: a reason to skip it (its condition does not
   * hold; the orchestrator journals the skip), or undefined to go on. Also the moment to record
   * what a stop gives back (a node's cordon before the run touches it).
   */
  beforeGate?(step: StepOf<K>, ctx: StepContext): Promise<{ skip: string } | undefined>;
  /** How the gate is observed; without it: `step.expect` within --gate-grace. */
  gate?(step: StepOf<K>, run: RunView): GateSpec;
  /**
   * The alerts this step raises by doing its job (src/knowledge/expected-alerts.ts): with
   * --silence-expected they are silenced while it runs.
   */
  expectedAlerts?(step: StepOf<K>, ctx: StepContext): ExpectedAlert[];
  /** What a stop gives back; the orchestrator runs each distinct hook once per stop. */
  readonly onStop?: StopHook;
};

/** One handler per step kind: a new kind does not compile until it has one. */
export type Handlers = { readonly [K in StepKind]: Handler<K> };

/** A member as a person names it: its name, or what it replaces while Talos has not named it yet. */
export function memberName(m: MemberRef): string {
  return m.name ?? (m.kind === 'talos' ? `the member replacing ${m.replaces}` : m.id);
}

/** A step a person carries out: the run prints its commands and waits for its verification. */
export function operatorStep<K extends StepKind>(): Handler<K> {
  return { mode: 'act', act: (_step: Step, ctx: StepContext) => ctx.operatorAction() };
}
