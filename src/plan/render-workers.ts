/**
 * The worker roll in words and tables, shared by the Markdown and HTML runbooks: the batches and
 * what bounded each, the estimate next to its lower bound, the outages, the budgets that block.
 */
import { explainBound, explainTerm, outageWhen, roughly } from './batches/explain.js';
import type { Plan } from './model.js';

export interface RollTable {
  head: string[];
  rows: string[][];
}

export interface RollView {
  summary: string;
  estimate: string;
  assumptions: string[];
  batches: RollTable;
  outages: RollTable | null;
  blocked: string[];
  surged: string[];
}

export function workerRollView(plan: Plan): RollView {
  const r = plan.workerRoll;
  const workers = r.batches.reduce((n, b) => n + b.nodes.length, 0);
  const surge = r.surgeWorkers
    ? `; ${r.surgeWorkers.count} surge worker(s) come up before the first drain, ${r.surgeWorkers.note}`
    : '';
  const bound = r.estimate.lowerBound[0];
  return {
    summary: `${workers} worker(s) in ${r.batches.length} batch(es), at most ${r.maxUnavailable.nodes} at once (--max-unavailable ${r.maxUnavailable.given})${surge}${r.surgeReplicas ? '; --surge-replicas' : ''}.`,
    estimate: `Estimate ${roughly(r.estimate.seconds)} (${r.estimate.seconds} s); lower bound ${roughly(r.estimate.lowerBoundSeconds)} (${r.estimate.lowerBoundSeconds} s)${bound ? `, from ${explainTerm(bound)}` : ''}.`,
    assumptions: r.estimate.assumptions,
    batches: {
      head: ['batch', 'workers', 'pods', 'rounds', 'time', 'bounded by'],
      rows: r.batches.map((b) => [
        String(b.index),
        b.nodes.join(', '),
        String(b.pods),
        String(b.rounds),
        roughly(b.seconds),
        explainBound(b.bound),
      ]),
    },
    outages:
      r.outages.length === 0
        ? null
        : {
            head: ['what', 'why', 'when', 'for', 'detail'],
            rows: r.outages.map((o) => [
              `${o.kind} ${o.namespace}/${o.name}`,
              o.reason,
              `${o.node} drains (batch ${o.batch})`,
              outageWhen(o),
              o.detail,
            ]),
          },
    blocked: r.blocked.map(
      (b) =>
        `PodDisruptionBudget ${b.pdb} (${b.rule}) allows no disruption: the drains of ${b.nodes.join(', ')} cannot finish. Fix: ${b.fix}`,
    ),
    surged: r.surged.map(
      (s) =>
        `${s.workload.kind} ${s.workload.namespace}/${s.workload.name}: ${s.from} → ${s.to} replicas before batch ${s.firstBatch}, back to ${s.from} after batch ${s.lastBatch} (PodDisruptionBudget ${s.pdb})`,
    ),
  };
}
