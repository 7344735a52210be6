/**
 * `gate`: observes only (its expectation, observed twice a stability interval apart, is the step);
 * runs every time, never "already done". A swap gate also demands that every control-plane
 * apiserver still in service answers: a cluster that lost one instance must not lose another to
 * the swap.
 */
import type { ExpectedState } from '../../plan/expected-state.js';
import { stepTimeoutSeconds } from '../step-timeout.js';
import type { Handler, RunView } from './context.js';

export const handler: Handler<'gate'> = {
  mode: 'observe',
  gate: (step, run) => ({
    expect: withInvariants(step.expect, run),
    timeoutMs: stepTimeoutSeconds(step, run.options) * 1000,
    stableMs: (run.options.gateStableSeconds ?? step.params.stableSeconds) * 1000,
  }),
};

/** The apiservers that serve now: the old ones not stopped yet, the new ones whose Node is Ready. */
function withInvariants(expect: ExpectedState, run: RunView): ExpectedState {
  const serving: NonNullable<ExpectedState['apiservers']> = [];
  for (const cp of run.deps.plan.controlPlanes) {
    const stopped = run.steps.find((s) => s.kind === 'stop-apiserver' && s.subject === cp.node);
    if (!stopped || !run.finished.has(stopped.id)) {
      serving.push({ node: { kind: 'kubeadm', name: cp.node, address: cp.address }, serving: true });
    }
    const added = run.steps.find((s) => s.kind === 'wait-node-ready' && s.subject === cp.node);
    if (added && run.finished.has(added.id)) serving.push({ node: cp.replacement, serving: true });
  }
  return { ...expect, apiservers: [...(expect.apiservers ?? []), ...serving] };
}
