import type { SourceRef } from '../../snapshot/model.js';

/**
 * One entry of kubeadm/steps.json: the kit's contract with the plan (src/plan/kit.ts reads it).
 * Every step is idempotent (apply twice = apply once), has an undo, and a verify command that says
 * whether its effect is in place; operators read the same steps in the kit README and the scripts.
 */
export interface KitPrepStep {
  /** Stable id, also the script name without ".sh", e.g. "10-apiserver-sans". */
  id: string;
  title: string;
  /** Where it runs: on each control-plane node in turn (as root), or once from an admin workstation. */
  scope: 'each-control-plane' | 'cluster';
  /** For each-control-plane steps: node names in the order to go through them, one at a time. */
  nodes: string[];
  /** Ids of steps that must be done (and verified) on every node before this one starts. */
  after: string[];
  /** Shell commands; `NODE` stands for the node name where scope is each-control-plane. */
  apply: string;
  verify: string;
  undo: string;
  /** Why the step exists and what to watch (rule ids from blockers.md). */
  why: string;
}

/** One kubeadm-side preparation step as generated: the steps.json entry plus where it came from. */
export interface PrepStep extends KitPrepStep {
  provenance: SourceRef[];
}

/** The `kind` of kubeadm/steps.json. */
export const STEPS_JSON_KIND = 'FerryKubeadmPrep';

export function stepsJson(steps: PrepStep[]): string {
  return `${JSON.stringify(
    {
      kind: STEPS_JSON_KIND,
      version: 1,
      steps: steps.map(({ provenance: _p, ...s }): KitPrepStep => s),
    },
    null,
    2,
  )}\n`;
}
