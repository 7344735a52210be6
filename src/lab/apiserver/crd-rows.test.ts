/**
 * The registry's rows of a CustomResourceDefinition: a stored CRD is parsed once per version
 * (not per request), and a changed or deleted CRD is seen by the next request. No server: the
 * Registry over a MemoryStore whose reads count how often a CRD's stored value is decoded.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from './memory-store.js';
import type { KObj } from './object.js';
import { Registry } from './registry.js';
import { CRD_GROUP, def } from './resources.js';
import type { StoredObject } from './store.js';

const CRDS = def(CRD_GROUP, 'customresourcedefinitions');

/** A MemoryStore that counts decodes of the values it hands out under /registry/…customresourcedefinitions. */
class CountingStore extends MemoryStore {
  decodes = 0;
  #wrap(s: StoredObject): StoredObject {
    if (!s.key.includes('customresourcedefinitions')) return s;
    const store = this;
    let value: KObj | undefined;
    return {
      key: s.key,
      modRevision: s.modRevision,
      createRevision: s.createRevision,
      get value(): KObj {
        if (value === undefined) {
          store.decodes++;
          value = s.value;
        }
        return value;
      },
      set value(v: KObj) {
        value = v;
      },
    };
  }
  override async get(key: string): Promise<StoredObject | undefined> {
    const s = await super.get(key);
    return s && this.#wrap(s);
  }
  override async list(...args: Parameters<MemoryStore['list']>) {
    const r = await super.list(...args);
    return { ...r, items: r.items.map((s) => this.#wrap(s)) };
  }
}

const crd = (versions: string[]) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.cluster.x-k8s.io' },
  spec: {
    group: 'example.cluster.x-k8s.io',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: versions.map((name, i) => ({
      name,
      served: true,
      storage: i === versions.length - 1,
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      subresources: { status: {} },
    })),
  },
});

describe('Registry CRD rows', () => {
  it('decodes a stored CRD once however many requests resolve it, and sees updates and deletion', async () => {
    const store = new CountingStore();
    const reg = new Registry(store);
    await reg.create(CRDS, undefined, crd(['v1alpha1']));
    store.decodes = 0;
    for (let i = 0; i < 20; i++) {
      const d = await reg.resolve('example.cluster.x-k8s.io', 'v1alpha1', 'widgets');
      expect(d?.kind).toBe('Widget');
      expect(d?.subresources).toEqual(['status']);
    }
    await reg.allDefs();
    expect(store.decodes).toBeLessThanOrEqual(1);

    // A new version of the CRD: the next request serves it.
    await reg.update(
      CRDS,
      undefined,
      'widgets.example.cluster.x-k8s.io',
      crd(['v1alpha1', 'v1beta1']),
      'main',
    );
    expect((await reg.resolve('example.cluster.x-k8s.io', 'v1beta1', 'widgets'))?.version).toBe('v1beta1');
    expect((await reg.allDefs()).filter((d) => d.kind === 'Widget').map((d) => d.version)).toEqual([
      'v1alpha1',
      'v1beta1',
    ]);

    await reg.delete(CRDS, undefined, 'widgets.example.cluster.x-k8s.io', {});
    expect(await reg.resolve('example.cluster.x-k8s.io', 'v1alpha1', 'widgets')).toBeUndefined();
    expect((await reg.allDefs()).some((d) => d.kind === 'Widget')).toBe(false);
  });
});
