import { describe, expect, it } from 'vitest';
import type { KObj } from '../lab/apiserver/object.js';
import { floors, pdbMinimum, sampleWorkloads } from './rehearse-workloads.js';

const pdb = (spec: Record<string, unknown>): KObj => ({
  metadata: { name: 'web', namespace: 'shop' },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
});
const deployment: KObj = {
  metadata: { name: 'web', namespace: 'shop' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } } },
  },
};
const pod = (name: string, ready: boolean, terminating = false): KObj => ({
  metadata: {
    name,
    namespace: 'shop',
    labels: { app: 'web' },
    ...(terminating && { deletionTimestamp: '2026-01-01T00:00:00Z' }),
  },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('workload floors', () => {
  it("computes a PDB's minimum as the disruption controller does", () => {
    expect(pdbMinimum(pdb({ minAvailable: 2 }), 3)).toBe(2);
    expect(pdbMinimum(pdb({ minAvailable: '50%' }), 3)).toBe(2);
    expect(pdbMinimum(pdb({ maxUnavailable: 1 }), 3)).toBe(2);
    expect(pdbMinimum(pdb({ maxUnavailable: '50%' }), 3)).toBe(1);
    expect(pdbMinimum(pdb({}), 3)).toBe(0);
  });

  it('keeps the fewest Ready (not terminating) pods seen, and a dip below the PDB is a violation', () => {
    const lists = (pods: KObj[]) => ({
      pods,
      deployments: [deployment],
      statefulsets: [],
      pdbs: [pdb({ maxUnavailable: 1 })],
    });
    const fine = [
      sampleWorkloads(lists([pod('a', true), pod('b', true), pod('c', true)])),
      sampleWorkloads(lists([pod('a', true), pod('b', true), pod('c', true, true)])),
    ];
    expect(floors(fine)).toEqual([
      {
        kind: 'Deployment',
        name: 'shop/web',
        replicas: 3,
        minReady: 2,
        pdb: { name: 'shop/web', minimum: 2 },
        violated: false,
        samples: 2,
      },
    ]);
    const dip = [...fine, sampleWorkloads(lists([pod('a', true), pod('b', false), pod('c', true, true)]))];
    expect(floors(dip)[0]).toMatchObject({ minReady: 1, violated: true, samples: 3 });
  });
});
