/**
 * drainNodes over an in-memory cluster on a virtual clock (testing-drain-cluster.ts): every guard
 * of drain-nodes.ts, checked by exact outcomes (events, results, evictions and their order, the
 * pacing's waits, gate messages). Virtual time makes the waits and durations exact and keeps the
 * file fast on a busy machine; no assertion reads the wall clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../errors.js';
import type { PodView } from '../ports/run.js';
import { useClock, VirtualClock } from '../util/testing-virtual-clock.js';
import { type DrainNodesOptions, drainNodes, type EvictedPod } from './drain-nodes.js';
import { DrainCluster, pod } from './testing-drain-cluster.js';

// drain-nodes.ts sleeps through node:timers/promises: on the virtual clock here.
vi.mock('node:timers/promises', async () => ({
  setTimeout: (await import('../util/testing-virtual-clock.js')).virtualSetTimeout,
}));

let clock: VirtualClock;
let c: DrainCluster;

beforeEach(() => {
  clock = new VirtualClock();
  useClock(clock);
  vi.spyOn(Date, 'now').mockImplementation(clock.now);
  c = new DrainCluster(clock);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** One node, a fixed 10 ms retry and a 10 ms poll unless a test says otherwise. */
function opts(over: Partial<DrainNodesOptions> = {}): DrainNodesOptions {
  return {
    nodes: ['w1'],
    concurrency: 1,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    evictBarePods: false,
    record: c.record,
    pollMs: 10,
    pacing: { kind: 'fixed', retryMs: 10 },
    ...over,
  };
}

/** A pod whose controller (a Job) puts nothing back: the drain does not wait for it afterwards. */
const job = (name: string, over: Partial<PodView> = {}) =>
  pod(name, { controller: { kind: 'Job', name: 'batch' }, labels: { app: 'batch' }, ...over });

const bare = (name: string, over: Partial<PodView> = {}) => pod(name, { controller: null, ...over });

/** The stop drainNodes ends with: a gate (exit 3). */
async function gate(p: Promise<unknown>): Promise<FerryError> {
  const err = await p.then(
    () => {
      throw new Error('drainNodes finished; a gate was expected');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FerryError);
  const fe = err as FerryError;
  expect(fe.kind).toBe('gate');
  expect(fe.exitCode).toBe(3);
  return fe;
}

const evictTimes = () => c.calls.filter((x) => x.op === 'evict').map((x) => x.at);
const BUDGET_MSG = "Cannot evict pod as it would violate the pod's disruption budget.";
const WEB = { kind: 'ReplicaSet', name: 'web' };

describe('pods without a controller', () => {
  it('stop the drain before any eviction, naming five and counting all; the others are not counted', async () => {
    c.add(
      pod('web-1'),
      bare('done', { finished: true, ready: false }),
      bare('a'),
      bare('going', { terminating: true }),
      bare('b'),
      // A static pod's mirror: no controller, but drain leaves it.
      bare('static-w1', { ignoredByDrain: true }),
      bare('c'),
      bare('d', { node: 'w2' }),
      bare('e', { node: 'w2' }),
      bare('f', { node: 'w2' }),
    );
    const err = await gate(drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 2 })));
    expect(err.message).toBe(
      '6 pod(s) on w1, w2 have no controller: evicted, nothing brings them back (shop/a, shop/b, shop/c, shop/d, shop/e, …); nothing was evicted',
    );
    expect(err.remediation).toContain('--evict-bare-pods');
    // Nothing done, nothing read beyond the look at the nodes.
    expect(c.calls.map((x) => `${x.op} ${x.args.join('/')}`)).toEqual(['podsOnNode w1', 'podsOnNode w2']);
    expect(c.events).toEqual([]);
  });

  it('names all five when there are five', async () => {
    c.add(bare('a'), bare('b'), bare('c'), bare('d'), bare('e'));
    const err = await gate(drainNodes(c.port, opts()));
    expect(err.message).toBe(
      '5 pod(s) on w1 have no controller: evicted, nothing brings them back (shop/a, shop/b, shop/c, shop/d, shop/e); nothing was evicted',
    );
  });

  it('are evicted when the operator accepted it, recorded before the baseline', async () => {
    c.add(bare('a'), pod('web-1'), bare('going', { terminating: true }), bare('done', { finished: true }));
    c.replace('web', { node: 'w3', readyMs: 5 });
    clock.at(5, () => c.remove('going'));
    const r = await drainNodes(c.port, opts({ evictBarePods: true }));
    const evicted = (name: string, controller: EvictedPod['controller']) => ({
      kind: 'evicted',
      evicted: { node: 'w1', pod: `shop/${name}`, uid: `uid-${name}`, controller },
    });
    expect(c.events).toEqual([
      // Only the live one: a terminating or finished pod loses nothing.
      { kind: 'bare-pods-accepted', pods: ['shop/a'] },
      { kind: 'baseline', ready: { 'shop/ReplicaSet/web': 1 } },
      evicted('a', null),
      evicted('web-1', WEB),
      evicted('done', null),
      { kind: 'node-drained', node: 'w1', ms: 10 },
      { kind: 'replacements-ready', ms: 0, owners: 1 },
    ]);
    expect(r).toEqual({
      nodes: [{ node: 'w1', evicted: ['shop/a', 'shop/web-1', 'shop/done'], ms: 10 }],
      replacementsMs: 0,
    });
  });
});

describe('what drain leaves and what it evicts', () => {
  it('never evicts DaemonSet or mirror pods, evicts finished ones, and records no acceptance without bare pods', async () => {
    c.add(
      pod('agent', { controller: { kind: 'DaemonSet', name: 'agent' }, ignoredByDrain: true }),
      bare('static-w1', { ignoredByDrain: true }),
      bare('report', { finished: true, ready: false }),
      job('job-1', { finished: true, ready: false }),
    );
    const r = await drainNodes(c.port, opts());
    expect(c.callsOf('evict')).toEqual(['shop/report', 'shop/job-1']);
    // The node counts as drained with the pods drain leaves still on it.
    expect(c.find('agent')).toBeDefined();
    expect(c.events.map((e) => e.kind)).toEqual([
      'baseline',
      'evicted',
      'evicted',
      'node-drained',
      'replacements-ready',
    ]);
    expect(c.events[0]).toEqual({ kind: 'baseline', ready: {} });
    expect(r).toEqual({
      nodes: [{ node: 'w1', evicted: ['shop/report', 'shop/job-1'], ms: 10 }],
      replacementsMs: 0,
    });
  });

  it('waits for terminating pods to go without evicting them', async () => {
    c.add(job('old', { terminating: true }), job('j1'));
    clock.at(35, () => c.remove('old'));
    const r = await drainNodes(c.port, opts());
    expect(c.callsOf('evict')).toEqual(['shop/j1']);
    expect(clock.sleeps).toEqual([10, 10, 10, 10]);
    expect(r.nodes).toEqual([{ node: 'w1', evicted: ['shop/j1'], ms: 40 }]);
  });

  it('never evicts a pod twice, even while the view still shows it running', async () => {
    c.add(job('j1'));
    // Accepted, but the pod shows no deletion yet: the next passes must not evict it again.
    c.onEvict = () => ({ kind: 'evicted' });
    clock.at(25, () => c.remove('j1'));
    const r = await drainNodes(c.port, opts());
    expect(c.callsOf('evict')).toEqual(['shop/j1']);
    expect(c.eventsOf('evicted')).toHaveLength(1);
    expect(r.nodes).toEqual([{ node: 'w1', evicted: ['shop/j1'], ms: 30 }]);
  });

  it('evicts each pod whose uid is unknown (an empty uid names no pod)', async () => {
    c.add(job('j1', { uid: '' }), job('j2', { uid: '' }));
    const r = await drainNodes(c.port, opts({ timeoutMs: 100 }));
    expect(c.callsOf('evict')).toEqual(['shop/j1', 'shop/j2']);
    expect(evictTimes()).toEqual([0, 0]);
    expect(r.nodes[0]!.evicted).toEqual(['shop/j1', 'shop/j2']);
  });

  it('does not count a pod that was gone by the time of its eviction', async () => {
    c.add(job('j1'), job('j2'));
    c.onEvict = (p) => {
      if (p.name !== 'j2') return undefined;
      c.remove('j2');
      return { kind: 'gone' };
    };
    const r = await drainNodes(c.port, opts());
    expect(c.eventsOf('evicted').map((e) => e.evicted.pod)).toEqual(['shop/j1']);
    expect(c.eventsOf('blocked')).toEqual([]);
    expect(r.nodes).toEqual([{ node: 'w1', evicted: ['shop/j1'], ms: 10 }]);
  });
});

describe('the baseline', () => {
  const stop = new Error('stop after the baseline');

  it('counts Ready, not terminating pods per ReplicaSet and StatefulSet, over the namespaces drained', async () => {
    c.add(
      pod('web-1'),
      pod('web-2', { ready: false }),
      pod('db-0', { controller: { kind: 'StatefulSet', name: 'db' }, labels: { app: 'db' } }),
      pod('cold-1', { controller: { kind: 'ReplicaSet', name: 'cold' }, ready: false }),
      pod('web-1', { namespace: 'blog' }),
      job('j1'),
      // Elsewhere:
      pod('web-3', { node: 'w2' }),
      pod('web-4', { node: 'w2', terminating: true }),
      pod('web-5', { node: 'w2', ready: false }),
      pod('db-1', { node: 'w2', controller: { kind: 'StatefulSet', name: 'db' }, labels: { app: 'db' } }),
      pod('api-1', { node: 'w2', controller: { kind: 'ReplicaSet', name: 'api' } }),
      pod('web-2', { namespace: 'blog', node: 'w2' }),
      pod('web-1', { namespace: 'other', node: 'w2' }),
    );
    // Stops the run once the baseline is recorded: this test is about the look before it.
    c.onRecord = (e) => {
      if (e.kind === 'baseline') throw stop;
    };
    await expect(drainNodes(c.port, opts())).rejects.toBe(stop);
    expect(c.events).toEqual([
      {
        kind: 'baseline',
        ready: {
          'shop/ReplicaSet/web': 2,
          'shop/StatefulSet/db': 2,
          'shop/ReplicaSet/cold': 0,
          'blog/ReplicaSet/web': 2,
        },
      },
    ]);
    expect(c.callsOf('listPods')).toEqual(['shop', 'blog']);
  });

  it('keeps a count for an owner none of whose pods is listed any more', async () => {
    c.add(pod('web-1'));
    // The pod went between the look at the node and the list of its namespace.
    c.port.listPods = async () => [];
    c.onRecord = (e) => {
      if (e.kind === 'baseline') throw stop;
    };
    await expect(drainNodes(c.port, opts())).rejects.toBe(stop);
    expect(c.events).toEqual([{ kind: 'baseline', ready: { 'shop/ReplicaSet/web': 0 } }]);
  });
});

describe('refused evictions (429)', () => {
  it("'fixed' retries every retryMs without reading the budget, recording the refusal once", async () => {
    c.add(pod('web-1'));
    const b = c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    clock.at(35, () => {
      b.disruptionsAllowed = 1;
    });
    c.replace('web', { node: 'w3', readyMs: 0 });
    const r = await drainNodes(c.port, opts({ pollMs: 7 }));
    expect(evictTimes()).toEqual([0, 10, 20, 30, 40]);
    expect(clock.sleeps).toEqual([10, 10, 10, 10, 7]);
    expect(c.callsOf('getPdb')).toEqual([]);
    expect(c.events).toEqual([
      { kind: 'baseline', ready: { 'shop/ReplicaSet/web': 1 } },
      { kind: 'blocked', node: 'w1', pod: 'shop/web-1', pdb: 'shop/web', message: BUDGET_MSG },
      { kind: 'evicted', evicted: { node: 'w1', pod: 'shop/web-1', uid: 'uid-web-1', controller: WEB } },
      { kind: 'node-drained', node: 'w1', ms: 47 },
      { kind: 'replacements-ready', ms: 0, owners: 1 },
    ]);
    expect(r).toEqual({ nodes: [{ node: 'w1', evicted: ['shop/web-1'], ms: 47 }], replacementsMs: 0 });
  });

  it("'fixed' waits no longer than the deadline, then stops naming the budget", async () => {
    c.add(pod('web-1'));
    c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    const err = await gate(
      drainNodes(c.port, opts({ timeoutMs: 1_500, pacing: { kind: 'fixed', retryMs: 400 } })),
    );
    expect(clock.sleeps).toEqual([400, 400, 400, 300]);
    expect(evictTimes()).toEqual([0, 400, 800, 1_200]);
    expect(err.message).toBe(
      `drain of node w1 did not finish within 2 s: 1 pod(s) left (shop/web-1); blocked by PodDisruptionBudget shop/web: ${BUDGET_MSG}`,
    );
    expect(err.remediation).toContain('make room in shop/web (scale the workload up');
  });

  it("'watch' reads the budget, less and less often, and retries as soon as it allows a disruption", async () => {
    c.add(pod('web-1'));
    const b = c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    clock.at(50, () => {
      b.disruptionsAllowed = 1;
    });
    c.replace('web', { node: 'w3', readyMs: 0 });
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 100, maxPollMs: 40, maxFallbackMs: 400 } as const;
    await drainNodes(c.port, opts({ pollMs: 7, pacing }));
    // Reads at 10, 30 and 70 ms; the one at 70 sees the room made at 50.
    expect(clock.sleeps).toEqual([10, 20, 40, 7]);
    expect(c.calls.filter((x) => x.op === 'getPdb').map((x) => [x.args, x.at])).toEqual([
      [['shop', 'web'], 10],
      [['shop', 'web'], 30],
      [['shop', 'web'], 70],
    ]);
    expect(evictTimes()).toEqual([0, 70]);
  });

  it("'watch' backs off reads and retries while the budget stays at 0 (or unset), up to their caps", async () => {
    c.add(pod('web-1'));
    const b = c.pdb('web', { matchLabels: { app: 'web' } }, null);
    clock.at(900, () => {
      b.disruptionsAllowed = 1;
    });
    c.replace('web', { node: 'w3', readyMs: 0 });
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 100, maxPollMs: 40, maxFallbackMs: 400 } as const;
    await drainNodes(c.port, opts({ pollMs: 7, pacing }));
    expect(clock.sleeps).toEqual([
      // Retry after 100 ms; reads after 10, 20, 40 ms, the last wait cut at the retry.
      ...[10, 20, 40, 30],
      // Retry after 200 ms; reads start at 20 ms and stop growing at 40.
      ...[20, 40, 40, 40, 40, 20],
      // Retry after 400 ms (the cap), reads every 40 ms.
      ...Array(10).fill(40),
      // Still 400 ms (capped); the read at 900 ms sees the room made then.
      ...Array(5).fill(40),
      7,
    ]);
    expect(evictTimes()).toEqual([0, 100, 300, 700, 900]);
  });

  it("'watch' without a budget to read retries after fallbackMs, doubled each pass when uncapped", async () => {
    c.add(pod('web-1'));
    c.onEvict = () => ({ kind: 'blocked', pdb: undefined, message: 'Too many requests' });
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 100 } as const;
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_500, pacing })));
    expect(clock.sleeps).toEqual([100, 200, 400, 800]);
    expect(c.callsOf('getPdb')).toEqual([]);
    expect(c.eventsOf('blocked')).toEqual([
      { kind: 'blocked', node: 'w1', pod: 'shop/web-1', pdb: undefined, message: 'Too many requests' },
    ]);
    // No budget named, but what refused is told.
    expect(err.message).toBe(
      'drain of node w1 did not finish within 2 s: 1 pod(s) left (shop/web-1): Too many requests',
    );
    expect(err.remediation).toContain('check why the pods do not terminate');
  });

  it('stops doubling after 2^30 (no overflow to Infinity)', async () => {
    c.add(job('j1'));
    c.onEvict = () => ({ kind: 'blocked', pdb: undefined, message: 'Too many requests' });
    const pacing = { kind: 'watch', pollMs: 1, fallbackMs: 1 } as const;
    await gate(drainNodes(c.port, opts({ timeoutMs: 2 ** 32, pacing })));
    const doubling = Array.from({ length: 31 }, (_, i) => 2 ** i);
    // 2^0 … 2^30 sum to 2^31 − 1: two more 2^30 leave 1 ms to the deadline.
    expect(clock.sleeps).toEqual([...doubling, 2 ** 30, 2 ** 30, 1]);
  });

  it('caps a back-off no lower than where it starts, and the retry wait at the deadline', async () => {
    c.add(pod('web-1'));
    c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    // Caps below the starting values: the starting values hold.
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 30, maxPollMs: 5, maxFallbackMs: 20 } as const;
    await gate(drainNodes(c.port, opts({ timeoutMs: 95, pacing })));
    expect(clock.sleeps).toEqual([10, 10, 10, 10, 10, 10, 10, 10, 10, 5]);
    expect(evictTimes()).toEqual([0, 30, 60, 90]);
  });

  it('starts the back-off over after a pass in which an eviction went through', async () => {
    c.add(job('a'), job('b'));
    c.onEvict = (p, attempt) =>
      p.name === 'a' || attempt === 1
        ? { kind: 'blocked', pdb: undefined, message: `${p.name} refused` }
        : undefined;
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 100, maxFallbackMs: 1_000 } as const;
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 900, pacing })));
    // 100 (a and b refused), 100 (b went: start over), then 100, 200, 400 (cut at the deadline).
    expect(clock.sleeps).toEqual([100, 100, 100, 200, 400]);
    expect(c.eventsOf('blocked').map((e) => e.pod)).toEqual(['shop/a', 'shop/b']);
    expect(err.message).toBe('drain of node w1 did not finish within 1 s: 1 pod(s) left (shop/a): a refused');
  });

  it('reads every refusing budget in turn and retries when any allows', async () => {
    c.add(job('a', { labels: { app: 'a' } }), job('b', { labels: { app: 'b' } }));
    c.pdb('pa', { matchLabels: { app: 'a' } }, 0);
    const pb = c.pdb('pb', { matchLabels: { app: 'b' } }, 0);
    clock.at(25, () => {
      pb.disruptionsAllowed = 1;
    });
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 1_000, maxPollMs: 10 } as const;
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 100, pacing })));
    const reads = c.callsOf('getPdb');
    expect(reads.slice(0, 6)).toEqual(['shop/pa', 'shop/pb', 'shop/pa', 'shop/pb', 'shop/pa', 'shop/pb']);
    // After b went, only the budget still refusing is read.
    expect(reads.slice(6)).toEqual(Array(6).fill('shop/pa'));
    expect(evictTimes()).toEqual([0, 0, 30, 30]);
    expect(c.evictions).toEqual(['shop/b']);
    expect(err.message).toBe(
      `drain of node w1 did not finish within 0 s: 1 pod(s) left (shop/a); blocked by PodDisruptionBudget shop/pa: ${BUDGET_MSG}`,
    );
  });

  it('retries at once when the refusing budget cannot be found', async () => {
    c.add(job('j1'));
    c.onEvict = (_p, attempt) =>
      attempt === 1 ? { kind: 'blocked', pdb: 'shop/gone', message: BUDGET_MSG } : undefined;
    const pacing = { kind: 'watch', pollMs: 10, fallbackMs: 1_000 } as const;
    await drainNodes(c.port, opts({ pollMs: 7, pacing }));
    expect(c.callsOf('getPdb')).toEqual(['shop/gone']);
    expect(clock.sleeps).toEqual([10, 7]);
    expect(evictTimes()).toEqual([0, 10]);
  });

  it('paces by the defaults when given none (poll 100 ms; watch 50 ms to 1 s, retry 1 s to 8 s)', async () => {
    c.add(pod('web-1'));
    const b = c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    clock.at(30_000, () => {
      b.disruptionsAllowed = 1;
    });
    c.replace('web', { node: 'w3', readyMs: 0 });
    await drainNodes(c.port, opts({ timeoutMs: 60_000, pollMs: undefined, pacing: undefined }));
    expect(clock.sleeps).toEqual([
      ...[50, 100, 200, 400, 250], // retry after 1 s
      ...[100, 200, 400, 800, 500], // 2 s
      ...[200, 400, 800, 1_000, 1_000, 600], // 4 s, reads capped at 1 s
      ...[400, 800, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 800], // 8 s
      ...[800, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 200], // 8 s: capped
      ...Array(7).fill(1_000), // the read at 30 s sees the room
      100, // the poll until the node is empty
    ]);
    expect(evictTimes()).toEqual([0, 1_000, 3_000, 7_000, 15_000, 23_000, 30_000]);
  });
});

describe('a pod two budgets select', () => {
  it('stops at once, naming the budgets that select it, and stops the other nodes', async () => {
    c.add(pod('web-1'), pod('api-1', { node: 'w2', labels: { app: 'api' }, terminating: true }));
    c.pdb('web-a', { matchLabels: { app: 'web' } }, 1);
    c.pdb('web-b', { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] }, 1);
    c.pdb('api', { matchLabels: { app: 'api' } }, 1);
    // An absent selector selects no pod.
    c.pdb('none', null, 1);
    c.pdb('web-c', { matchLabels: { app: 'web' } }, 1, 'blog');
    const err = await gate(drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 2 })));
    expect(err.message).toBe(
      'eviction of shop/web-1 refused: it is selected by more than one PodDisruptionBudget (shop/web-a and shop/web-b), which the Eviction API does not support (This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.)',
    );
    expect(err.remediation).toContain('change the selectors of shop/web-a and shop/web-b');
    expect(c.callsOf('evict')).toEqual(['shop/web-1']);
    expect(c.callsOf('listPdbs')).toEqual(['shop']);
    // w2 (waiting on a terminating pod) was stopped then, not left to run to the deadline.
    expect(clock.elapsed()).toBe(0);
    expect(c.events.map((e) => e.kind)).toEqual(['baseline']);
  });

  it("says 'several' when the budgets cannot be listed", async () => {
    c.add(job('j1'));
    c.onEvict = () => ({ kind: 'several-budgets', message: 'two budgets' });
    c.port.listPdbs = async () => {
      throw new Error('forbidden');
    };
    const err = await gate(drainNodes(c.port, opts()));
    expect(err.message).toBe(
      'eviction of shop/j1 refused: it is selected by more than one PodDisruptionBudget (several (ferry could not list them)), which the Eviction API does not support (two budgets)',
    );
  });
});

describe('concurrency', () => {
  it('drains at most `concurrency` nodes at once, in the order given, and reports them in that order', async () => {
    c.add(job('j1'), job('j2', { node: 'w2' }), job('j3', { node: 'w3' }), job('j4', { node: 'w4' }));
    c.grace.set('j1', 45);
    c.graceMs = 5;
    const r = await drainNodes(c.port, opts({ nodes: ['w1', 'w2', 'w3', 'w4'], concurrency: 2 }));
    expect(c.maxDraining).toBe(2);
    expect(c.evictions).toEqual(['shop/j1', 'shop/j2', 'shop/j3', 'shop/j4']);
    // w2, w3 and w4 one after the other while w1 takes 50 ms.
    expect(evictTimes()).toEqual([0, 0, 10, 20]);
    expect(c.eventsOf('node-drained')).toEqual([
      { kind: 'node-drained', node: 'w2', ms: 10 },
      { kind: 'node-drained', node: 'w3', ms: 10 },
      { kind: 'node-drained', node: 'w4', ms: 10 },
      { kind: 'node-drained', node: 'w1', ms: 50 },
    ]);
    expect(r).toEqual({
      nodes: [
        { node: 'w1', evicted: ['shop/j1'], ms: 50 },
        { node: 'w2', evicted: ['shop/j2'], ms: 10 },
        { node: 'w3', evicted: ['shop/j3'], ms: 10 },
        { node: 'w4', evicted: ['shop/j4'], ms: 10 },
      ],
      replacementsMs: 0,
    });
    expect(c.eventsOf('replacements-ready')).toEqual([{ kind: 'replacements-ready', ms: 0, owners: 0 }]);
  });

  it('drains one node at a time when concurrency is below 1', async () => {
    c.add(job('j1'), job('j2', { node: 'w2' }));
    const r = await drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 0 }));
    expect(c.maxDraining).toBe(1);
    expect(evictTimes()).toEqual([0, 10]);
    expect(r.nodes.map((n) => n.node)).toEqual(['w1', 'w2']);
  });
});

describe('an earlier attempt (prior)', () => {
  it('never evicts its pods again and keeps its baseline', async () => {
    // web-1's eviction was accepted just before the crash: it still shows running, then goes.
    c.add(pod('web-1'), pod('web-2'), pod('web-9', { node: 'w3' }));
    clock.at(25, () => c.remove('web-1'));
    c.replace('web', { node: 'w3', readyMs: 5 });
    const prior = {
      evicted: [{ node: 'w1', pod: 'shop/web-1', uid: 'uid-web-1', controller: WEB }],
      // Read before web-1 went: two Ready. A fresh look would count three and wait for a third.
      baseline: { 'shop/ReplicaSet/web': 2 },
    };
    clock.at(60, () => c.add(pod('web-8', { node: 'w3' })));
    const r = await drainNodes(c.port, opts({ prior }));
    expect(c.callsOf('evict')).toEqual(['shop/web-2']);
    expect(c.events.map((e) => e.kind)).toEqual(['evicted', 'node-drained', 'replacements-ready']);
    // No baseline read: the first list is the look for replacements.
    expect(c.calls.find((x) => x.op === 'listPods')?.at).toBe(30);
    expect(r).toEqual({ nodes: [{ node: 'w1', evicted: ['shop/web-2'], ms: 30 }], replacementsMs: 0 });
  });

  it("waits for its StatefulSet pod to be back, listing that pod's namespace", async () => {
    const db = { kind: 'StatefulSet', name: 'db' };
    c.add(pod('db-0', { namespace: 'db', uid: 'new', node: 'w3', ready: false, controller: db }));
    clock.at(30, () => {
      c.find('db-0', 'db')!.ready = true;
    });
    // A baseline without its owner: the namespace is listed for the evicted pod alone.
    const prior = { evicted: [{ node: 'w1', pod: 'db/db-0', uid: 'old', controller: db }], baseline: {} };
    const r = await drainNodes(c.port, opts({ prior }));
    expect(r.replacementsMs).toBe(30);
    expect(c.callsOf('listPods')).toEqual(['db', 'db', 'db', 'db']);
    expect(c.eventsOf('replacements-ready')).toEqual([{ kind: 'replacements-ready', ms: 30, owners: 0 }]);
  });
});

describe('replacements', () => {
  it('count only Ready, not terminating pods bound to a node that stays', async () => {
    c.add(pod('web-1'));
    // The replacement lands on w2, drained with w1: it does not count.
    c.replace('web', { node: 'w2', readyMs: 5 });
    clock.at(15, () =>
      c.add(
        pod('web-x', { node: 'w3', ready: false }),
        pod('web-y', { node: 'w3', terminating: true }),
        // Ready but bound to no node: not a view the API gives, but no place to count either.
        pod('web-z', { node: '' }),
        pod('web-ok', { node: 'w3', ready: false }),
      ),
    );
    clock.at(50, () => {
      c.find('web-ok')!.ready = true;
    });
    const r = await drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 2 }));
    expect(r.replacementsMs).toBe(40);
    expect(c.events.slice(-3)).toEqual([
      { kind: 'node-drained', node: 'w2', ms: 0 },
      { kind: 'node-drained', node: 'w1', ms: 10 },
      { kind: 'replacements-ready', ms: 40, owners: 1 },
    ]);
  });

  it('wait for an evicted StatefulSet pod to be back under its name, not only for the count', async () => {
    const db = { kind: 'StatefulSet', name: 'db' };
    c.add(
      pod('db-0', { controller: db, labels: { app: 'db' } }),
      // Not Ready at the baseline, Ready soon after: the count is met before db-0 is back.
      pod('db-1', { controller: db, labels: { app: 'db' }, node: 'w2', ready: false }),
    );
    clock.at(5, () => {
      c.find('db-1')!.ready = true;
    });
    c.grace.set('db-0', 20);
    c.replace('db', { node: 'w3', readyMs: 15 });
    const r = await drainNodes(c.port, opts());
    expect(c.events[0]).toEqual({ kind: 'baseline', ready: { 'shop/StatefulSet/db': 1 } });
    expect(r).toEqual({ nodes: [{ node: 'w1', evicted: ['shop/db-0'], ms: 20 }], replacementsMs: 20 });
  });

  it('stop at the deadline, saying why the scheduler cannot place one', async () => {
    c.add(
      pod('web-1'),
      // An older replacement being deleted: its scheduler message is stale.
      pod('web-old', { node: '', ready: false, terminating: true, unschedulable: 'stale' }),
    );
    c.replace('web', {
      node: '',
      unschedulable: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
    });
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_500, pollMs: 400 })));
    expect(err.message).toBe(
      "the evicted pods' replacements were not Ready within 2 s: shop ReplicaSet/web: 0 of 1 Ready elsewhere (shop/web-1-r1 unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.)",
    );
    expect(err.remediation).toContain('then run ferry run --resume');
    // Drained after one poll, then looks until exactly the deadline.
    expect(clock.sleeps).toEqual([400, 400, 400, 300]);
    expect(c.eventsOf('node-drained')).toEqual([{ kind: 'node-drained', node: 'w1', ms: 400 }]);
    expect(c.eventsOf('replacements-ready')).toEqual([]);
  });

  it("count each owner's replacements apart, and name only its own unschedulable pod", async () => {
    const api = { controller: { kind: 'ReplicaSet', name: 'api' }, labels: { app: 'api' } };
    c.add(
      // A pending web pod listed first: its scheduler message is web's, not api's.
      pod('web-3', { node: '', ready: false, unschedulable: 'web cannot go anywhere' }),
      pod('web-1'),
      pod('api-1', api),
    );
    // web is back at once, twice over; api's replacement cannot be placed.
    c.replace('web', { node: 'w3', readyMs: 0 });
    clock.at(5, () => c.add(pod('web-2', { node: 'w3' })));
    c.replace('api', { node: '', unschedulable: 'no node matches api' });
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_000 })));
    expect(err.message).toBe(
      "the evicted pods' replacements were not Ready within 1 s: shop ReplicaSet/api: 0 of 1 Ready elsewhere (shop/api-1-r2 unschedulable: no node matches api)",
    );
  });

  it.each([
    [5, ''],
    [6, '; …'],
  ])('name at most five missing at the deadline (%i missing)', async (n, tail) => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'].slice(0, n);
    for (const x of names)
      c.add(pod(`${x}-1`, { controller: { kind: 'ReplicaSet', name: x }, labels: { app: x } }));
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_000 })));
    const shown = names.slice(0, 5).map((x) => `shop ReplicaSet/${x}: 0 of 1 Ready elsewhere`);
    expect(err.message).toBe(
      `the evicted pods' replacements were not Ready within 1 s: ${shown.join('; ')}${tail}`,
    );
  });

  it('are not waited for when their pods may run only on drained nodes', async () => {
    const rs = (name: string) => ({ controller: { kind: 'ReplicaSet', name }, labels: { app: name } });
    c.add(
      pod('pin-1', { ...rs('pin'), pinnedTo: ['w1'] }),
      pod('db-0', {
        controller: { kind: 'StatefulSet', name: 'db' },
        labels: { app: 'db' },
        pinnedTo: ['w1'],
      }),
      // w3 stays: replaceable.
      pod('free-1', { ...rs('free'), pinnedTo: ['w1', 'w3'] }),
      pod('both-1', { ...rs('both'), node: 'w2', pinnedTo: ['w1', 'w2'] }),
      // Pinned, but not one of the controllers drained.
      pod('other-1', { ...rs('other'), node: '', ready: false, pinnedTo: ['w1'] }),
    );
    c.replace('pin', { node: '' }).replace('db', { node: '' }).replace('both', { node: '' });
    c.replace('free', { node: 'w3', readyMs: 30 });
    const r = await drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 2 }));
    const pinned = c.eventsOf('not-replaceable').sort((a, b) => a.owner.localeCompare(b.owner));
    // Once each, though the look for replacements ran three times.
    expect(pinned).toEqual([
      { kind: 'not-replaceable', owner: 'shop/ReplicaSet/both', node: 'w1, w2' },
      { kind: 'not-replaceable', owner: 'shop/ReplicaSet/pin', node: 'w1' },
      { kind: 'not-replaceable', owner: 'shop/StatefulSet/db', node: 'w1' },
    ]);
    expect(c.callsOf('listPods').length - 1).toBe(3);
    // Done when free is back (30 ms after its eviction); the pinned ones still count as owners.
    expect(r.replacementsMs).toBe(20);
    expect(c.eventsOf('replacements-ready')).toEqual([{ kind: 'replacements-ready', ms: 20, owners: 4 }]);
  });

  it('name the node a pod is on when its rules allow no node at all', async () => {
    c.add(pod('web-1', { pinnedTo: [] }));
    // Its replacement turns up on w2, drained with w1 (and already done), allowed nowhere.
    clock.at(5, () => c.add(pod('web-2', { node: 'w2', ready: false, pinnedTo: [] })));
    const r = await drainNodes(c.port, opts({ nodes: ['w1', 'w2'], concurrency: 2 }));
    expect(c.eventsOf('not-replaceable')).toEqual([
      { kind: 'not-replaceable', owner: 'shop/ReplicaSet/web', node: 'w2' },
    ]);
    expect(r.replacementsMs).toBe(0);
  });
});

describe('the deadline while draining', () => {
  it('stops naming the pods that did not terminate, having polled up to exactly the deadline', async () => {
    c.add(pod('web-1', { terminating: true }));
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_500, pollMs: 400 })));
    expect(clock.sleeps).toEqual([400, 400, 400, 300]);
    expect(err.message).toBe(
      'drain of node w1 did not finish within 2 s: 1 pod(s) left (shop/web-1 (terminating))',
    );
    expect(err.remediation).toContain('check why the pods do not terminate');
    expect(c.callsOf('evict')).toEqual([]);
  });

  it('is checked before each eviction, not only between passes', async () => {
    c.add(job('j1'), job('j2'), job('j3'), job('j4'), job('j5'));
    c.evictMs = 10;
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 25 })));
    expect(c.callsOf('evict')).toEqual(['shop/j1', 'shop/j2', 'shop/j3']);
    // The pods as the pass saw them: five, none shown terminating yet.
    expect(err.message).toBe(
      'drain of node w1 did not finish within 0 s: 5 pod(s) left (shop/j1, shop/j2, shop/j3, shop/j4, shop/j5)',
    );
  });

  it('no longer names a budget whose refusal was followed by the eviction', async () => {
    c.add(pod('web-1'));
    c.grace.set('web-1', Number.POSITIVE_INFINITY);
    const b = c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    clock.at(15, () => {
      b.disruptionsAllowed = 1;
    });
    const err = await gate(drainNodes(c.port, opts({ timeoutMs: 1_500, pollMs: 100 })));
    expect(evictTimes()).toEqual([0, 10, 20]);
    expect(err.message).toBe(
      'drain of node w1 did not finish within 2 s: 1 pod(s) left (shop/web-1 (terminating))',
    );
    expect(err.remediation).toContain('check why the pods do not terminate');
  });

  it.each([
    [5, ''],
    [6, ', …'],
  ])('names at most five pods and each budget once (%i pods)', async (n, tail) => {
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].slice(0, n);
    for (const x of names) c.add(job(x, { labels: { app: x === 'p5' ? 'api' : 'web' } }));
    c.pdb('web', { matchLabels: { app: 'web' } }, 0);
    c.pdb('api', { matchLabels: { app: 'api' } }, 0);
    const err = await gate(
      drainNodes(c.port, opts({ timeoutMs: 1_000, pacing: { kind: 'fixed', retryMs: 400 } })),
    );
    const shown = names.slice(0, 5).map((x) => `shop/${x}`);
    expect(err.message).toBe(
      `drain of node w1 did not finish within 1 s: ${n} pod(s) left (${shown.join(', ')}${tail}); blocked by PodDisruptionBudget shop/web, shop/api: ${BUDGET_MSG}`,
    );
    expect(err.remediation).toContain('make room in shop/web, shop/api (');
    // One refusal recorded per pod, over three passes.
    expect(c.eventsOf('blocked')).toHaveLength(n);
    expect(c.callsOf('evict')).toHaveLength(3 * n);
  });
});

describe('an aborted signal', () => {
  const reason = new Error('interrupted');

  it('stops a drain waiting for a pod to terminate, and nothing is evicted after', async () => {
    const ctl = new AbortController();
    c.add(job('j1'), job('j2', { node: 'w2' }));
    c.grace.set('j1', Number.POSITIVE_INFINITY);
    clock.at(25, () => ctl.abort(reason));
    await expect(drainNodes(c.port, opts({ nodes: ['w1', 'w2'], signal: ctl.signal }))).rejects.toMatchObject(
      {
        name: 'AbortError',
        cause: reason,
      },
    );
    expect(clock.elapsed()).toBe(25);
    expect(c.callsOf('evict')).toEqual(['shop/j1']);
    expect(c.eventsOf('node-drained')).toEqual([]);
  });

  it.each([
    ['a fixed retry', { kind: 'fixed', retryMs: 100 }, 'shop/web'],
    ['a watch read of the budget', { kind: 'watch', pollMs: 100, fallbackMs: 1_000 }, 'shop/web'],
    ['a watch retry with no budget to read', { kind: 'watch', pollMs: 10, fallbackMs: 100 }, undefined],
  ] as const)('stops %s when it comes during the wait', async (_what, pacing, pdb) => {
    const ctl = new AbortController();
    c.add(job('j1'));
    c.onEvict = () => ({ kind: 'blocked', pdb, message: BUDGET_MSG });
    c.pdb('web', { matchLabels: { app: 'batch' } }, 0);
    clock.at(25, () => ctl.abort(reason));
    await expect(drainNodes(c.port, opts({ signal: ctl.signal, pacing }))).rejects.toMatchObject({
      name: 'AbortError',
      cause: reason,
    });
    expect(clock.elapsed()).toBe(25);
    expect(c.callsOf('evict')).toEqual(['shop/j1']);
    expect(c.callsOf('getPdb')).toEqual([]);
  });

  it('stops before the next eviction when it comes during one', async () => {
    const ctl = new AbortController();
    c.add(job('j1'), job('j2'));
    c.evictMs = 10;
    clock.at(5, () => ctl.abort(reason));
    await expect(drainNodes(c.port, opts({ signal: ctl.signal }))).rejects.toBe(reason);
    expect(c.callsOf('evict')).toEqual(['shop/j1']);
    expect(c.eventsOf('evicted').map((e) => e.evicted.pod)).toEqual(['shop/j1']);
  });

  it('does not start the next node', async () => {
    const ctl = new AbortController();
    c.add(job('j1'));
    c.onRecord = (e) => {
      if (e.kind === 'node-drained') ctl.abort(reason);
    };
    await expect(drainNodes(c.port, opts({ nodes: ['w1', 'w2'], signal: ctl.signal }))).rejects.toBe(reason);
    expect(c.eventsOf('node-drained').map((e) => e.node)).toEqual(['w1']);
    // The look before the first eviction only.
    expect(c.callsOf('podsOnNode').filter((n) => n === 'w2')).toHaveLength(1);
  });

  it('does not start the look for replacements once the nodes are drained', async () => {
    const ctl = new AbortController();
    c.add(pod('web-1'));
    c.onRecord = (e) => {
      if (e.kind === 'node-drained') ctl.abort(reason);
    };
    await expect(drainNodes(c.port, opts({ signal: ctl.signal }))).rejects.toBe(reason);
    // The baseline's list only.
    expect(c.callsOf('listPods')).toEqual(['shop']);
  });

  it('stops the wait for replacements', async () => {
    const ctl = new AbortController();
    c.add(pod('web-1'));
    c.replace('web', { node: 'w3' });
    clock.at(35, () => ctl.abort(reason));
    await expect(drainNodes(c.port, opts({ signal: ctl.signal }))).rejects.toMatchObject({
      name: 'AbortError',
      cause: reason,
    });
    expect(clock.elapsed()).toBe(35);
    expect(c.eventsOf('replacements-ready')).toEqual([]);
  });

  it('is left without a listener of the drain once it ends', async () => {
    const ctl = new AbortController();
    const add = vi.spyOn(ctl.signal, 'addEventListener');
    const remove = vi.spyOn(ctl.signal, 'removeEventListener');
    c.add(pod('web-1'));
    c.replace('web', { node: 'w3', readyMs: 15 });
    await drainNodes(c.port, opts({ signal: ctl.signal }));
    expect(add).toHaveBeenCalled();
    for (const [type, fn] of add.mock.calls) expect(remove).toHaveBeenCalledWith(type, fn);
  });
});
