/**
 * When `ferry plan` refuses to write a plan because of the workers' state (exit 1, like the
 * audit's blockers: the input is fine, the cluster is not ready): a PodDisruptionBudget that
 * allows no disruption makes its nodes' drains hang, so no plan with them is worth running; and,
 * with --fail-on-outage, any outage the roll would cause. Pure: the CLI prints what this says.
 */
import { explainOutage } from './batches/explain.js';
import type { WorkerRoll } from './model.js';

export interface Refusal {
  title: string;
  lines: string[];
  /** What makes the refusal go away. */
  remedy: string;
}

export function workerRefusals(roll: WorkerRoll, o: { failOnOutage: boolean }): Refusal[] {
  const out: Refusal[] = [];
  if (roll.blocked.length > 0) {
    const surgeable = roll.blocked.some((b) => b.surgeable !== null);
    out.push({
      title: `${roll.blocked.length} PodDisruptionBudget(s) allow no disruption: the drains of their workers would never finish`,
      lines: roll.blocked.map((b) => `${b.pdb} (${b.rule}) on ${b.nodes.join(', ')}: ${b.fix}`),
      remedy: surgeable
        ? 'fix the budgets, or pass --surge-replicas to scale their workloads up by one around their drains'
        : 'let each budget allow one disruption for the migration',
    });
  }
  if (o.failOnOutage && roll.outages.length > 0) {
    out.push({
      title: `--fail-on-outage: the worker roll would cause ${roll.outages.length} outage(s)`,
      lines: roll.outages.map(explainOutage),
      remedy:
        'give single-replica workloads a second replica and a PodDisruptionBudget, turn bare pods into Deployments (or delete them), move node-local data; or plan without --fail-on-outage to accept the outages listed',
    });
  }
  return out;
}
