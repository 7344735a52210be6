import { describe, expect, it } from 'vitest';
import { checkNode, podRequests, schedule, tolerates } from './schedule.js';
import { node, pod } from './testing.js';

describe('podRequests', () => {
  it('sums containers and takes the larger init container', () => {
    const p = pod('p', {
      spec: {
        containers: [
          { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
          { name: 'b', resources: { requests: { cpu: '150m' } } },
        ],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '500m', memory: '1Mi' } } }],
      },
    });
    expect(podRequests(p)).toEqual({ cpuMillis: 500, memoryBytes: 64 * 2 ** 20 });
  });
});

describe('tolerations', () => {
  it('matches key, value and effect as the API does', () => {
    const taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
    expect(tolerates({ operator: 'Exists' }, taint)).toBe(true);
    expect(
      tolerates({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }, taint),
    ).toBe(false);
    expect(
      tolerates(
        { key: 'dedicated', operator: 'Equal', value: 'db' },
        { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
      ),
    ).toBe(true);
    expect(
      tolerates(
        { key: 'dedicated', operator: 'Equal', value: 'web' },
        { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
      ),
    ).toBe(false);
  });
});

describe('checkNode', () => {
  const small = node('n1', { cpu: '1', memory: '1Gi', pods: '3' });

  it('refuses a pod that does not fit the remaining CPU or memory', () => {
    const running = [pod('a', { node: 'n1', cpu: '700m' })];
    expect(checkNode(pod('b', { cpu: '400m' }), { node: small, pods: running })).toEqual({
      fits: false,
      reason: 'Insufficient cpu',
    });
    expect(checkNode(pod('b', { cpu: '300m' }), { node: small, pods: running })).toEqual({ fits: true });
    expect(checkNode(pod('b', { memory: '2Gi' }), { node: small, pods: [] })).toEqual({
      fits: false,
      reason: 'Insufficient memory',
    });
  });

  it('counts pods against allocatable pods', () => {
    const three = [pod('a'), pod('b'), pod('c')];
    expect(checkNode(pod('d'), { node: small, pods: three })).toEqual({
      fits: false,
      reason: 'Too many pods',
    });
  });

  it('honours taints, cordons and node selectors', () => {
    const tainted = node('n2', { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    expect(checkNode(pod('p'), { node: tainted, pods: [] })).toMatchObject({
      fits: false,
      reason: expect.stringContaining('untolerated taint {node.kubernetes.io/not-ready: }'),
    });
    expect(
      checkNode(pod('p', { spec: { tolerations: [{ operator: 'Exists' }] } }), { node: tainted, pods: [] })
        .fits,
    ).toBe(true);
    const soft = node('n3', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] });
    expect(checkNode(pod('p'), { node: soft, pods: [] }).fits).toBe(true);
    const cordoned = node('n4', { unschedulable: true });
    expect(checkNode(pod('p'), { node: cordoned, pods: [] })).toEqual({
      fits: false,
      reason: 'node(s) were unschedulable',
    });
    const pool = pod('p', { spec: { nodeSelector: { 'lab.example/pool': 'data' } } });
    expect(
      checkNode(pool, { node: node('w', { labels: { 'lab.example/pool': 'general' } }), pods: [] }).fits,
    ).toBe(false);
    expect(
      checkNode(pool, { node: node('w', { labels: { 'lab.example/pool': 'data' } }), pods: [] }).fits,
    ).toBe(true);
  });

  it('honours required node affinity, matchFields included', () => {
    const aff = (terms: unknown[]) =>
      pod('p', {
        spec: {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
          },
        },
      });
    const byName = aff([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['w2'] }] }]);
    expect(checkNode(byName, { node: node('w1'), pods: [] }).fits).toBe(false);
    expect(checkNode(byName, { node: node('w2'), pods: [] }).fits).toBe(true);
    const notCp = aff([
      { matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }] },
    ]);
    expect(
      checkNode(notCp, {
        node: node('cp', { labels: { 'node-role.kubernetes.io/control-plane': '' } }),
        pods: [],
      }).fits,
    ).toBe(false);
  });
});

describe('schedule', () => {
  it('spreads the pods of one controller and explains when nothing fits', () => {
    const rs = { metadata: { name: 'web-abc', uid: 'rs-uid' } };
    const nodes = [node('a'), node('b')];
    const first = pod('web-1', { owner: rs, cpu: '100m' });
    const placed = schedule(pod('web-2', { owner: rs, cpu: '100m' }), [
      { node: nodes[0]!, pods: [{ ...first, spec: { ...first.spec, nodeName: 'a' } }] },
      { node: nodes[1]!, pods: [] },
    ]);
    expect(placed).toEqual({ node: 'b' });
    const none = schedule(pod('big', { cpu: '3' }), [
      { node: nodes[0]!, pods: [] },
      { node: node('c', { unschedulable: true }), pods: [] },
    ]);
    expect(none).toEqual({
      node: undefined,
      message: '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.',
    });
  });

  it('keeps required pod anti-affinity per hostname', () => {
    const anti = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { labelSelector: { matchLabels: { app: 'op' } }, topologyKey: 'kubernetes.io/hostname' },
          ],
        },
      },
    };
    const running = pod('op-1', { node: 'a', labels: { app: 'op' } });
    const views = [
      { node: node('a'), pods: [running] },
      { node: node('b', { cpu: '100m' }), pods: [] },
    ];
    const p = pod('op-2', { labels: { app: 'op' }, cpu: '50m', spec: anti });
    expect(schedule(p, views)).toEqual({ node: 'b' });
    views[1]!.pods.push(pod('op-3', { node: 'b', labels: { app: 'op' } }));
    expect(schedule(p, views)).toMatchObject({
      node: undefined,
      message: expect.stringContaining("2 node(s) didn't match pod anti-affinity rules"),
    });
  });
});
