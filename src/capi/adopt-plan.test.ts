import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { type AdoptStep, planAdoption } from './adopt-plan.js';
import { labKitObjects } from './testing-kit.js';

const label = (s: AdoptStep) => (s.kind === 'create' ? `create ${s.object.kind}` : s.kind);

describe('planAdoption', () => {
  it('orders the steps so no hazard fires: bootstrapped before any MachineDeployment, TCP paused while kubeadm members remain', () => {
    const p = planAdoption(labKitObjects(), [], true);
    if (p.kind !== 'plan') throw new Error(p.reason);
    const order = p.steps.map((s) => label(s.step));
    expect(order).toEqual([
      'namespace',
      'create Secret',
      'create Secret',
      'create Cluster',
      'create ProxmoxCluster',
      'create ProxmoxMachineTemplate',
      'create ProxmoxMachineTemplate',
      'create TalosConfigTemplate',
      'create TalosControlPlane',
      'tcp-bootstrapped',
      'create MachineDeployment',
      'own-secrets',
      'unpause-cluster',
    ]);
    const created = (k: string) =>
      p.steps
        .map((s) => s.step)
        .find((s): s is Extract<AdoptStep, { kind: 'create' }> => s.kind === 'create' && s.object.kind === k)!
        .object;
    expect(created('Cluster').spec?.['paused']).toBe(true);
    expect(created('TalosControlPlane').spec?.['replicas']).toBe(0);
    expect(created('TalosControlPlane').metadata.annotations?.['cluster.x-k8s.io/paused']).toBe('true');
    expect(created('MachineDeployment').spec?.['replicas']).toBe(0);
    expect(p.nothingToDo).toBe(false);
    // No kubeadm member left: the TCP is unpaused last.
    const last = planAdoption(labKitObjects(), [], false);
    expect(last.kind === 'plan' && label(last.steps.at(-1)!.step)).toBe('unpause-tcp');
  });

  it('refuses when a control-plane Machine exists before the TCP is bootstrapped (H2)', () => {
    const machine: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: 'lab-control-plane-abcde',
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
      },
    };
    const p = planAdoption(labKitObjects(), [machine], true);
    expect(p).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/second etcd/) });
  });
});
