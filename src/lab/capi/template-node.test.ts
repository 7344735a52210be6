import { describe, expect, it } from 'vitest';
import { patchesNodeShape } from './template-node.js';

describe('patchesNodeShape', () => {
  it('reads v1alpha1 nodeLabels/nodeTaints and KubeNodeConfig labels/taints; later patches win', () => {
    const v1 =
      'machine:\n  nodeLabels:\n    pool: blue\n    tier: a\n  nodeTaints:\n    dedicated: blue:NoSchedule\n    spot: PreferNoSchedule\n';
    const knc =
      'apiVersion: v1alpha1\nkind: KubeNodeConfig\nlabels:\n  tier: b\ntaints:\n  dedicated: green:NoSchedule\n';
    expect(patchesNodeShape([v1, knc])).toEqual({
      labels: { pool: 'blue', tier: 'b' },
      taints: [
        { key: 'dedicated', value: 'green', effect: 'NoSchedule' },
        { key: 'spot', effect: 'PreferNoSchedule' },
      ],
    });
  });
  it('patches without labels or taints give none', () => {
    expect(patchesNodeShape(['cluster:\n  network:\n    cni:\n      name: none\n'])).toEqual({
      labels: {},
      taints: [],
    });
  });
  it('a control-plane patch that allows scheduling says so (the node then gets no control-plane taint)', () => {
    const cp = 'cluster:\n  allowSchedulingOnControlPlanes: true\n';
    expect(patchesNodeShape(['machine:\n  type: controlplane\n', cp])).toEqual({
      labels: {},
      taints: [],
      allowSchedulingOnControlPlanes: true,
    });
  });
});
