import { describe, expect, it } from 'vitest';
import { OBJECT_SHAPES, objectShapeProblem } from './object-shapes.js';
import { KEPT_KINDS } from './resources.js';

const node = (extra: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'cp-1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
  ...extra,
});

describe('objectShapeProblem', () => {
  it('accepts the fields ferry reads when they have their API types', () => {
    expect(
      objectShapeProblem(
        node({
          spec: {
            podCIDRs: ['10.244.0.0/24'],
            taints: [{ key: 'k', effect: 'NoSchedule' }],
            unschedulable: true,
          },
          status: {
            addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
            nodeInfo: { kubeletVersion: 'v1.32.4' },
          },
        }),
      ),
    ).toBeUndefined();
  });

  it('names the first field of the wrong type, with its path', () => {
    expect(objectShapeProblem(node({ status: { addresses: '10.0.0.1' } }))).toEqual({
      path: ['status', 'addresses'],
      expected: 'a list',
      found: '10.0.0.1',
    });
    expect(
      objectShapeProblem(node({ status: { addresses: [{ type: 'InternalIP', address: 10 }] } })),
    ).toEqual({
      path: ['status', 'addresses', 0, 'address'],
      expected: 'a string',
      found: 10,
    });
    expect(objectShapeProblem(node({ metadata: { name: 'n', labels: 'x' } }))?.path).toEqual([
      'metadata',
      'labels',
    ]);
    expect(objectShapeProblem(node({ metadata: { name: 'n', labels: { a: 1 } } }))?.path).toEqual([
      'metadata',
      'labels',
      'a',
    ]);
  });

  it('a null field is unset, as the API server stores it: dropped, not refused; a null list item is refused', () => {
    const n = node({ spec: { taints: null }, status: { addresses: [null] } });
    expect(objectShapeProblem(n)).toEqual({
      path: ['status', 'addresses', 0],
      expected: 'a mapping',
      found: null,
    });
    const m = node({ spec: { taints: null, podCIDR: '10.244.0.0/24' } });
    expect(objectShapeProblem(m)).toBeUndefined();
    expect((m as { spec?: unknown }).spec).toEqual({ podCIDR: '10.244.0.0/24' });
  });

  it('checks pod templates of workloads and int-or-string fields of PDBs', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { template: { spec: { containers: [{ name: 'c', command: 'run' }] } } },
    };
    expect(objectShapeProblem(deployment)?.path).toEqual([
      'spec',
      'template',
      'spec',
      'containers',
      0,
      'command',
    ]);
    const pdb = (minAvailable: unknown) => ({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'p', namespace: 'shop' },
      spec: { minAvailable },
    });
    expect(objectShapeProblem(pdb(1))).toBeUndefined();
    expect(objectShapeProblem(pdb('50%'))).toBeUndefined();
    expect(objectShapeProblem(pdb([1]))).toMatchObject({ expected: 'a whole number or a string' });
    expect(objectShapeProblem(pdb(1.5))).toMatchObject({ expected: 'a whole number or a string' });
  });

  it('bootstrap-token Secret data is base64', () => {
    const secret = (data: Record<string, unknown>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'bootstrap.kubernetes.io/token',
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
      data,
    });
    expect(objectShapeProblem(secret({ 'token-id': 'YWJjZGVm' }))).toBeUndefined();
    expect(objectShapeProblem(secret({ 'token-id': 'abc!def' }))).toMatchObject({
      path: ['data', 'token-id'],
      expected: 'base64',
    });
  });

  it('checks only metadata of kinds it does not describe, and describes every kind ferry keeps', () => {
    const other = { apiVersion: 'x/v1', kind: 'Widget', metadata: { name: 'w', labels: [] }, spec: 5 };
    expect(objectShapeProblem(other)?.path).toEqual(['metadata', 'labels']);
    for (const kind of KEPT_KINDS) expect(OBJECT_SHAPES[kind], kind).toBeDefined();
  });
});
