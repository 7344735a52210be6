import { describe, expect, it } from 'vitest';
import { microTime } from './kubelet.js';
import {
  desiredTaints,
  nodeIpamActions,
  nodeLifecycleActions,
  orphanedPodActions,
  schedulerActions,
} from './lifecycle.js';
import { node, pod, world } from './testing.js';
import { DEFAULT_TIMINGS, newMemory } from './world.js';

const NOT_READY_NS = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

describe('node lifecycle', () => {
  it('removes the not-ready taint once the node is Ready and keeps foreign taints', () => {
    const n = node('w1', {
      ready: true,
      taints: [NOT_READY_NS, { key: 'dedicated', value: 'db', effect: 'NoSchedule' }],
    });
    expect(desiredTaints(n, 'True')).toEqual([{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]);
    expect(desiredTaints(node('w2', { unschedulable: true }), 'True')).toEqual([
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
  });

  it('marks a node whose Lease went stale Unknown, taints it unreachable and its pods not ready', () => {
    const w = world({ nodes: [node('w1', { ready: true })] });
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'w1', namespace: 'kube-node-lease' },
      spec: { renewTime: microTime(w.now - 20_000) },
    };
    const running = pod('p', { node: 'w1', phase: 'Running', ready: true });
    const actions = nodeLifecycleActions(
      { ...w, leases: [lease], pods: [running] },
      newMemory(),
      DEFAULT_TIMINGS,
    );
    expect(actions.find((a) => 'path' in a && a.path === '/api/v1/nodes/w1/status')).toMatchObject({
      patch: {
        status: {
          conditions: expect.arrayContaining([
            expect.objectContaining({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }),
          ]),
        },
      },
    });
    expect(actions.find((a) => 'path' in a && a.path === '/api/v1/nodes/w1')).toMatchObject({
      patch: {
        spec: {
          taints: [
            { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
            expect.objectContaining({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }),
          ],
        },
      },
    });
    expect(actions.find((a) => 'path' in a && a.path.endsWith('/pods/p/status'))).toMatchObject({
      patch: { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
    });
    const fresh = { ...lease, spec: { renewTime: microTime(w.now - 1000) } };
    expect(nodeLifecycleActions({ ...w, leases: [fresh] }, newMemory(), DEFAULT_TIMINGS)).toEqual([]);
  });
});

describe('pod GC and scheduler', () => {
  it('force-deletes pods bound to a node that is gone', () => {
    const actions = orphanedPodActions(
      world({ nodes: [node('a')], pods: [pod('x', { node: 'gone' }), pod('y', { node: 'a' })] }),
    );
    expect(actions).toEqual([
      expect.objectContaining({ path: '/api/v1/namespaces/default/pods/x', gracePeriodSeconds: 0 }),
    ]);
  });

  it('binds pending pods oldest first and reports the unschedulable ones', () => {
    const nodes = [node('a', { cpu: '1' })];
    const pods = [
      pod('late', { cpu: '600m', created: '2026-01-01T00:00:02Z' }),
      pod('early', { cpu: '600m', created: '2026-01-01T00:00:01Z' }),
    ];
    const actions = schedulerActions(world({ nodes, pods }));
    expect(actions[0]).toMatchObject({ kind: 'bind', name: 'early', node: 'a' });
    expect(actions[1]).toMatchObject({
      kind: 'patch',
      path: '/api/v1/namespaces/default/pods/late/status',
      patch: {
        status: {
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/1 nodes are available: 1 Insufficient cpu.',
            },
          ],
        },
      },
    });
  });
});

describe('node IPAM', () => {
  it('gives nodes without a pod CIDR the first free /24', () => {
    const nodes = [node('a', { podCIDR: '10.244.0.0/24' }), node('b'), node('c')];
    const actions = nodeIpamActions(world({ nodes }), '10.244.0.0/16');
    expect(actions.map((a) => a.kind === 'patch' && [a.path, a.patch])).toEqual([
      ['/api/v1/nodes/b', { spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] } }],
      ['/api/v1/nodes/c', { spec: { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] } }],
    ]);
    expect(nodeIpamActions(world({ nodes }), undefined)).toEqual([]);
  });
});
