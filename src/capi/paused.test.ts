import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../mgmt/model.js';
import { isReady, pauseProblems } from './paused.js';

const cluster = (status: unknown, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name: 'lab', namespace: 'lab' },
  spec: {},
  status,
  ...extra,
});

describe('steady-state predicates (mgmt backup, mgmt status, capi.move-paused-or-unstable)', () => {
  it('isReady: a Ready (v1beta1) or Available (v1beta2) condition True; anything else is not ready', () => {
    expect(isReady(cluster({ conditions: [{ type: 'Available', status: 'True' }] }))).toBe(true);
    expect(isReady(cluster({ conditions: [{ type: 'Ready', status: 'True' }] }))).toBe(true);
    expect(isReady(cluster({ conditions: [{ type: 'Available', status: 'False' }] }))).toBe(false);
    expect(isReady(cluster({ conditions: [{ type: 'InfrastructureReady', status: 'True' }] }))).toBe(false);
    expect(isReady(cluster(undefined))).toBe(false);
  });

  it('pauseProblems: a paused Cluster, and an object of a cluster carrying the paused annotation', () => {
    const paused = cluster(undefined, { spec: { paused: true } });
    const tcp: KubeObject = {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosControlPlane',
      metadata: {
        name: 'lab-control-plane',
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
        annotations: { 'cluster.x-k8s.io/paused': 'true' },
      },
    };
    expect(pauseProblems([paused], [tcp])).toEqual([
      { object: 'Cluster lab/lab', why: 'cluster-paused', cluster: 'lab/lab' },
      { object: 'TalosControlPlane lab/lab-control-plane', why: 'object-paused', cluster: 'lab/lab' },
    ]);
  });
});
