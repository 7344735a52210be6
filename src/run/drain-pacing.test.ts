/**
 * drainNodes against a recording fake of the kube port (no server): what a budget at 0 costs in
 * requests, and kubectl's rule for finished pods. Counts are upper bounds, so a slow machine (whose
 * sleeps run long) only makes them smaller.
 */
import { describe, expect, it } from 'vitest';
import type { EvictOutcome, PdbView, PodView } from '../ports/run.js';
import { scaled } from '../util/testing-slowness.js';
import { type DrainPort, drainNodes } from './drain-nodes.js';

function pod(name: string, over: Partial<PodView> = {}): PodView {
  return {
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    terminating: false,
    ignoredByDrain: false,
    node: 'w1',
    ready: true,
    finished: false,
    controller: { kind: 'Job', name: 'nightly' },
    labels: { app: 'shop' },
    pinnedTo: undefined,
    ...over,
  };
}

/** One node's pods; evictions refused by budget shop/web while `blocked()`; evicted pods vanish. */
function fakeCluster(pods: PodView[], blocked: () => boolean) {
  const calls = { podsOnNode: 0, evict: 0, getPdb: 0, listPods: 0 };
  let onNode = [...pods];
  const port: DrainPort = {
    podsOnNode: async () => {
      calls.podsOnNode++;
      return onNode;
    },
    listPods: async () => {
      calls.listPods++;
      return [];
    },
    listPdbs: async () => [],
    getPdb: async (): Promise<PdbView> => {
      calls.getPdb++;
      return { namespace: 'shop', name: 'web', selector: null, disruptionsAllowed: blocked() ? 0 : 1 };
    },
    evict: async (_ns: string, name: string): Promise<EvictOutcome> => {
      calls.evict++;
      if (blocked()) return { kind: 'blocked', pdb: 'shop/web', message: 'Cannot evict pod' };
      onNode = onNode.filter((p) => p.name !== name);
      return { kind: 'evicted' };
    },
  };
  return { port, calls };
}

const options = (over: Partial<Parameters<typeof drainNodes>[1]> = {}) => ({
  nodes: ['w1'],
  concurrency: 1,
  timeoutMs: 30_000,
  signal: new AbortController().signal,
  evictBarePods: false,
  record: () => {},
  pollMs: 5,
  ...over,
});

describe('a drain held by a budget at 0', () => {
  it('reads the budget and retries the eviction less and less often, and still goes at once when it opens', async () => {
    const heldMs = 2_000;
    const t0 = Date.now();
    let openedAt = 0;
    const { port, calls } = fakeCluster([pod('web-1')], () => {
      const held = Date.now() - t0 < heldMs;
      if (!held && openedAt === 0) openedAt = Date.now();
      return held;
    });
    await drainNodes(
      port,
      options({ pacing: { kind: 'watch', pollMs: 10, fallbackMs: 100, maxPollMs: 200, maxFallbackMs: 800 } }),
    );
    // A fixed 10 ms poll would read the budget ~200 times and evict ~20 times in 2 s. Backed off:
    // reads 10, 20, … 200 ms (then every 200 ms) and evictions after 100, 200, 400, 800 ms.
    expect(calls.getPdb).toBeLessThanOrEqual(2_000 / 200 + 6);
    expect(calls.evict).toBeLessThanOrEqual(2_000 / 800 + 5);
    // The look before the first eviction, one per pass, and the last one that finds the node empty.
    expect(calls.podsOnNode).toBe(calls.evict + 2);
    // Still seen within one read (at most maxPollMs) of the budget opening, plus scheduling slack.
    expect(Date.now() - openedAt).toBeLessThan(200 + scaled(500));
  });

  it('starts over fast after an eviction goes through', async () => {
    // Two pods: the first is held for 1 s, the second never: its eviction follows the first at once.
    const t0 = Date.now();
    const { port } = fakeCluster([pod('web-1'), pod('web-2')], () => Date.now() - t0 < 1_000);
    const seen: { pod: string; at: number }[] = [];
    await drainNodes(
      port,
      options({
        pacing: { kind: 'watch', pollMs: 10, fallbackMs: 100, maxPollMs: 200, maxFallbackMs: 800 },
        record: (e) => {
          if (e.kind === 'evicted') seen.push({ pod: e.evicted.pod, at: Date.now() });
        },
      }),
    );
    expect(seen.map((s) => s.pod)).toEqual(['shop/web-1', 'shop/web-2']);
  });
});

describe('finished pods (kubectl drain rule)', () => {
  it('evicts a finished pod without a controller and does not stop for it', async () => {
    const done = pod('report-1', { controller: null, finished: true, ready: false });
    const failed = pod('report-2', { controller: null, finished: true, ready: false });
    const { port, calls } = fakeCluster([done, failed], () => false);
    const evicted: string[] = [];
    await drainNodes(
      port,
      options({
        record: (e) => {
          if (e.kind === 'evicted') evicted.push(e.evicted.pod);
          if (e.kind === 'bare-pods-accepted') throw new Error('finished pods are not bare pods to accept');
        },
      }),
    );
    expect(evicted).toEqual(['shop/report-1', 'shop/report-2']);
    expect(calls.evict).toBe(2);
  });

  it('still stops before the first eviction for a running pod without a controller', async () => {
    const { port, calls } = fakeCluster(
      [pod('report-1', { controller: null, finished: true }), pod('debug', { controller: null })],
      () => false,
    );
    await expect(drainNodes(port, options())).rejects.toMatchObject({
      message: expect.stringMatching(/1 pod\(s\) on w1 have no controller.*shop\/debug/),
    });
    expect(calls.evict).toBe(0);
  });
});
