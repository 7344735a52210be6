/**
 * Watch through @kubernetes/client-node's Watch on a MemoryStore: initial ADDED burst, live
 * events, resumption from a resourceVersion, selector transitions, 410 after compaction, and the
 * end of a watch (timeoutSeconds, instance down).
 */
import {
  CoreV1Api,
  type KubernetesObject,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LabApiFixture, startLabApi } from './testing.js';

let lab: LabApiFixture;
let core: CoreV1Api;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const open: AbortController[] = [];

beforeAll(async () => {
  lab = await startLabApi();
  core = lab.kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'w' } } });
});
afterEach(() => {
  for (const c of open.splice(0)) c.abort();
});
afterAll(async () => {
  await lab?.stop();
});

type Seen = {
  type: string;
  name: string | undefined;
  rv: string | undefined;
  obj: KubernetesObject & { code?: number; reason?: string };
};

async function watch(path: string, query: Record<string, string | number> = {}) {
  const events: Seen[] = [];
  let ended: unknown = 'open';
  const ctl = await new Watch(lab.kc).watch(
    path,
    query,
    (type, obj: Seen['obj']) =>
      events.push({ type, name: obj.metadata?.name, rv: obj.metadata?.resourceVersion, obj }),
    (err) => {
      ended = err;
    },
  );
  open.push(ctl);
  const until = async (pred: () => boolean, what: string) => {
    const deadline = Date.now() + 5_000;
    while (!pred()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}: ${JSON.stringify(events.map((e) => [e.type, e.name]))}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    events,
    ended: () => ended,
    waitCount: (n: number) => until(() => events.length >= n, `${n} events`),
    waitEnded: () => until(() => ended !== 'open', 'the end of the watch'),
  };
}

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
});

describe('watch', () => {
  it('sends existing pods as ADDED, then ADDED/MODIFIED/DELETED as they change', async () => {
    await core.createNamespacedPod({ namespace: 'w', body: pod('old') });
    const w = await watch('/api/v1/namespaces/w/pods');
    await w.waitCount(1);
    await core.createNamespacedPod({ namespace: 'w', body: pod('new') });
    await core.patchNamespacedPod(
      { namespace: 'w', name: 'new', body: { metadata: { labels: { x: '1' } } } },
      merge,
    );
    await core.deleteNamespacedPod({ namespace: 'w', name: 'new' }); // graceful: MODIFIED
    await core.deleteNamespacedPod({ namespace: 'w', name: 'new', gracePeriodSeconds: 0 });
    await w.waitCount(5);
    expect(w.events.map((e) => [e.type, e.name])).toEqual([
      ['ADDED', 'old'],
      ['ADDED', 'new'],
      ['MODIFIED', 'new'],
      ['MODIFIED', 'new'],
      ['DELETED', 'new'],
    ]);
    expect(w.events[1]!.obj.kind).toBe('Pod');
    const rvs = w.events.slice(1).map((e) => Number(e.rv));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    expect(w.events[3]!.obj.metadata?.deletionTimestamp).toBeDefined();
  });

  it('resumes after a resourceVersion without replaying what came before', async () => {
    const created = await core.createNamespacedPod({ namespace: 'w', body: pod('r1') });
    await core.createNamespacedPod({ namespace: 'w', body: pod('r2') });
    await core.patchNamespacedPod(
      { namespace: 'w', name: 'r1', body: { metadata: { labels: { y: '1' } } } },
      merge,
    );
    const w = await watch('/api/v1/namespaces/w/pods', {
      resourceVersion: created.metadata!.resourceVersion!,
    });
    await w.waitCount(2);
    expect(w.events.map((e) => [e.type, e.name])).toEqual([
      ['ADDED', 'r2'],
      ['MODIFIED', 'r1'],
    ]);
  });

  it('turns an object leaving or entering the selector into DELETED or ADDED', async () => {
    const w = await watch('/api/v1/namespaces/w/pods', { labelSelector: 'app=web' });
    await core.createNamespacedPod({ namespace: 'w', body: pod('s', { app: 'web' }) });
    await core.patchNamespacedPod(
      { namespace: 'w', name: 's', body: { metadata: { labels: { app: 'db' } } } },
      merge,
    );
    await core.createNamespacedPod({ namespace: 'w', body: pod('other', { app: 'db' }) });
    await core.patchNamespacedPod(
      { namespace: 'w', name: 's', body: { metadata: { labels: { app: 'web' } } } },
      merge,
    );
    await w.waitCount(3);
    expect(w.events.map((e) => [e.type, e.name, e.obj.metadata?.labels?.app])).toEqual([
      ['ADDED', 's', 'web'],
      ['DELETED', 's', 'db'],
      ['ADDED', 's', 'web'],
    ]);
  });

  it('watches nodes with a field selector', async () => {
    const w = await watch('/api/v1/nodes', { fieldSelector: 'metadata.name=n1' });
    await core.createNode({ body: { metadata: { name: 'n2' } } });
    await core.createNode({ body: { metadata: { name: 'n1' } } });
    await core.patchNodeStatus(
      {
        name: 'n1',
        body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } },
      },
      merge,
    );
    await w.waitCount(2);
    expect(w.events.map((e) => [e.type, e.name])).toEqual([
      ['ADDED', 'n1'],
      ['MODIFIED', 'n1'],
    ]);
  });

  it('answers a compacted resourceVersion with an ERROR event carrying 410 Expired', async () => {
    const p = await core.createNamespacedPod({ namespace: 'w', body: pod('c1') });
    await core.patchNamespacedPod(
      { namespace: 'w', name: 'c1', body: { metadata: { labels: { z: '1' } } } },
      merge,
    );
    await lab.store.compact(await lab.store.revision());
    const w = await watch('/api/v1/namespaces/w/pods', { resourceVersion: p.metadata!.resourceVersion! });
    await w.waitCount(1);
    expect(w.events[0]).toMatchObject({
      type: 'ERROR',
      obj: { kind: 'Status', code: 410, reason: 'Expired' },
    });
    await w.waitEnded();
  });

  it('ends at timeoutSeconds and when the instance goes down', async () => {
    const t0 = Date.now();
    const timed = await watch('/api/v1/namespaces/w/configmaps', { timeoutSeconds: 1 });
    await timed.waitEnded();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);

    const w = await watch('/api/v1/namespaces/w/configmaps');
    await new Promise((r) => setTimeout(r, 100));
    expect(w.ended()).toBe('open');
    lab.server.setDown(true);
    try {
      await w.waitEnded();
    } finally {
      lab.server.setDown(false);
    }
  });
});
