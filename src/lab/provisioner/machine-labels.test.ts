import { expect, it } from 'vitest';
import { machineConfigNodeLabels } from './machine-labels.js';

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
