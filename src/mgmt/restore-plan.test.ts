import { describe, expect, it } from 'vitest';
import type { Archive, KubeObject } from './model.js';
import { restoreLevels, restoreOwners } from './restore-plan.js';

const obj = (name: string, owners: string[] = []): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: {
    name,
    namespace: 'alpha',
    uid: `uid-${name}`,
    ownerReferences: owners.map((o) => ({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      name: o,
      uid: `uid-${o}`,
    })),
  },
});
const archive = (objects: KubeObject[]) => ({ objects }) as unknown as Archive;

describe('restoreOwners', () => {
  it("names each object's archived owners, not owners outside the backup", () => {
    // md ← ms ← m1, m2; m2 also owned by something the backup does not hold.
    const a = archive([obj('m1', ['ms']), obj('ms', ['md']), obj('md'), obj('m2', ['ms', 'gone', 'ms'])]);
    expect(restoreOwners(a)).toEqual([[1], [2], [], [1]]);
  });

  it('breaks an ownerRef cycle: the waits form no cycle, and each wait points to a lower level', () => {
    const a = archive([obj('a', ['b']), obj('b', ['a']), obj('c', ['a'])]);
    const owners = restoreOwners(a);
    const level = new Map(restoreLevels(a).flatMap((l, d) => l.map((i) => [i, d] as const)));
    for (const [i, os] of owners.entries())
      for (const j of os) expect(level.get(j)!).toBeLessThan(level.get(i)!);
    // Exactly one of the two references of the cycle is waited on.
    expect(owners[0]!.length + owners[1]!.length).toBe(1);
    expect(owners[2]).toEqual([0]);
  });
});
