import { describe, expect, it } from 'vitest';
import { drainBatchStep } from '../plan/drain-batch-step.js';
import type { Step } from '../plan/model.js';
import { stepTimeoutSeconds } from './step-timeout.js';

// A drain-batch step as the plan makes it: its own timeout counts rounds of 4 nodes.
function batchOf(n: number, perNode: number): Step {
  const draft = drainBatchStep({
    batch: 1,
    nodes: Array.from({ length: n }, (_, i) => ({
      node: { kind: 'kubeadm' as const, name: `w${i}`, address: `10.0.0.${i}` },
      info: { pdbs: [], pods: 1 },
    })),
    perNodeTimeoutSeconds: perNode,
  });
  return { ...draft, id: 'p3-drain-batch-1', phase: 3 } as unknown as Step;
}

describe("a step's timeout in a run", () => {
  it("the plan's drain-batch timeout as planned at the default concurrency", () => {
    expect(stepTimeoutSeconds(batchOf(9, 100), {})).toBe(300);
  });

  it('a run draining fewer nodes at a time gets more rounds; more at a time, fewer', () => {
    expect(stepTimeoutSeconds(batchOf(9, 100), { drainConcurrency: 1 })).toBe(900);
    expect(stepTimeoutSeconds(batchOf(9, 100), { drainConcurrency: 9 })).toBe(100);
  });

  it('--drain-timeout is per node: counted once per round of this run', () => {
    expect(stepTimeoutSeconds(batchOf(9, 100), { drainTimeoutSeconds: 60 })).toBe(180);
    expect(stepTimeoutSeconds(batchOf(9, 100), { drainTimeoutSeconds: 60, drainConcurrency: 2 })).toBe(300);
  });

  it('--step-timeout drain-batch=S bounds the whole step', () => {
    expect(stepTimeoutSeconds(batchOf(9, 100), { timeouts: { 'drain-batch': 240 } })).toBe(240);
  });
});
