import { describe, expect, it } from 'vitest';
import { PAUSED_ANNOTATION } from '../../capi/view.js';
import type { Selected } from '../graph.js';
import type { KubeObject } from '../model.js';
import { mergeMoved } from './merge.js';

const obj = (kind: string, name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'x/v1',
  kind,
  metadata: { name, namespace: 'ns', uid: `${kind}-${name}` },
  ...extra,
});

describe('mergeMoved', () => {
  const ours: Selected[] = [
    { object: obj('Cluster', 'a', { spec: { topology: 1 } }), reason: 'root' },
    { object: obj('TalosControlPlane', 'a-cp', { status: { bootstrapped: true } }), reason: 'owner-chain' },
    { object: obj('Secret', 'a-talos'), reason: 'talos-secret' },
    {
      object: obj('ClusterClass', 'cc', { metadata: { name: 'cc', namespace: 'ns', annotations: {} } }),
      reason: 'root',
    },
  ];

  it("keeps move's objects, unpaused as they were, fills a missing status, adds what move left out", () => {
    const moved = [
      obj('Cluster', 'a', { spec: { topology: 1, paused: true } }),
      obj('TalosControlPlane', 'a-cp'),
      obj('ClusterClass', 'cc', {
        metadata: { name: 'cc', namespace: 'ns', annotations: { [PAUSED_ANNOTATION]: 'true' } },
      }),
      obj('ConfigMap', 'only-move'),
    ];
    const out = mergeMoved(ours, moved);
    expect(out.map((s) => `${s.object.kind}/${s.object.metadata.name}:${s.reason}`)).toEqual([
      'Cluster/a:root',
      'TalosControlPlane/a-cp:owner-chain',
      'ClusterClass/cc:root',
      'ConfigMap/only-move:clusterctl-move',
      'Secret/a-talos:talos-secret',
    ]);
    expect(out[0]!.object.spec).toEqual({ topology: 1 });
    expect(out[1]!.object.status).toEqual({ bootstrapped: true });
    expect(out[2]!.object.metadata.annotations).toEqual({});
  });

  it('a status move wrote is kept; a Cluster someone had set paused: false stays so', () => {
    const mine: Selected[] = [
      { object: obj('Cluster', 'a', { spec: { paused: false } }), reason: 'root' },
      { object: obj('TalosControlPlane', 'a-cp', { status: { bootstrapped: true } }), reason: 'owner-chain' },
    ];
    const out = mergeMoved(mine, [
      obj('Cluster', 'a', { spec: { paused: true } }),
      obj('TalosControlPlane', 'a-cp', { status: { bootstrapped: false, ready: true } }),
    ]);
    expect(out[0]!.object.spec).toEqual({ paused: false });
    expect(out[1]!.object.status).toEqual({ bootstrapped: false, ready: true });
  });
});
