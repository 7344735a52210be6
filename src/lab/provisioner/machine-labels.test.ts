import { expect, it } from 'vitest';
import {
  machineConfigAllowsScheduling,
  machineConfigNodeLabels,
  machineConfigNodeTaints,
} from './machine-labels.js';

it("reads a machine config's node labels, single- or multi-document", () => {
  expect(
    machineConfigNodeLabels(
      'version: v1alpha1\nmachine:\n  type: worker\n  nodeLabels:\n    # from: Node worker-3\n    lab.example/pool: data\n',
    ),
  ).toEqual({ 'lab.example/pool': 'data' });
  expect(
    machineConfigNodeLabels(
      'machine:\n  type: worker\n---\napiVersion: v1alpha1\nkind: KubeNodeConfig\nlabels:\n  tier: db\n',
    ),
  ).toEqual({ tier: 'db' });
  expect(machineConfigNodeLabels('machine:\n  type: worker\n')).toEqual({});
});

it('reads whether a control plane takes workloads: v1alpha1 allowSchedulingOnControlPlanes or a deleted taint', () => {
  expect(
    machineConfigAllowsScheduling(
      'machine:\n  type: controlplane\ncluster:\n  allowSchedulingOnControlPlanes: true\n',
    ),
  ).toBe(true);
  expect(machineConfigAllowsScheduling('cluster:\n  allowSchedulingOnControlPlanes: false\n')).toBe(false);
  expect(
    machineConfigAllowsScheduling(
      'machine:\n  type: controlplane\n---\napiVersion: v1alpha1\nkind: KubeNodeConfig\ntaints:\n  node-role.kubernetes.io/control-plane:\n    $patch: delete\n',
    ),
  ).toBe(true);
  expect(machineConfigAllowsScheduling('machine:\n  type: controlplane\n')).toBeUndefined();
});

it("reads a machine config's node taints: value:Effect or Effect, v1alpha1 or KubeNodeConfig", () => {
  expect(
    machineConfigNodeTaints(
      'machine:\n  nodeTaints:\n    lab.example/edge: "true:NoSchedule"\n    gpu: NoExecute\n',
    ),
  ).toEqual([
    { key: 'lab.example/edge', value: 'true', effect: 'NoSchedule' },
    { key: 'gpu', effect: 'NoExecute' },
  ]);
  expect(
    machineConfigNodeTaints(
      'machine:\n  type: worker\n---\napiVersion: v1alpha1\nkind: KubeNodeConfig\ntaints:\n  db: "x:NoSchedule"\n  node-role.kubernetes.io/control-plane:\n    $patch: delete\n',
    ),
  ).toEqual([{ key: 'db', value: 'x', effect: 'NoSchedule' }]);
  expect(machineConfigNodeTaints('machine:\n  type: worker\n')).toEqual([]);
});
