import { describe, expect, it } from 'vitest';
import type { Archive, KubeObject } from './model.js';
import { createBody, ownerUids, restoreLevels, restoreOwners, unpausePatch } from './restore-plan.js';

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

describe('restoreLevels', () => {
  it('puts each object one level below its deepest archived owner, in archive order within a level', () => {
    // md ← ms ← m1; m2 is owned by ms and by md; x has no owner; y only one outside the backup.
    const a = archive([
      obj('m1', ['ms']),
      obj('x'),
      obj('ms', ['md']),
      obj('md'),
      obj('m2', ['md', 'ms']),
      obj('y', ['gone']),
    ]);
    expect(restoreLevels(a)).toEqual([[1, 3, 5], [2], [0, 4]]);
  });

  it('does not index an object without a uid: nothing waits on it', () => {
    const bare = { ...obj('ms'), metadata: { name: 'ms', namespace: 'alpha' } } as KubeObject;
    const a = archive([obj('m1', ['ms']), bare]);
    expect(restoreLevels(a)).toEqual([[0, 1]]);
    expect(restoreOwners(a)).toEqual([[], []]);
  });

  it('an object that owns itself waits on nothing (it would wait for ever)', () => {
    const a = archive([obj('self', ['self']), obj('m', ['self'])]);
    expect(restoreOwners(a)).toEqual([[], [0]]);
  });

  it('an owner reference without a uid matches no uid-less object', () => {
    const bare = { ...obj('ms'), metadata: { name: 'ms', namespace: 'alpha' } } as KubeObject;
    const broken = obj('m1');
    broken.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Machine', name: 'ms' } as never];
    expect(restoreOwners(archive([bare, broken]))).toEqual([[], []]);
    expect(restoreLevels(archive([bare, broken]))).toEqual([[0, 1]]);
  });

  it('holds no empty level and no level for an empty archive', () => {
    expect(restoreLevels(archive([]))).toEqual([]);
    expect(restoreLevels(archive([obj('a')]))).toEqual([[0]]);
  });
});

describe('ownerUids', () => {
  it('maps the waited-on owners archived UIDs to the new ones, skipping owners not created yet', () => {
    const a = archive([
      obj('md'),
      obj('ms', ['md']),
      obj('other'),
      { ...obj('nouid'), metadata: { name: 'nouid' } } as KubeObject,
    ]);
    const uids = new Map([
      ['uid-md', 'new-md'],
      ['uid-other', 'new-other'],
    ]);
    expect([...ownerUids(a, [0], uids)]).toEqual([['uid-md', 'new-md']]);
    // ms has no new UID yet; nouid has no archived UID at all; other is not among the owners.
    expect([...ownerUids(a, [0, 1, 3], uids)]).toEqual([['uid-md', 'new-md']]);
    expect(ownerUids(a, [], uids).size).toBe(0);
  });
});

describe('createBody', () => {
  const archived = (kind: string, extra: Partial<KubeObject> = {}): KubeObject =>
    ({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind,
      metadata: {
        name: 'prod',
        namespace: 'alpha',
        uid: 'uid-old',
        resourceVersion: '42',
        creationTimestamp: '2026-12-01T00:00:00Z',
        generation: 3,
        managedFields: [{ manager: 'x' }],
        labels: { app: 'x' },
        annotations: { keep: 'me' },
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Cluster', name: 'owner', uid: 'uid-owner', controller: true },
          { apiVersion: 'v1', kind: 'Thing', name: 'gone', uid: 'uid-gone' },
        ],
      },
      spec: { paused: false, replicas: 2 },
      status: { ready: true },
      ...extra,
    }) as KubeObject;

  it('drops what the server owns, rewrites owner UIDs and reports the owners it cannot', () => {
    const { body, droppedOwners } = createBody(
      archived('Machine'),
      new Map([['uid-owner', 'uid-new']]),
      false,
    );
    expect(body.metadata).toEqual({
      name: 'prod',
      namespace: 'alpha',
      labels: { app: 'x' },
      annotations: { keep: 'me' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Cluster', name: 'owner', uid: 'uid-new', controller: true },
      ],
    });
    expect(droppedOwners).toEqual(['Thing gone']);
    expect(body.spec).toEqual({ paused: false, replicas: 2 });
    // Without a status subresource the status goes in the create.
    expect(body.status).toEqual({ ready: true });
  });

  it('leaves no empty ownerReferences when no owner is known, and keeps the archived object as it was', () => {
    const o = archived('Machine');
    const { body, droppedOwners } = createBody(o, new Map(), true);
    expect('ownerReferences' in body.metadata).toBe(false);
    expect(droppedOwners).toEqual(['Cluster owner', 'Thing gone']);
    expect(body.status).toBeUndefined();
    expect(o.metadata.uid).toBe('uid-old');
    expect(o.metadata.ownerReferences).toHaveLength(2);
    expect(o.status).toEqual({ ready: true });
  });

  it('an object without owners is created without any', () => {
    const o = archived('Machine');
    delete (o.metadata as { ownerReferences?: unknown }).ownerReferences;
    const { body, droppedOwners } = createBody(o, new Map(), false);
    expect('ownerReferences' in body.metadata).toBe(false);
    expect(droppedOwners).toEqual([]);
  });

  it('creates a Cluster paused through spec.paused, keeping the rest of its spec', () => {
    const { body } = createBody(archived('Cluster'), new Map(), true);
    expect(body.spec).toEqual({ paused: true, replicas: 2 });
    expect(body.metadata.annotations).toEqual({ keep: 'me' });
  });

  it('creates a ClusterClass paused through the annotation, keeping its other annotations', () => {
    const { body } = createBody(archived('ClusterClass'), new Map(), true);
    expect(body.metadata.annotations).toEqual({ keep: 'me', 'cluster.x-k8s.io/paused': 'true' });
    expect(body.spec).toEqual({ paused: false, replicas: 2 });
  });

  it('pauses nothing else', () => {
    const { body } = createBody(archived('TalosControlPlane'), new Map(), true);
    expect(body.spec).toEqual({ paused: false, replicas: 2 });
    expect(body.metadata.annotations).toEqual({ keep: 'me' });
  });
});

describe('unpausePatch', () => {
  const o = (kind: string, spec?: Record<string, unknown>, annotations?: Record<string, string>) =>
    ({
      apiVersion: 'x/v1',
      kind,
      metadata: { name: 'n', ...(annotations && { annotations }) },
      ...(spec && { spec }),
    }) as KubeObject;

  it('gives a Cluster back its archived spec.paused, or removes it', () => {
    expect(unpausePatch(o('Cluster', { paused: true }))).toEqual({ spec: { paused: true } });
    expect(unpausePatch(o('Cluster', { paused: false }))).toEqual({ spec: { paused: false } });
    expect(unpausePatch(o('Cluster', {}))).toEqual({ spec: { paused: null } });
    expect(unpausePatch(o('Cluster'))).toEqual({ spec: { paused: null } });
  });

  it('gives a ClusterClass back its archived paused annotation, or removes it', () => {
    expect(unpausePatch(o('ClusterClass', undefined, { 'cluster.x-k8s.io/paused': 'true' }))).toEqual({
      metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } },
    });
    expect(unpausePatch(o('ClusterClass'))).toEqual({
      metadata: { annotations: { 'cluster.x-k8s.io/paused': null } },
    });
  });

  it('has nothing to undo for any other kind', () => {
    expect(unpausePatch(o('Machine', { paused: true }))).toBeUndefined();
  });
});
