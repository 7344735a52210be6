import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store.js';
import type { KObj } from './object.js';
import { CompactedError, type StoreEvent, StoreUnavailableError } from './store.js';

const obj = (name: string, v = 1): KObj => ({ metadata: { name }, data: { v } });

describe('MemoryStore', () => {
  it('creates once, updates and deletes only at the expected mod revision', async () => {
    const s = new MemoryStore();
    const c = await s.create('/r/a', obj('a'));
    expect(c.ok).toBe(true);
    expect(await s.create('/r/a', obj('a'))).toEqual({ ok: false, reason: 'exists' });
    const rev = c.ok ? c.revision : 0;
    expect(await s.update('/r/a', obj('a', 2), rev - 1)).toEqual({ ok: false, reason: 'conflict' });
    const u = await s.update('/r/a', obj('a', 2), rev);
    expect(u).toEqual({ ok: true, revision: rev + 1 });
    const got = await s.get('/r/a');
    expect(got).toMatchObject({ modRevision: rev + 1, createRevision: rev, value: { data: { v: 2 } } });
    expect(await s.delete('/r/a', rev)).toEqual({ ok: false, reason: 'conflict' });
    expect((await s.delete('/r/a', rev + 1)).ok).toBe(true);
    expect(await s.get('/r/a')).toBeUndefined();
    expect(await s.update('/r/a', obj('a'), rev + 1)).toEqual({ ok: false, reason: 'notFound' });
  });

  it('lists in key order at a past revision until it is compacted', async () => {
    const s = new MemoryStore();
    await s.create('/r/b', obj('b'));
    await s.create('/r/a', obj('a'));
    await s.create('/other/x', obj('x'));
    const before = await s.list('/r/');
    expect(before.items.map((i) => i.key)).toEqual(['/r/a', '/r/b']);
    const a = before.items[0]!;
    await s.delete('/r/a', a.modRevision);
    await s.create('/r/c', obj('c'));
    expect((await s.list('/r/')).items.map((i) => i.key)).toEqual(['/r/b', '/r/c']);
    const past = await s.list('/r/', { revision: before.revision, startAfter: '/r/a' });
    expect(past.items.map((i) => i.key)).toEqual(['/r/b']);
    await s.compact(before.revision + 1);
    await expect(s.list('/r/', { revision: before.revision })).rejects.toBeInstanceOf(CompactedError);
    expect((await s.list('/r/')).items.map((i) => i.key)).toEqual(['/r/b', '/r/c']);
  });

  it('cuts a list at the limit and counts the live keys it left out, without a prefix neighbour', async () => {
    const s = new MemoryStore();
    for (const k of ['/r/d', '/r/b', '/r/a', '/r/c', '/r/e', '/r0/x', '/q/z']) await s.create(k, obj(k));
    const rev = await s.revision();
    const d = (await s.get('/r/d'))!;
    await s.delete('/r/d', d.modRevision);
    await s.create('/r/bb', obj('bb'));
    const first = await s.list('/r/', { limit: 2 });
    expect(first.items.map((i) => i.key)).toEqual(['/r/a', '/r/b']);
    expect(first.remaining).toBe(3); // bb, c, e: the deleted d is not counted
    const next = await s.list('/r/', { startAfter: '/r/b', limit: 2, revision: rev });
    expect(next.items.map((i) => i.key)).toEqual(['/r/c', '/r/d']); // d was live at rev; bb was not
    expect(next.remaining).toBe(1);
    const rest = await s.list('/r/', { startAfter: '/r/c' });
    expect(rest.items.map((i) => i.key)).toEqual(['/r/e']);
    expect(rest.remaining).toBeUndefined();
    expect((await s.list('/r/', { startAfter: '/a' })).items).toHaveLength(5);
  });

  it('replays history after a revision, then streams live events', async () => {
    const s = new MemoryStore();
    const c = await s.create('/r/a', obj('a'));
    const start = c.ok ? c.revision : 0;
    await s.update('/r/a', obj('a', 2), start);
    const events: StoreEvent[] = [];
    const w = await s.watch('/r/', start, { onEvent: (e) => events.push(e), onError: () => undefined });
    const cur = (await s.get('/r/a'))!;
    await s.delete('/r/a', cur.modRevision);
    await s.create('/x/ignored', obj('x'));
    await w.cancel();
    await s.create('/r/late', obj('late'));
    expect(events.map((e) => [e.type, e.key, e.revision])).toEqual([
      ['put', '/r/a', start + 1],
      ['delete', '/r/a', start + 2],
    ]);
    expect(events[1]).toMatchObject({ prev: { data: { v: 2 } } });
    await s.compact(start + 2);
    await expect(
      s.watch('/r/', start, { onEvent: () => undefined, onError: () => undefined }),
    ).rejects.toBeInstanceOf(CompactedError);
  });

  it('fails every call and ends watches while unavailable', async () => {
    const s = new MemoryStore();
    let ended: Error | undefined;
    await s.watch('/r/', 0, { onEvent: () => undefined, onError: (e) => (ended = e) });
    s.setUnavailable('member removed');
    expect(ended).toBeInstanceOf(StoreUnavailableError);
    await expect(s.revision()).rejects.toThrow('member removed');
    s.setUnavailable(undefined);
    expect(await s.revision()).toBeGreaterThan(0);
  });
});
