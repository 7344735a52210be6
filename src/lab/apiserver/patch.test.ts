import { describe, expect, it } from 'vitest';
import { applyPatch, jsonPatch, mergePatch, PatchError, strategicMerge } from './patch.js';

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, deletes with null and replaces lists', () => {
    const doc = { a: { b: 1, c: 2 }, l: [1, 2], keep: true };
    expect(mergePatch(doc, { a: { b: null, d: 3 }, l: [3] })).toEqual({
      a: { c: 2, d: 3 },
      l: [3],
      keep: true,
    });
    expect(doc.a.b).toBe(1); // the input is not changed
  });

  it('replaces the whole document with a non-object patch', () => {
    expect(mergePatch({ a: 1 }, [1])).toEqual([1]);
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { 'a/b': 'x' } }, spec: { list: [1, 2, 3] } };

  it('applies add, remove, replace, move, copy and test in order', () => {
    const out = jsonPatch(doc, [
      { op: 'test', path: '/metadata/labels/a~1b', value: 'x' },
      { op: 'add', path: '/spec/list/1', value: 9 },
      { op: 'add', path: '/spec/list/-', value: 4 },
      { op: 'remove', path: '/spec/list/0' },
      { op: 'replace', path: '/metadata/labels/a~1b', value: 'y' },
      { op: 'copy', from: '/spec/list', path: '/spec/copy' },
      { op: 'move', from: '/metadata/labels', path: '/spec/labels' },
    ]);
    expect(out).toEqual({
      metadata: {},
      spec: { list: [9, 2, 3, 4], copy: [9, 2, 3, 4], labels: { 'a/b': 'y' } },
    });
  });

  it('fails a test op or a missing path as "failed", a bad document as "malformed"', () => {
    const failed = (ops: unknown) => {
      try {
        jsonPatch(doc, ops);
      } catch (err) {
        return (err as PatchError).kind;
      }
      return 'applied';
    };
    expect(failed([{ op: 'test', path: '/spec/list/0', value: 2 }])).toBe('failed');
    expect(failed([{ op: 'replace', path: '/spec/nope', value: 1 }])).toBe('failed');
    expect(failed([{ op: 'remove', path: '/spec/list/7' }])).toBe('failed');
    expect(failed({ op: 'add' })).toBe('malformed');
    expect(failed([{ op: 'frobnicate', path: '/a' }])).toBe('malformed');
    expect(failed([{ op: 'add', path: '/a' }])).toBe('malformed');
  });
});

describe('strategic merge patch (subset)', () => {
  const pod = {
    metadata: { finalizers: ['a'], labels: { x: '1' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'app:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          ports: [{ containerPort: 80 }],
        },
        { name: 'side', image: 'side:1' },
      ],
      tolerations: [{ key: 't1' }],
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PodScheduled', status: 'True' },
      ],
    },
  };

  it('merges containers and env by name, conditions by type, and replaces unkeyed lists', () => {
    const out = strategicMerge(pod, {
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app:2',
            env: [
              { name: 'B', value: '3' },
              { name: 'C', value: '4' },
            ],
          },
        ],
        tolerations: [{ key: 't2' }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    }) as typeof pod;
    expect(out.spec.containers.map((c) => [c.name, c.image])).toEqual([
      ['app', 'app:2'],
      ['side', 'side:1'],
    ]);
    expect(out.spec.containers[0]!.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
      { name: 'C', value: '4' },
    ]);
    expect(out.spec.containers[0]!.ports).toEqual([{ containerPort: 80 }]);
    expect(out.spec.tolerations).toEqual([{ key: 't2' }]);
    expect(out.status.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'PodScheduled', status: 'True' },
    ]);
  });

  it('honours $patch delete and replace, finalizers as a set and $deleteFromPrimitiveList', () => {
    const out = strategicMerge(pod, {
      metadata: { finalizers: ['b', 'a'], labels: { $patch: 'replace', y: '2' } },
      spec: { containers: [{ name: 'side', $patch: 'delete' }] },
    }) as typeof pod;
    expect(out.metadata.finalizers).toEqual(['a', 'b']);
    expect(out.metadata.labels).toEqual({ y: '2' });
    expect(out.spec.containers.map((c) => c.name)).toEqual(['app']);
    const removed = strategicMerge(out, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] },
    }) as typeof pod;
    expect(removed.metadata.finalizers).toEqual(['b']);
  });

  it('requires the merge key in every keyed list item', () => {
    expect(() => applyPatch('strategic', pod, { spec: { containers: [{ image: 'x' }] } })).toThrow(
      /merge key: name/,
    );
    expect(() => applyPatch('strategic', pod, [1])).toThrow(PatchError);
  });
});
