/**
 * Inputs for the plan's tests: the example cluster (./example.ts) derived and audited for real, and
 * a way to vary it (another leader, fewer members) without touching the files.
 */
import { runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { deriveFacts } from '../facts/derive.js';
import type { TargetInput } from '../facts/target.js';
import type { KitSummary } from '../kit/read.js';
import type { Snapshot } from '../snapshot/model.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan, type PlanInput } from './build.js';
import { sealPlan } from './integrity.js';
import type { Plan, Step, StepParams, Strategy } from './model.js';

export const FIXED_NOW = new Date('2026-09-01T12:00:00.000Z');

export function inputsFor(
  snapshot: Snapshot,
  opts: { strategy?: Strategy; kit?: KitSummary | null; target?: TargetInput; allowBlockers?: boolean } = {},
): PlanInput {
  const facts = deriveFacts(snapshot, opts.target ?? {});
  const audit = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: FIXED_NOW });
  return {
    snapshot,
    facts,
    audit,
    snapshotPath: 'examples/lab-cluster',
    strategy: opts.strategy ?? 'surge',
    kit: opts.kit ?? null,
    allowBlockers: opts.allowBlockers ?? true,
    now: FIXED_NOW,
  };
}

export async function examplePlan(
  opts: { strategy?: Strategy; kit?: KitSummary | null; target?: TargetInput } = {},
): Promise<Plan> {
  return buildPlan(inputsFor(await exampleSnapshot(), opts));
}

/**
 * A plan a test edited, sealed again (fresh digest and fingerprints): what a buggy ferry would
 * write. Tests that build or edit plans for the loader use this rather than a weaker loader.
 */
export function sealed(plan: Plan): Plan {
  const { integrity: _, ...content } = plan;
  return sealPlan(content);
}

/** Makes the member on `node` the etcd leader in every endpoint status of the snapshot. */
export function setLeader(snapshot: Snapshot, node: string): void {
  const member = snapshot.etcd?.members.find((m) => m.name === node);
  if (!member || !snapshot.etcd) throw new Error(`no member ${node}`);
  for (const ep of snapshot.etcd.endpoints) ep.leaderId = member.id;
}

export function stepsOfPhase(plan: Plan, phase: number): Step[] {
  return plan.phases[phase]?.steps ?? [];
}

/** Subjects in the order their blocks appear, e.g. ["cp-1", "cp-2"]; throws if a subject's steps are split. */
export function subjectBlocks(steps: Step[]): string[] {
  const blocks: string[] = [];
  for (const s of steps) {
    if (blocks.at(-1) === s.subject) continue;
    if (blocks.includes(s.subject))
      throw new Error(`steps of ${s.subject} are interleaved with another node's`);
    blocks.push(s.subject);
  }
  return blocks;
}

/**
 * The step that asks for the replacement of `replaces` (a control plane's `provision`, a worker
 * batch's `provision-request`) and that machine's parameters.
 */
export function provisioningOf(
  plan: Plan,
  replaces: string,
): { step: Step; machine: StepParams['provision'] } | undefined {
  for (const step of plan.phases.flatMap((p) => p.steps)) {
    if (step.kind === 'provision' && step.params.node.replaces === replaces)
      return { step, machine: step.params };
    if (step.kind === 'provision-request') {
      const machine = step.params.machines.find((m) => m.node.replaces === replaces);
      if (machine) return { step, machine };
    }
  }
  return undefined;
}
