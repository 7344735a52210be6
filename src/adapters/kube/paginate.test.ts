import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../ports/kube.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type FetchPage, listAll } from './paginate.js';

const pod = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'web' },
});
const expired = () =>
  new KubeApiError({
    status: 410,
    reason: 'Expired',
    message: 'The provided continue parameter is too old to display a consistent list result.',
    path: '/api/v1/pods',
    address: '127.0.0.1:6443',
    continueToken: 'inconsistent',
  });

/** A server holding `names`, serving `limit`-sized pages; `expire(call)` decides which continue calls get 410. */
function server(names: string[], expire: (call: number, token: string) => boolean = () => false) {
  const calls: { token: string | undefined; limit: number | undefined }[] = [];
  const fetch: FetchPage = async (token, limit) => {
    calls.push({ token, limit });
    if (token !== undefined && expire(calls.length, token)) throw expired();
    const start = token === undefined ? 0 : Number(token.slice(1));
    const end = limit === undefined ? names.length : Math.min(names.length, start + limit);
    const items = names.slice(start, end).map(pod);
    return end < names.length ? { items, continueToken: `c${end}` } : { items };
  };
  return { fetch, calls };
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `p${i}`);

describe('listAll', () => {
  it('follows continue tokens across pages with the given limit', async () => {
    const s = server(names(7));
    const r = await listAll(s.fetch, { pageSize: 3 });
    expect(r.items.map((o) => o.metadata.name)).toEqual(names(7));
    expect(s.calls).toEqual([
      { token: undefined, limit: 3 },
      { token: 'c3', limit: 3 },
      { token: 'c6', limit: 3 },
    ]);
    expect(r).toMatchObject({ pages: 3, restarts: 0 });
  });

  it('starts over on 410 Expired and never returns an item twice', async () => {
    const s = server(names(5), (call) => call === 2); // the first continue expires once
    const seen: number[] = [];
    const r = await listAll(s.fetch, { pageSize: 2, onPage: (n) => seen.push(n) });
    expect(r.items.map((o) => o.metadata.name)).toEqual(names(5));
    expect(r.restarts).toBe(1);
    expect(s.calls.map((c) => c.token)).toEqual([undefined, 'c2', undefined, 'c2', 'c4']);
    // progress counts restart from zero with the list
    expect(seen).toEqual([2, 2, 4, 5]);
  });

  it('after repeated expiry asks for the whole list in one response', async () => {
    const s = server(names(5), () => true); // every continue expires
    const r = await listAll(s.fetch, { pageSize: 2, maxRestarts: 1 });
    expect(r.items).toHaveLength(5);
    expect(r.restarts).toBe(2);
    expect(s.calls.at(-1)).toEqual({ token: undefined, limit: undefined });
  });

  it('does not treat a 410 on the first page as an expired continue', async () => {
    const fetch: FetchPage = async () => {
      throw expired();
    };
    await expect(listAll(fetch)).rejects.toBeInstanceOf(KubeApiError);
  });

  it('applies map per item and drops undefined', async () => {
    const s = server(names(6));
    const r = await listAll(s.fetch, {
      pageSize: 4,
      map: (o) => (Number(o.metadata.name.slice(1)) % 2 === 0 ? { ...o, kind: 'Mapped' } : undefined),
    });
    expect(r.items.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Mapped/p0',
      'Mapped/p2',
      'Mapped/p4',
    ]);
  });

  it('refuses a server that hands back the same continue token', async () => {
    const fetch: FetchPage = async () => ({ items: [pod('x')], continueToken: 'same' });
    await expect(listAll(fetch)).rejects.toThrow(/same continue token/);
  });

  it('passes other errors through', async () => {
    const fetch: FetchPage = async (token) => {
      if (token)
        throw new KubeApiError({
          status: 500,
          message: 'etcdserver: leader changed',
          path: '/x',
          address: 'a:1',
        });
      return { items: [pod('a')], continueToken: 't' };
    };
    await expect(listAll(fetch)).rejects.toThrow(/HTTP 500/);
  });
});
