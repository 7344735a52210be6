import { describe, expect, it } from 'vitest';
import type { Taint } from '../../snapshot/model.js';
import { Capacity, type PlaceResult, shapeKey, shapeLabels } from './capacity.js';
import { admits } from './fit.js';
import type { ClusterModel, ModelNode, ModelPod, Resource, Scheduling, SpreadRule, Vec } from './model.js';
import { ANYWHERE, model, pod as testPod, worker } from './testing.js';

// Small numbers: cpu, memory and pod slots in the same made-up units, so that room is easy to read.
const node = (name: string, o: Partial<ModelNode> = {}): ModelNode =>
  worker(name, { allocatable: { cpu: 1000, memory: 1000, pods: 10 }, ...o });
const needs = (cpu: number, memory = 1, pods = 1): Vec => ({ cpu, memory, pods });
const pod = (name: string, on: string, o: Partial<ModelPod> = {}): ModelPod =>
  testPod(name, on, { requests: needs(100), ...o });
const HOST = 'kubernetes.io/hostname';
const dedicated: Taint = { key: 'dedicated', value: 'db', effect: 'NoSchedule' };

/** Evicts pod `id` (its node drained) and asks where it would go. */
function evict(cap: Capacity, id: number): PlaceResult {
  cap.deactivate(cap.podSlot[id]!);
  cap.unplace(id);
  return cap.find(id);
}

const where = (cap: Capacity, r: PlaceResult): string =>
  r.ok ? cap.slots[r.slot]!.name : `short:${r.shortage}`;

describe('shapeLabels and shapeKey', () => {
  it('a replacement keeps the labels but not the hostname, and the node is left as it was', () => {
    const w = node('w1', { labels: { [HOST]: 'w1', pool: 'a' } });
    expect(shapeLabels(w)).toEqual({ [HOST]: '', pool: 'a' });
    expect(w.labels[HOST]).toBe('w1');
  });

  it('nodes differing only by hostname, label order or taint order share a key', () => {
    const gpu: Taint = { key: 'gpu', effect: 'NoExecute' };
    const a = node('a', { labels: { [HOST]: 'a', pool: 'x', zone: 'z1' }, taints: [dedicated, gpu] });
    const b = node('b', { labels: { zone: 'z1', pool: 'x', [HOST]: 'b' }, taints: [gpu, dedicated] });
    expect(shapeKey(a)).toBe(shapeKey(b));
    // A taint without a value is the same as one with an empty value.
    expect(shapeKey(node('c', { taints: [gpu] }))).toBe(
      shapeKey(node('d', { taints: [{ ...gpu, value: '' }] })),
    );
  });

  it('a different label value, taint or taint value makes a different key', () => {
    const base = node('a', { labels: { [HOST]: 'a', pool: 'x' }, taints: [dedicated] });
    const others = [
      node('b', { labels: { [HOST]: 'b', pool: 'y' }, taints: [dedicated] }),
      node('c', { labels: { [HOST]: 'c', pool: 'x', extra: '' }, taints: [dedicated] }),
      node('d', { labels: { [HOST]: 'd', pool: 'x' }, taints: [] }),
      node('e', { labels: { [HOST]: 'e', pool: 'x' }, taints: [{ ...dedicated, value: 'web' }] }),
      node('f', { labels: { [HOST]: 'f', pool: 'x' }, taints: [{ ...dedicated, effect: 'NoExecute' }] }),
      node('g', { labels: { [HOST]: 'g', pool: 'x' }, taints: [{ ...dedicated, key: 'other' }] }),
    ];
    const keys = new Set([base, ...others].map(shapeKey));
    expect(keys.size).toBe(others.length + 1);
  });
});

describe('Capacity: slots', () => {
  it('has the old workers, their replacements, then the surge workers, each with a hostname of its own', () => {
    const w = [node('w1'), node('w2')];
    const cap = new Capacity(model({ workers: w }), { count: 2, like: w[0]! });
    expect(cap.n).toBe(2);
    expect(cap.slots.map((s) => s.name)).toEqual([
      'w1',
      'w2',
      'replacement of w1',
      'replacement of w2',
      'surge worker 1',
      'surge worker 2',
    ]);
    expect(cap.slots[cap.replacementOf(1)]!.node).toBe(w[1]);
    expect(new Set(cap.slots.map((s) => s.hostname)).size).toBe(6);
  });

  it('no surge workers without a node to copy', () => {
    const cap = new Capacity(model({ workers: [node('w1')] }), { count: 3, like: null });
    expect(cap.slots).toHaveLength(2);
  });

  it('a pod on a node that is not a worker is an error', () => {
    const m = model({ workers: [node('w1')], pods: [pod('p', 'cp1')] });
    expect(() => new Capacity(m, { count: 0, like: null })).toThrow(/cp1, not a worker/);
  });

  it("room is allocatable less the fixed requests and the pods' requests, to the last unit in each dimension", () => {
    const target = node('w1', { fixed: { cpu: 100, memory: 200, pods: 2 } });
    const resident = pod('resident', 'w1', { requests: needs(300, 300, 3) });
    // Left on w1: 600 cpu, 500 memory, 5 pod slots.
    const build = (r: Vec) => {
      const m = model({
        workers: [target, node('w2')],
        pods: [resident, pod('mover', 'w2', { requests: r })],
      });
      const cap = new Capacity(m, { count: 0, like: null });
      return where(cap, evict(cap, 1));
    };
    expect(build(needs(600, 500, 5))).toBe('w1');
    expect(build(needs(601, 500, 5))).toBe('short:cpu');
    expect(build(needs(600, 501, 5))).toBe('short:memory');
    expect(build(needs(600, 500, 6))).toBe('short:pods');
  });

  it('cordoned workers and replacements take no pod until activated; surge workers take pods from the start', () => {
    const w = [node('w1', { unschedulable: true }), node('w2'), node('w3')];
    const m = model({ workers: w, pods: [pod('p', 'w3')] });
    let cap = new Capacity(m, { count: 0, like: null });
    expect(where(cap, evict(cap, 0))).toBe('w2');
    cap.deactivate(1);
    expect(where(cap, cap.find(0))).toBe('short:cpu');
    cap.activate(cap.replacementOf(0));
    expect(where(cap, cap.find(0))).toBe('replacement of w1');

    cap = new Capacity(m, { count: 1, like: w[1]! });
    expect(where(cap, evict(cap, 0))).toBe('surge worker 1');
  });
});

describe('Capacity: preference order', () => {
  it('surge workers, then replacements, then the old workers drained last first', () => {
    const w = [node('w1'), node('w2'), node('w3'), node('w4')];
    const cap = new Capacity(model({ workers: w, pods: [pod('p', 'w1')] }), { count: 2, like: w[0]! });
    cap.deactivate(0);
    cap.unplace(0);
    for (let i = 0; i < 4; i++) cap.activate(cap.replacementOf(i));
    const seen: string[] = [];
    for (let r = cap.find(0); r.ok; r = cap.find(0)) {
      seen.push(cap.slots[r.slot]!.name);
      cap.deactivate(r.slot);
    }
    expect(seen).toEqual([
      'surge worker 1',
      'surge worker 2',
      'replacement of w1',
      'replacement of w2',
      'replacement of w3',
      'replacement of w4',
      'w4',
      'w3',
      'w2',
    ]);
  });

  it('across classes the pod takes the best node of all the classes it admits', () => {
    const inPool = (name: string, pool: string) => node(name, { labels: { [HOST]: name, pool } });
    const w = [inPool('w1', 'a'), inPool('w2', 'b'), inPool('w3', 'a')];
    const m = model({ workers: w, pods: [pod('p', 'w3'), pod('q', 'w1')] });
    let cap = new Capacity(m, { count: 0, like: null });
    // From w3: w2 (pool b) is drained after w1 (pool a).
    expect(where(cap, evict(cap, 0))).toBe('w2');
    // From w1: w3 is drained last.
    cap = new Capacity(m, { count: 0, like: null });
    expect(where(cap, evict(cap, 1))).toBe('w3');
    // A surge worker of pool b beats a replacement in pool a.
    cap = new Capacity(m, { count: 1, like: w[1]! });
    cap.activate(cap.replacementOf(0));
    expect(where(cap, evict(cap, 0))).toBe('surge worker 1');
    cap.deactivate(cap.n * 2);
    expect(where(cap, cap.find(0))).toBe('replacement of w1');
  });

  it('the old worker drained first is still a candidate when it alone has room', () => {
    const w = [node('w1'), node('w2')];
    const m = model({ workers: w, pods: [pod('p', 'w2', { requests: needs(900) })] });
    const cap = new Capacity(m, { count: 1, like: w[0]! });
    cap.deactivate(cap.n * 2);
    expect(where(cap, evict(cap, 0))).toBe('w1');
  });
});

describe('Capacity: tolerations and affinity (classesFor)', () => {
  const w = [
    node('w1', { labels: { [HOST]: 'w1', pool: 'db' }, taints: [dedicated] }),
    node('w2', { labels: { [HOST]: 'w2', pool: 'web' } }),
    node('w3', { labels: { [HOST]: 'w3', pool: 'web' } }),
    node('w4', { labels: { [HOST]: 'w4', pool: 'db' }, taints: [dedicated] }),
  ];
  const tolerant: Scheduling = { ...ANYWHERE, tolerations: [{ key: 'dedicated', operator: 'Exists' }] };
  const onlyDb: Scheduling = { ...tolerant, nodeSelector: { pool: 'db' } };
  const affinityWeb: Scheduling = {
    ...ANYWHERE,
    required: [[[{ key: 'pool', operator: 'In', values: ['web'] }]]],
  };
  const schedulings = [ANYWHERE, tolerant, onlyDb, affinityWeb];

  it('one class per shape of node, admitted by taints, node selector and required affinity', () => {
    const cap = new Capacity(model({ workers: w, schedulings }), { count: 0, like: null });
    const shapes = (s: number) => cap.classesFor(s).map((c) => c);
    expect(shapes(0)).toHaveLength(1);
    expect(shapes(1)).toHaveLength(2);
    expect(shapes(2)).toHaveLength(1);
    expect(shapes(3)).toEqual(shapes(0));
    expect(shapes(2)).not.toEqual(shapes(0));
    expect(shapes(1)).toEqual(expect.arrayContaining([...shapes(0), ...shapes(2)]));
  });

  it('a pod goes only where its rules admit, even past a node drained later', () => {
    const pods = [
      pod('plain', 'w2'),
      pod('tolerant', 'w2', { scheduling: 1 }),
      pod('db', 'w2', { scheduling: 2 }),
      pod('web', 'w4', { scheduling: 3, requests: needs(100) }),
    ];
    const m = model({ workers: w, pods, schedulings });
    const cap = new Capacity(m, { count: 0, like: null });
    cap.deactivate(1);
    cap.deactivate(3);
    for (const id of [0, 1, 2, 3]) cap.unplace(id);
    expect(where(cap, cap.find(0))).toBe('w3');
    expect(where(cap, cap.find(1))).toBe('w3');
    expect(where(cap, cap.find(2))).toBe('w1');
    expect(where(cap, cap.find(3))).toBe('w3');
  });

  it('room on nodes the pod does not admit does not count', () => {
    const big = pod('big', 'w3', { requests: needs(1000) });
    const m = model({ workers: w, pods: [pod('filler', 'w2', { requests: needs(500) }), big], schedulings });
    const cap = new Capacity(m, { count: 0, like: null });
    // w1 and w4 are empty, but tainted.
    expect(where(cap, evict(cap, 1))).toBe('short:cpu');
  });
});

describe('Capacity: shortages', () => {
  const two = (a: Vec, b: Vec, r: Vec, labelled = false) => {
    const lab = (name: string) => (labelled ? { labels: { [HOST]: name, pool: name } } : {});
    const w = [
      node('w1', { allocatable: a, ...lab('w1') }),
      node('w2', { allocatable: b, ...lab('w2') }),
      node('w3'),
    ];
    const cap = new Capacity(model({ workers: w, pods: [pod('p', 'w3', { requests: r })] }), {
      count: 0,
      like: null,
    });
    return where(cap, evict(cap, 0));
  };

  it('names the one resource no admitted node has enough of', () => {
    expect(two(needs(100, 100, 5), needs(200, 100, 5), needs(300, 50))).toBe('short:cpu');
    expect(two(needs(500, 10, 5), needs(500, 20, 5), needs(300, 50))).toBe('short:memory');
    expect(two(needs(500, 100, 0), needs(500, 100, 0), needs(300, 50))).toBe('short:pods');
  });

  it('names fragmentation when each resource is somewhere but not together, within a class or across classes', () => {
    for (const labelled of [false, true]) {
      expect(two(needs(500, 10, 5), needs(100, 100, 5), needs(300, 50), labelled)).toBe(
        'short:fragmentation',
      );
      expect(two(needs(500, 100, 0), needs(100, 100, 5), needs(300, 50), labelled)).toBe(
        'short:fragmentation',
      );
      expect(two(needs(100, 100, 5), needs(500, 10, 5), needs(300, 50), labelled)).toBe(
        'short:fragmentation',
      );
    }
  });

  it('inactive nodes do not count', () => {
    const w = [node('w1'), node('w2', { allocatable: needs(100, 1000, 10) }), node('w3')];
    const cap = new Capacity(model({ workers: w, pods: [pod('p', 'w3', { requests: needs(300) })] }), {
      count: 0,
      like: null,
    });
    cap.deactivate(0);
    expect(where(cap, evict(cap, 0))).toBe('short:cpu');
    cap.activate(0);
    expect(where(cap, cap.find(0))).toBe('w1');
  });
});

describe('Capacity: hard spreading', () => {
  const spread = (group: string, topologyKey: string, maxSkew: number): SpreadRule[] => [
    { group, topologyKey, maxSkew },
  ];

  it('anti-affinity: one pod of the group per hostname; a replacement is a hostname of its own', () => {
    const w = [node('w1'), node('w2'), node('w3')];
    const anti = spread('g', HOST, 0);
    const m = model({
      workers: w,
      pods: [pod('a', 'w3', { spread: anti }), pod('b', 'w2', { spread: anti })],
    });
    let cap = new Capacity(m, { count: 0, like: null });
    expect(where(cap, evict(cap, 1))).toBe('w1');
    cap = new Capacity(m, { count: 0, like: null });
    cap.activate(cap.replacementOf(2));
    expect(where(cap, evict(cap, 1))).toBe('replacement of w3');
  });

  it('names spread when the only room is on nodes the rule excludes', () => {
    const w = [node('w1'), node('w2')];
    const anti = spread('g', HOST, 0);
    const m = model({
      workers: w,
      pods: [pod('a', 'w1', { spread: anti }), pod('b', 'w2', { spread: anti })],
    });
    const cap = new Capacity(m, { count: 0, like: null });
    expect(where(cap, evict(cap, 1))).toBe('short:spread');
    // A pod of another group is not held back by it.
    const other = cap.addPod(pod('c', 'w2', { spread: spread('h', HOST, 0) }));
    expect(where(cap, cap.find(other))).toBe('w1');
  });

  it('topology spread caps a domain at ⌊pods ÷ domains⌋ + maxSkew', () => {
    const w = [node('w1'), node('w2'), node('w3'), node('w4')];
    const at = (maxSkew: number) => {
      const s = spread('g', HOST, maxSkew);
      const m = model({ workers: w, pods: [pod('a', 'w4', { spread: s }), pod('b', 'w1', { spread: s })] });
      const cap = new Capacity(m, { count: 0, like: null });
      return where(cap, evict(cap, 1));
    };
    // 2 pods over 8 hostnames (workers and replacements): ⌊2/8⌋ + maxSkew per hostname.
    expect(at(1)).toBe('w3');
    expect(at(2)).toBe('w4');
  });

  it('counts domains of the topology key; a node without the key is no candidate', () => {
    const z = (name: string, zone?: string, unschedulable = false) =>
      node(name, { labels: zone ? { [HOST]: name, zone } : { [HOST]: name }, unschedulable });
    const w = [z('w1', 'a'), z('w2', 'a'), z('w3', 'b'), z('w4', 'b', true), z('w5')];
    const s = spread('g', 'zone', 1);
    const pods = [
      pod('p1', 'w1', { spread: s }),
      pod('p2', 'w2', { spread: s }),
      pod('p3', 'w3', { spread: s }),
      pod('p4', 'w3', { spread: s }),
    ];
    // 4 pods over zones a and b: 3 per zone. w5 (no zone) is drained last, so tried first; w4 is cordoned.
    const cap = new Capacity(model({ workers: w, pods }), { count: 0, like: null });
    expect(where(cap, evict(cap, 2))).toBe('w2');
    cap.unplace(3);
    cap.put(2, 1, 1);
    expect(where(cap, cap.find(3))).toBe('short:spread');
  });

  it('placing and unplacing keep the counts', () => {
    const w = [node('w1'), node('w2'), node('w3')];
    const anti = spread('g', HOST, 0);
    const m = model({
      workers: w,
      pods: [pod('a', 'w3', { spread: anti }), pod('b', 'w2', { spread: anti })],
    });
    const cap = new Capacity(m, { count: 0, like: null });
    cap.unplace(0);
    // w3 is free of the group now.
    expect(where(cap, cap.find(0))).toBe('w3');
    cap.put(0, 0, 1);
    cap.unplace(1);
    expect(where(cap, cap.find(1))).toBe('w3');
  });
});

/** What rollback must restore. */
function state(cap: Capacity) {
  return structuredClone({
    free: cap.free,
    active: cap.active,
    podsOn: cap.podsOn,
    podSlot: cap.podSlot,
    received: cap.received,
  });
}

describe('Capacity: journal', () => {
  const w = [node('w1'), node('w2'), node('w3')];
  const anti: SpreadRule[] = [{ group: 'g', topologyKey: HOST, maxSkew: 0 }];
  const pods = [
    pod('a', 'w1', { spread: anti }),
    pod('b', 'w2', { spread: anti, requests: needs(200, 20, 1) }),
    pod('c', 'w2', { requests: needs(300, 30, 2) }),
    pod('d', 'w3'),
  ];
  const build = () => new Capacity(model({ workers: w, pods }), { count: 1, like: w[0]! });

  it('rollback undoes unplace, put, activate and deactivate, in any mix', () => {
    const cap = build();
    cap.put(cap.addPod(pod('x', 'w1')), 0, 1);
    cap.commit();
    const before = state(cap);
    const m = cap.mark();
    cap.deactivate(1);
    cap.unplace(1);
    cap.unplace(2);
    cap.activate(cap.replacementOf(1));
    cap.put(1, cap.replacementOf(1), 4);
    cap.put(2, 2, 4);
    cap.unplace(0);
    cap.deactivate(3 * 2);
    expect(state(cap)).not.toEqual(before);
    cap.rollback(m);
    expect(state(cap)).toEqual(before);
    // The spread counts are back too: b, once more off w2, cannot join a on w1.
    cap.deactivate(2);
    cap.deactivate(3 * 2);
    expect(where(cap, evict(cap, 1))).toBe('short:spread');
  });

  it('rollback to a mark keeps what came before it; commit forgets the journal', () => {
    const cap = build();
    cap.deactivate(2);
    const afterFirst = state(cap);
    const m = cap.mark();
    cap.deactivate(1);
    cap.rollback(m);
    expect(state(cap)).toEqual(afterFirst);
    cap.deactivate(1);
    cap.commit();
    const committed = state(cap);
    cap.rollback(0);
    expect(state(cap)).toEqual(committed);
  });

  it('activating an active slot or deactivating an inactive one is not journalled', () => {
    const cap = build();
    const m = cap.mark();
    cap.activate(0);
    cap.deactivate(cap.replacementOf(0));
    expect(cap.mark()).toBe(m);
    cap.rollback(m);
    expect(cap.active[0]).toBe(true);
    expect(cap.active[cap.replacementOf(0)]).toBe(false);
  });

  it('unplace frees the room and rollback puts the pod back where it was in its node list', () => {
    const cap = build();
    const before = state(cap);
    cap.unplace(1);
    expect(cap.podSlot[1]).toBe(-1);
    expect(cap.podsOn[1]).toEqual([2]);
    expect(cap.free[1]).toEqual({
      cpu: before.free[1]!.cpu + 200,
      memory: before.free[1]!.memory + 20,
      pods: before.free[1]!.pods + 1,
    });
    cap.rollback(0);
    expect(state(cap)).toEqual(before);
  });

  it('put takes the room, records the batch, and its rollback restores the batch before', () => {
    const cap = build();
    cap.unplace(3);
    cap.put(3, 0, 2);
    cap.commit();
    const before = state(cap);
    cap.unplace(2);
    cap.put(2, 0, 5);
    expect(cap.received[0]).toBe(5);
    expect(cap.podsOn[0]).toEqual([0, 3, 2]);
    expect(cap.free[0]).toEqual({
      cpu: before.free[0]!.cpu - 300,
      memory: before.free[0]!.memory - 30,
      pods: before.free[0]!.pods - 2,
    });
    cap.rollback(0);
    expect(cap.received[0]).toBe(2);
    expect(state(cap)).toEqual(before);
  });

  it('addPod adds an unplaced pod that find can place', () => {
    const cap = build();
    const p = pod('extra', 'w1', { requests: needs(100) });
    const id = cap.addPod(p);
    expect(cap.pods[id]).toBe(p);
    expect(id).toBe(pods.length);
    expect(cap.podSlot[id]).toBe(-1);
    expect(where(cap, cap.find(id))).toBe('surge worker 1');
    expect(cap.addPod(pod('more', 'w1'))).toBe(id + 1);
  });
});

// ---- against a brute force ---------------------------------------------------------------------

/** A small linear congruential generator: reproducible runs. */
function random(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.floor((s / 2 ** 32) * n);
  };
}

/** The doc comment's rule, by scanning every slot: the first admitted, active node with room in preference order. */
function bruteFind(cap: Capacity, m: ClusterModel, id: number): PlaceResult {
  const p = cap.pods[id]!;
  const n = cap.n;
  const order = [
    ...cap.slots.map((_, i) => i).filter((i) => i >= 2 * n),
    ...cap.slots.map((_, i) => i).filter((i) => i >= n && i < 2 * n),
    ...cap.slots
      .map((_, i) => i)
      .filter((i) => i < n)
      .reverse(),
  ];
  const s = m.schedulings[p.scheduling]!;
  const candidates = order.filter(
    (i) => cap.active[i] && admits(s, shapeLabels(cap.slots[i]!.node), cap.slots[i]!.node.taints),
  );
  const dims: Resource[] = ['cpu', 'memory', 'pods'];
  const fits = (i: number) => dims.every((d) => cap.free[i]![d] >= p.requests[d]);
  const slot = candidates.find(fits);
  if (slot !== undefined) return { ok: true, slot };
  for (const d of dims)
    if (candidates.every((i) => cap.free[i]![d] < p.requests[d])) return { ok: false, shortage: d };
  return { ok: false, shortage: 'fragmentation' };
}

describe('Capacity: the segment trees agree with a scan of every node', () => {
  it('over random clusters and random drains', () => {
    const taint: Taint = { key: 'dedicated', value: 'x', effect: 'NoSchedule' };
    const schedulings: Scheduling[] = [
      ANYWHERE,
      { ...ANYWHERE, nodeSelector: { pool: 'p0' } },
      { ...ANYWHERE, tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
      { ...ANYWHERE, required: [[[{ key: 'pool', operator: 'NotIn', values: ['p1'] }]]] },
    ];
    let checked = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = random(seed);
      const workers = Array.from({ length: 1 + rnd(7) }, (_, i) => {
        const pool = rnd(3);
        return node(`w${i + 1}`, {
          labels: { [HOST]: `w${i + 1}`, pool: `p${pool}` },
          taints: pool === 2 ? [taint] : [],
          allocatable: needs(200 + 100 * rnd(10), 20 + 10 * rnd(10), 2 + rnd(6)),
          fixed: needs(50 * rnd(3), 5 * rnd(3), rnd(2)),
          unschedulable: rnd(8) === 0,
        });
      });
      const pods: ModelPod[] = [];
      for (const [i, wk] of workers.entries())
        for (let k = rnd(3); k > 0; k--)
          pods.push(
            pod(`p${i}-${k}`, wk.name, {
              requests: needs(50 * (1 + rnd(4)), 5 * (1 + rnd(4)), 1),
              scheduling: rnd(schedulings.length),
            }),
          );
      const m = model({ workers, pods, schedulings });
      const cap = new Capacity(m, { count: rnd(3), like: workers[rnd(workers.length)]! });
      for (let step = 0; step < 40; step++) {
        const slot = rnd(cap.slots.length);
        const op = rnd(4);
        const journal = cap.mark();
        const before = state(cap);
        if (op === 0) cap.activate(slot);
        else if (op === 1) cap.deactivate(slot);
        else if (cap.pods.length > 0) {
          const id = rnd(cap.pods.length);
          if (cap.podSlot[id]! >= 0) cap.unplace(id);
          const got = cap.find(id);
          expect(got, `seed ${seed} step ${step}`).toEqual(bruteFind(cap, m, id));
          checked++;
          if (got.ok) cap.put(id, got.slot, step);
        }
        if (rnd(5) === 0) {
          cap.rollback(journal);
          expect(state(cap)).toEqual(before);
        } else cap.commit();
      }
    }
    expect(checked).toBeGreaterThan(300);
  });
});
