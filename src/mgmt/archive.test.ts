import { describe, expect, it } from 'vitest';
import { buildArchive, checkArchive, packArchive, unpackArchive } from './archive.js';
import type { KubeObject } from './model.js';

const o = (kind: string, name: string, spec: unknown = { a: 1 }): KubeObject => ({
  apiVersion: kind === 'Secret' ? 'v1' : 'cluster.x-k8s.io/v1beta2',
  kind,
  metadata: {
    name,
    namespace: 'ns',
    uid: `u-${name}`,
    resourceVersion: '7',
    managedFields: [{ manager: 'x' }],
  },
  spec,
});

const archive = () =>
  buildArchive({
    selected: [
      { object: o('Cluster', 'c'), reason: 'root' },
      { object: o('Secret', 'c-ca'), reason: 'soft-owned-secret' },
    ],
    kinds: [],
    providers: [],
    leftBehind: [],
    server: '127.0.0.1:6443',
    now: new Date('2026-12-01T00:00:00Z'),
  });

describe('archive', () => {
  it('drops write bookkeeping, counts kinds, and round-trips through pack/unpack', () => {
    const a = archive();
    expect(a.objects[0]!.metadata).toEqual({ name: 'c', namespace: 'ns', uid: 'u-c' });
    expect(a.manifest.counts).toEqual({ Cluster: 1, Secret: 1 });
    expect(a.manifest.namespaces).toEqual(['ns']);
    expect(unpackArchive(packArchive(a), 'here')).toEqual(a);
  });

  it('finds an object changed after the manifest was written, one missing, and wrong counts', () => {
    const a = archive();
    a.objects[1]!.spec = { a: 2 };
    expect(checkArchive(a)).toEqual(['Secret ns/c-ca: sha256 differs from the manifest']);
    const b = archive();
    b.objects.pop();
    expect(checkArchive(b)).toEqual([
      'the manifest lists 2 objects, the archive holds 1',
      'object counts {"Cluster":1} differ from the manifest\'s {"Cluster":1,"Secret":1}',
    ]);
    expect(() => unpackArchive(packArchive(a), 's3://b/p version v1')).toThrow(
      /backup s3:\/\/b\/p version v1 is corrupted: 1 object/,
    );
  });

  it('refuses bytes that are not an archive', () => {
    expect(() => unpackArchive(new Uint8Array([1, 2, 3]), 'x')).toThrow(/not a ferry archive/);
  });
});
