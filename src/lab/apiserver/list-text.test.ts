import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store.js';
import type { KObj } from './object.js';
import { Registry } from './registry.js';
import { def } from './resources.js';
import type { ListOptions, ListResult, StoredObject } from './store.js';

const PODS = def('', 'pods');
const PDBS = def('policy', 'poddisruptionbudgets');

/** A MemoryStore that counts how often a listed object's value is read (i.e. parsed). */
class CountingStore extends MemoryStore {
  reads = 0;
  override async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    const res = await super.list(prefix, opts);
    const items = res.items.map((s): StoredObject => {
      const counter = this;
      return {
        key: s.key,
        modRevision: s.modRevision,
        createRevision: s.createRevision,
        get value() {
          counter.reads++;
          return s.value;
        },
      };
    });
    return { ...res, items };
  }
}

async function seeded(n: number): Promise<{ store: CountingStore; reg: Registry }> {
  const store = new CountingStore();
  const reg = new Registry(store);
  await reg.ensureNamespaces(['default']);
  for (let i = 0; i < n; i++) {
    await reg.create(PODS, 'default', {
      metadata: { name: `p-${i}` },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
  }
  return { store, reg };
}

describe('Registry.listText', () => {
  it('answers what list() answers, page by page, as JSON text', async () => {
    const { reg } = await seeded(5);
    const q = { limit: 2 };
    const text = JSON.parse(await reg.listText(PODS, 'default', q));
    expect(text).toEqual(JSON.parse(JSON.stringify(await reg.list(PODS, 'default', q))));
    expect(text.items.map((i: KObj) => i.metadata.name)).toEqual(['p-0', 'p-1']);
    expect(text.items[0].kind).toBeUndefined();
    expect(text.metadata.remainingItemCount).toBe(3);
    const next = JSON.parse(
      await reg.listText(PODS, 'default', { limit: 2, continue: text.metadata.continue }),
    );
    expect(next.items.map((i: KObj) => i.metadata.name)).toEqual(['p-2', 'p-3']);
  });

  it('parses an unchanged object once however often it is listed, and serves a new version when it changes', async () => {
    const { store, reg } = await seeded(3);
    await reg.listText(PODS, undefined, {});
    const first = store.reads;
    expect(first).toBeGreaterThan(0);
    await reg.listText(PODS, undefined, {});
    await reg.listText(PODS, undefined, { limit: 2 });
    expect(store.reads).toBe(first);

    await reg.mutate(PODS, 'default', 'p-1', 'main', (cur) => ({
      ...cur,
      metadata: { ...cur.metadata, labels: { changed: 'yes' } },
    }));
    const after = JSON.parse(await reg.listText(PODS, undefined, {}));
    const p1 = after.items.find((i: KObj) => i.metadata.name === 'p-1');
    expect(p1.metadata.labels).toEqual({ changed: 'yes' });
    expect(p1.metadata.resourceVersion).toBe(
      (await reg.get(PODS, 'default', 'p-1')).metadata.resourceVersion,
    );
  });

  it('computes a paged PDB list from one read of the namespace while nothing changes, and sees a change', async () => {
    const { store, reg } = await seeded(3);
    for (const name of ['a', 'b'])
      await reg.create(PDBS, 'default', { metadata: { name }, spec: { selector: {}, minAvailable: 1 } });
    for (let i = 0; i < 3; i++) {
      await reg.mutate(PODS, 'default', `p-${i}`, 'status', (cur) => ({
        ...cur,
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      }));
    }
    const page1 = JSON.parse(await reg.listText(PDBS, 'default', { limit: 1 }));
    const reads = store.reads;
    const page2 = JSON.parse(
      await reg.listText(PDBS, 'default', { limit: 1, continue: page1.metadata.continue }),
    );
    expect(store.reads - reads).toBe(1); // the PDB itself, not the pods again
    expect([page1.items[0].status.currentHealthy, page2.items[0].status.currentHealthy]).toEqual([3, 3]);
    await reg.mutate(PODS, 'default', 'p-0', 'status', (cur) => ({ ...cur, status: { conditions: [] } }));
    const after = JSON.parse(await reg.listText(PDBS, 'default', {}));
    expect(after.items.map((p: KObj) => (p.status as { currentHealthy: number }).currentHealthy)).toEqual([
      2, 2,
    ]);
  });
});
