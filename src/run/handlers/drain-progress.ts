/**
 * A drain step's action through drain-nodes.ts, for `drain` (one node) and `drain-batch` (a
 * worker batch): every event is journaled against the step, and a resumed attempt starts from
 * what the earlier ones journaled (the pods they evicted, the Ready counts before the first eviction).
 */

import {
  DEFAULT_DRAIN_CONCURRENCY,
  type DrainEvent,
  type DrainNodesResult,
  drainNodes,
  type EvictedPod,
  type OwnerKey,
} from '../drain-nodes.js';
import type { Journal } from '../journal.js';
import type { StepContext } from './context.js';

export function priorProgress(
  journal: Journal,
  stepId: string,
): { evicted: EvictedPod[]; baseline: Record<OwnerKey, number> | undefined } {
  const evicted: EvictedPod[] = [];
  let baseline: Record<OwnerKey, number> | undefined;
  for (const o of journal.observations({ stepId, purpose: 'drain-progress' })) {
    const e = o.data as DrainEvent;
    if (e.kind === 'evicted') evicted.push(e.evicted);
    else if (e.kind === 'baseline') baseline ??= e.ready;
  }
  return { evicted, baseline };
}

function logLine(e: DrainEvent): string | undefined {
  switch (e.kind) {
    case 'evicted':
      return `evicted ${e.evicted.pod} from ${e.evicted.node}`;
    case 'blocked':
      return `eviction of ${e.pod} refused${e.pdb ? ` by PodDisruptionBudget ${e.pdb}` : ''}: ${e.message}`;
    case 'node-drained':
      return `${e.node} drained in ${(e.ms / 1000).toFixed(1)} s`;
    case 'replacements-ready':
      return `replacements Ready elsewhere (${e.owners} controller(s)) after ${(e.ms / 1000).toFixed(1)} s`;
    case 'bare-pods-accepted':
      return `evicting ${e.pods.length} pod(s) without a controller, as accepted (--evict-bare-pods): ${e.pods.join(', ')}`;
    case 'not-replaceable':
      return `${e.owner.replace('/', ' ')}: its pods are pinned to ${e.node} and cannot come back elsewhere (an outage the plan lists); not waited for`;
    case 'baseline':
      return undefined;
    default:
      return e satisfies never;
  }
}

export async function drainWithJournal(ctx: StepContext, nodes: string[]): Promise<DrainNodesResult> {
  const { journal } = ctx.deps;
  const stepId = ctx.action.stepId;
  return drainNodes(ctx.deps.kube, {
    nodes,
    concurrency: ctx.options.drainConcurrency ?? DEFAULT_DRAIN_CONCURRENCY,
    timeoutMs: ctx.action.timeoutMs,
    signal: ctx.action.signal,
    evictBarePods: ctx.options.evictBarePods === true,
    prior: priorProgress(journal, stepId),
    record: (e) => {
      journal.observe(stepId, 'drain-progress', e.kind === 'blocked' ? false : null, e);
      const line = logLine(e);
      if (line) ctx.log(line);
    },
  });
}
