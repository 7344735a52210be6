/** Words for what the planner decided: why a batch has its size, what an outage is, a lower-bound term. */
import type { BatchBound, LowerBoundTerm, Outage, PlannedBatch } from './model.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function explainBound(b: BatchBound): string {
  switch (b.kind) {
    case 'max-unavailable':
      return `--max-unavailable: at most ${plural(b.max, 'worker')} at once`;
    case 'pdb':
      return `PodDisruptionBudget ${b.pdb} allows ${plural(b.allowed, 'disruption')}: the next worker has pods under it too`;
    case 'capacity':
      return b.shortage === 'spread'
        ? `capacity: ${b.pod} fits only where its spreading rules forbid it`
        : b.shortage === 'fragmentation'
          ? `capacity: no single node that stays has room for ${b.pod}`
          : `capacity: the workers that stay lack the ${b.shortage === 'pods' ? 'pod slots' : b.shortage} for ${b.pod}`;
    case 'placement':
      return "capacity: the workers left now hold this batch's pods";
    case 'nodes-left':
      return 'every worker left is in it';
    case 'blocked':
      return `PodDisruptionBudget ${b.pdb} allows no disruption: this drain waits on it`;
  }
}

export function explainBatch(b: PlannedBatch): string {
  const rounds = b.rounds > 1 ? `, ${b.rounds} drain rounds` : '';
  return `${plural(b.nodes.length, 'worker')}, ${plural(b.pods, 'pod')} evicted${rounds}; bounded by ${explainBound(b.bound)}`;
}

export function explainOutage(o: Outage): string {
  return `${o.kind} ${o.namespace}/${o.name}: ${o.reason} when ${o.node} drains (batch ${o.batch}), ${outageWhen(o)}: ${o.detail}`;
}

export function explainTerm(t: LowerBoundTerm): string {
  switch (t.kind) {
    case 'pdb':
      return `PodDisruptionBudget ${t.pdb}: ${t.pods} pod(s) ÷ ${t.allowed} allowed disruption(s) = ${t.rounds} drain round(s)${(t.batches ?? 1) > 1 ? ` over at least ${t.batches} batches` : ''}: ${t.seconds} s`;
    case 'max-unavailable':
      return `${t.workers} worker(s) ÷ --max-unavailable ${t.max} = ${t.batches} batch(es): ${t.seconds} s`;
    case 'capacity':
      return `${t.resource} requests moved ÷ spare capacity (${Math.round(t.moved)} ÷ ${Math.round(t.spare)}) = ${t.batches} batch(es): ${t.seconds} s`;
  }
}

/** "45 s", "9 min", "2 h 5 min": an estimate, rounded as one. */
export function roughly(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  const min = Math.round(seconds / 60);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

export function outageWhen(o: Outage): string {
  return o.seconds === null ? 'until someone acts' : `about ${roughly(o.seconds)}`;
}
