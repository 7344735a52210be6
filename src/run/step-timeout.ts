/**
 * How long a step may take in this run: the plan's timeout, or what the operator gave. A worker
 * batch's drain is bounded once per round of nodes drained at the same time (the plan counts
 * rounds of DEFAULT_DRAIN_CONCURRENCY): a run with another --drain-concurrency, or a per-node
 * --drain-timeout, is counted again in this run's rounds.
 */
import {
  batchDrainTimeoutSeconds,
  DEFAULT_DRAIN_CONCURRENCY,
  drainRounds,
} from '../plan/drain-batch-step.js';
import type { Step } from '../plan/model.js';
import type { RunOptions } from './deps.js';

export function stepTimeoutSeconds(
  step: Step,
  o: Pick<RunOptions, 'timeouts' | 'drainTimeoutSeconds' | 'drainConcurrency'>,
): number {
  const given = o.timeouts?.[step.kind];
  if (step.kind === 'drain-batch') {
    // --step-timeout drain-batch=S bounds the whole step, as for any other kind.
    if (o.drainTimeoutSeconds === undefined && given !== undefined) return given;
    const nodes = step.params.nodes.length;
    const perNode =
      o.drainTimeoutSeconds ?? step.timeoutSeconds / drainRounds(nodes, DEFAULT_DRAIN_CONCURRENCY);
    return Math.ceil(
      batchDrainTimeoutSeconds(perNode, nodes, o.drainConcurrency ?? DEFAULT_DRAIN_CONCURRENCY),
    );
  }
  if (step.kind === 'drain' && o.drainTimeoutSeconds !== undefined) return o.drainTimeoutSeconds;
  return given ?? step.timeoutSeconds;
}
