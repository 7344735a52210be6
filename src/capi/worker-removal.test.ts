import { describe, expect, it } from 'vitest';
import { workerRemoval } from './worker-removal.js';

describe('workerRemoval', () => {
  it('a kubeadm worker is always ferry’s to drain, control-plane Machines or not', () => {
    for (const n of [0, 1, 3])
      expect(workerRemoval({ kubeadm: true, activeControlPlaneMachines: n }).kind).toBe('ferry-drains');
  });
  it('a Talos worker Machine goes through Cluster API only once a control-plane Machine is active', () => {
    expect(workerRemoval({ kubeadm: false, activeControlPlaneMachines: 0 })).toMatchObject({
      kind: 'ferry-drains',
      reason: expect.stringMatching(/without draining/),
    });
    expect(workerRemoval({ kubeadm: false, activeControlPlaneMachines: 1 })).toEqual({
      kind: 'cluster-api-may-delete',
    });
  });
});
