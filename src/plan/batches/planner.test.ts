import { describe, expect, it } from 'vitest';
import { makespan } from './estimate.js';
import { parseMaxUnavailable, resolveMaxUnavailable } from './limits.js';
import type { ClusterModel, ModelPod } from './model.js';
import { type PlannerOptions, planWorkerBatches } from './planner.js';
import { ANYWHERE, deployment, model, pdb, pod, syntheticModel, worker } from './testing.js';
import { timingFor } from './timing.js';

const GiB = 2 ** 30;
const timing = timingFor('exec');

function plan(m: ClusterModel, o: Partial<PlannerOptions> = {}) {
  return planWorkerBatches(m, {
    strategy: 'surge',
    maxUnavailable: 100,
    surgeNodes: 0,
    surgeReplicas: false,
    timing,
    ...o,
  });
}

const names = (r: ReturnType<typeof plan>) => r.batches.map((b) => b.nodes);
const five = ['w1', 'w2', 'w3', 'w4', 'w5'].map((n) => worker(n));

describe('PodDisruptionBudgets', () => {
  it('two workers with pods of a budget that allows one disruption never share a batch; the batch says which budget bounded it', () => {
    const m = model({
      workers: five.slice(0, 3),
      pdbs: [pdb('web', 1)],
      pods: [pod('web-1', 'w1', { pdbs: [0] }), pod('web-2', 'w2', { pdbs: [0] }), pod('db-1', 'w3')],
    });
    const r = plan(m);
    expect(names(r)).toEqual([['w1', 'w3'], ['w2']]);
    expect(r.batches[0]!.bound).toEqual({ kind: 'pdb', pdb: 'default/web', allowed: 1 });
    expect(r.batches[1]!.bound).toEqual({ kind: 'nodes-left' });
  });

  it('counts the pods of one budget on every node of the batch against what it allows', () => {
    const pods = [
      pod('web-1', 'w1', { pdbs: [0] }),
      pod('web-2', 'w2', { pdbs: [0] }),
      pod('web-3', 'w3', { pdbs: [0] }),
    ];
    expect(names(plan(model({ workers: five.slice(0, 3), pdbs: [pdb('web', 2)], pods })))).toEqual([
      ['w1', 'w2'],
      ['w3'],
    ]);
    expect(names(plan(model({ workers: five.slice(0, 3), pdbs: [pdb('web', 3)], pods })))).toEqual([
      ['w1', 'w2', 'w3'],
    ]);
  });

  it('a worker with more pods of a budget than it allows drains round by round; others may share those rounds', () => {
    const m = model({
      workers: five.slice(0, 3),
      pdbs: [pdb('web', 1), pdb('api', 1)],
      pods: [
        pod('web-1', 'w1', { pdbs: [0] }),
        pod('web-2', 'w1', { pdbs: [0] }),
        pod('api-1', 'w2', { pdbs: [1] }),
        pod('api-2', 'w2', { pdbs: [1] }),
        pod('web-3', 'w3', { pdbs: [0] }),
      ],
    });
    const r = plan(m);
    expect(names(r)).toEqual([['w1', 'w2'], ['w3']]);
    expect(r.batches[0]!.rounds).toBe(2);
    expect(r.batches[1]!.rounds).toBe(1);
  });

  it('a budget that allows no disruption drains its worker alone and is listed as blocking, with the fix', () => {
    const checkout = deployment('shop', 'checkout', 2);
    const m = model({
      workers: five.slice(0, 3),
      pdbs: [
        pdb('checkout', 0, {
          namespace: 'shop',
          rule: 'minAvailable 2',
          allowedWithExtraReplica: 1,
          workload: checkout,
        }),
      ],
      pods: [
        pod('checkout-a', 'w1', { namespace: 'shop', owner: checkout, pdbs: [0] }),
        pod('other', 'w2'),
        pod('checkout-b', 'w3', { namespace: 'shop', owner: checkout, pdbs: [0] }),
      ],
    });
    const r = plan(m);
    expect(r.batches[0]).toMatchObject({ nodes: ['w1'], bound: { kind: 'blocked', pdb: 'shop/checkout' } });
    expect(r.blocked).toEqual([
      expect.objectContaining({
        pdb: 'shop/checkout',
        nodes: ['w1', 'w3'],
        surgeable: 'Deployment shop/checkout',
        fix: expect.stringContaining('--surge-replicas'),
      }),
    ]);
    expect(r.surged).toEqual([]);
  });

  it('--surge-replicas: one more replica makes room; scaled up before its first batch, restored after its last', () => {
    const checkout = deployment('shop', 'checkout', 2);
    const m = model({
      workers: five.slice(0, 3),
      pdbs: [pdb('checkout', 0, { namespace: 'shop', allowedWithExtraReplica: 1, workload: checkout })],
      pods: [
        pod('checkout-a', 'w1', { namespace: 'shop', owner: checkout, pdbs: [0] }),
        pod('other', 'w2'),
        pod('checkout-b', 'w3', { namespace: 'shop', owner: checkout, pdbs: [0] }),
      ],
    });
    const r = plan(m, { surgeReplicas: true });
    expect(r.blocked).toEqual([]);
    expect(r.surged).toEqual([
      {
        workload: checkout,
        pdb: 'shop/checkout',
        from: 2,
        to: 3,
        firstBatch: 1,
        lastBatch: r.batches.length,
      },
    ]);
    expect(r.batches[0]!.scaleUp).toEqual(['Deployment shop/checkout']);
    expect(r.batches.at(-1)!.restore).toEqual(['Deployment shop/checkout']);
    // Now it allows one disruption: its two workers still never drain together.
    expect(r.batches.every((b) => !(b.nodes.includes('w1') && b.nodes.includes('w3')))).toBe(true);
  });

  it('--surge-replicas cannot help when no worker has room for the extra replica', () => {
    const checkout = deployment('shop', 'checkout', 2);
    const big = { cpu: 3900, memory: GiB, pods: 1 };
    const m = model({
      workers: five.slice(0, 2),
      pdbs: [pdb('checkout', 0, { namespace: 'shop', allowedWithExtraReplica: 1, workload: checkout })],
      pods: [
        pod('checkout-a', 'w1', { namespace: 'shop', owner: checkout, pdbs: [0], requests: big }),
        pod('checkout-b', 'w2', { namespace: 'shop', owner: checkout, pdbs: [0], requests: big }),
      ],
    });
    const r = plan(m, { surgeReplicas: true, strategy: 'replace' });
    expect(r.surged).toEqual([]);
    expect(r.blocked[0]?.fix).toContain(
      'no worker has room for one more replica of Deployment shop/checkout',
    );
  });
});

describe('capacity', () => {
  const tight = (n: string) => worker(n, { allocatable: { cpu: 4000, memory: 8 * GiB, pods: 110 } });
  const half = { cpu: 2000, memory: 4 * GiB, pods: 1 };

  it('a batch holds only workers whose pods fit on the workers that stay (replace: no replacement yet)', () => {
    // Four workers, each half full: draining two leaves exactly the room for their pods.
    const m = model({
      workers: ['a', 'b', 'c', 'd'].map(tight),
      pods: ['a', 'b', 'c', 'd'].map((n) => pod(`p-${n}`, n, { requests: half })),
    });
    const r = plan(m, { strategy: 'replace' });
    expect(names(r)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(r.batches[0]!.bound.kind === 'placement' || r.batches[0]!.bound.kind === 'capacity').toBe(true);
    expect(r.outages).toEqual([]);
  });

  it('a pool without capacity: its pods cannot move while the pool has no room, and the batch says which resource', () => {
    const gpu = (n: string) =>
      worker(n, { labels: { pool: 'gpu' }, allocatable: { cpu: 4000, memory: 8 * GiB, pods: 110 } });
    const m = model({
      workers: [gpu('g1'), gpu('g2'), worker('x1')],
      schedulings: [ANYWHERE, { ...ANYWHERE, nodeSelector: { pool: 'gpu' } }],
      pods: [
        pod('train-1', 'g1', { scheduling: 1, requests: { cpu: 3000, memory: 2 * GiB, pods: 1 } }),
        pod('train-2', 'g2', { scheduling: 1, requests: { cpu: 3000, memory: 2 * GiB, pods: 1 } }),
      ],
    });
    const r = plan(m, { strategy: 'replace' });
    // g1's pod fits nowhere (g2 is full, x1 is not in the pool): it waits for g1's replacement,
    // which then takes g2's pod: one outage, and g2 in a batch of its own.
    expect(names(r)).toEqual([['g1', 'x1'], ['g2']]);
    expect(r.outages.map((o) => [o.name, o.reason, o.node])).toEqual([['train', 'no-room', 'g1']]);
    expect(r.outages[0]!.seconds).toBe(
      timing.decommission + timing.provision + timing.nodeReady + timing.podReady,
    );
    expect(r.batches[0]!.bound).toEqual({ kind: 'capacity', shortage: 'cpu', pod: 'default/train-2' });
    // With surge, each worker's replacement is up before it drains: its pod moves there.
    const s = plan(m, { strategy: 'surge' });
    expect(s.outages).toEqual([]);
  });

  it('taints keep pods off nodes they do not tolerate; tolerations let them on', () => {
    const tainted = worker('t1', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    const tolerant = {
      ...ANYWHERE,
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }],
    };
    const m = model({
      workers: [worker('a'), tainted],
      schedulings: [ANYWHERE, tolerant],
      pods: [pod('web', 'a'), pod('db', 'a', { scheduling: 1 })],
    });
    const r = plan(m, { strategy: 'replace' });
    // a's pods: db may go to t1; web may not (no other node): web waits for a's replacement.
    expect(r.outages.map((o) => [o.name, o.reason])).toEqual([['web', 'no-room']]);
  });

  it('hard spreading: a pod does not go where its anti-affinity group already runs', () => {
    const spread = [{ group: 'web', topologyKey: 'kubernetes.io/hostname', maxSkew: 0 }];
    const m = model({
      workers: ['a', 'b', 'c'].map((n) => worker(n)),
      pods: ['a', 'b', 'c'].map((n) => pod(`web-${n}`, n, { spread })),
    });
    // Every other node runs one already: with replace, the first pod has nowhere to go until its
    // node's replacement is up; the next ones go to the replacements, one worker at a time.
    const r = plan(m, { strategy: 'replace' });
    expect(r.outages.map((o) => [o.node, o.reason, o.detail])).toEqual([
      ['a', 'no-room', 'no node that stays has room for default/web-a (short of spread)'],
    ]);
    expect(names(r)).toEqual([['a'], ['b'], ['c']]);
    expect(r.batches[0]!.bound).toEqual({ kind: 'capacity', shortage: 'spread', pod: 'default/web-b' });
    const s = plan(m, { strategy: 'surge' });
    expect(s.outages).toEqual([]);
    expect(names(s)).toEqual([['a', 'b', 'c']]);
  });

  it('--surge N adds room up front, so batches grow', () => {
    const workers = ['a', 'b', 'c', 'd', 'e', 'f'].map(tight);
    const m = model({
      workers,
      pods: workers.map((w) => pod(`p-${w.name}`, w.name, { requests: { ...half, cpu: 3000 } })),
    });
    const without = plan(m, { strategy: 'replace' });
    const withSurge = plan(m, { strategy: 'replace', surgeNodes: 2 });
    expect(withSurge.batches.length).toBeLessThan(without.batches.length);
    expect(Math.max(...withSurge.batches.map((b) => b.nodes.length))).toBeGreaterThan(
      Math.max(...without.batches.map((b) => b.nodes.length)),
    );
    expect(withSurge.surge).toMatchObject({ nodes: 2, pool: ['a', 'b', 'c', 'd', 'e', 'f'] });
  });
});

describe('--max-unavailable', () => {
  it('caps every batch, and says so', () => {
    const workers = Array.from({ length: 10 }, (_, i) => worker(`w${i}`));
    const r = plan(model({ workers }), { maxUnavailable: 3 });
    expect(r.batches.map((b) => b.nodes.length)).toEqual([3, 3, 3, 1]);
    expect(r.batches[0]!.bound).toEqual({ kind: 'max-unavailable', max: 3 });
  });

  it('reads N or P%, and refuses anything else as bad usage', () => {
    expect(parseMaxUnavailable('3')).toEqual({ kind: 'count', nodes: 3 });
    expect(parseMaxUnavailable('25%')).toEqual({ kind: 'percent', percent: 25 });
    for (const bad of ['0', '0%', '101%', '-2', '2.5', 'x', '%'])
      expect(() => parseMaxUnavailable(bad), bad).toThrow(/--max-unavailable must be/);
  });

  it('a percentage of the workers, rounded down, at least one', () => {
    expect(resolveMaxUnavailable({ kind: 'percent', percent: 25 }, 10)).toBe(2);
    expect(resolveMaxUnavailable({ kind: 'percent', percent: 1 }, 10)).toBe(1);
    expect(resolveMaxUnavailable({ kind: 'percent', percent: 100 }, 7)).toBe(7);
    expect(resolveMaxUnavailable({ kind: 'count', nodes: 4 }, 2)).toBe(4);
  });
});

describe('outages, listed, never hidden', () => {
  it('single replicas, bare pods, node-local volumes and pins by name, with the time each is expected to last', () => {
    const one = deployment('apps', 'wiki', 1);
    const sts = { kind: 'StatefulSet', namespace: 'db', name: 'solo', replicas: 1 };
    const pods: ModelPod[] = [
      pod('wiki-x', 'w1', { namespace: 'apps', owner: one }),
      pod('solo-0', 'w1', { namespace: 'db', owner: sts, graceSeconds: 60 }),
      pod('debug', 'w2', { owner: null }),
      pod('pg-0', 'w2', { pin: { kind: 'local-volume', volume: 'local-pv-1' } }),
      pod('pinned', 'w2', {
        pin: { kind: 'node-name', field: 'spec.nodeSelector["kubernetes.io/hostname"]' },
      }),
    ];
    const r = plan(model({ workers: five.slice(0, 3), pods }));
    const seen = r.outages.map((o) => [o.kind, `${o.namespace}/${o.name}`, o.reason, o.seconds]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['Deployment', 'apps/wiki', 'single-replica', timing.podReady],
        ['StatefulSet', 'db/solo', 'single-replica', 60 + timing.podReady],
        ['Pod', 'default/debug', 'bare-pod', null],
        ['Deployment', 'default/pg', 'local-volume', null],
        ['Deployment', 'default/pinned', 'node-name', null],
      ]),
    );
    expect(r.outages).toHaveLength(5);
    expect(r.outages.find((o) => o.reason === 'local-volume')?.detail).toContain('local-pv-1');
  });

  it('a multi-replica workload under a budget is no outage', () => {
    const m = model({
      workers: five.slice(0, 3),
      pdbs: [pdb('web', 1)],
      pods: [pod('web-1', 'w1', { pdbs: [0] }), pod('web-2', 'w2', { pdbs: [0] })],
    });
    expect(plan(m).outages).toEqual([]);
  });
});

describe('the lower bound', () => {
  it('is never above the estimate, whatever the cluster, strategy or cap', () => {
    for (const seed of [1, 2, 3])
      for (const strategy of ['surge', 'replace'] as const)
        for (const cap of [1, 7, 40]) {
          const m = syntheticModel({ workers: 60, podsPerWorker: 12, seed });
          const r = plan(m, { strategy, maxUnavailable: cap, surgeNodes: seed - 1 });
          const t = makespan(r, { timing, strategy, maxUnavailable: cap, workers: 60 });
          expect(t.lowerBoundSeconds, `seed ${seed} ${strategy} cap ${cap}`).toBeLessThanOrEqual(
            t.estimateSeconds,
          );
          expect(t.lowerBoundSeconds).toBeGreaterThan(0);
          expect(t.estimateSeconds).toBe(t.surgeSeconds + t.batchSeconds.reduce((a, b) => a + b, 0));
        }
  });

  it('names its largest term: the most disruption-limited budget, the cap, or the capacity', () => {
    const pods = ['a', 'b', 'c', 'd'].map((n, i) => pod(`web-${i}`, n, { pdbs: [0] }));
    const m = model({ workers: ['a', 'b', 'c', 'd'].map((n) => worker(n)), pdbs: [pdb('web', 1)], pods });
    const r = plan(m);
    const t = makespan(r, { timing, strategy: 'surge', maxUnavailable: 100, workers: 4 });
    expect(t.lowerBound[0]).toMatchObject({
      kind: 'pdb',
      pdb: 'default/web',
      pods: 4,
      allowed: 1,
      rounds: 4,
    });
    // At one round a batch, four batches of one: under that rule the bound is the estimate.
    expect(t.lowerBound[0]).toMatchObject({ batches: 4 });
    expect(t.lowerBoundSeconds).toBe(t.estimateSeconds);
    // At four rounds a batch, one batch of four rounds: the bound is one batch's work plus four rounds.
    const one = plan(m, { roundsPerBatch: 4 });
    expect(names(one)).toEqual([['a', 'b', 'c', 'd']]);
    const t4 = makespan(one, { timing, strategy: 'surge', maxUnavailable: 100, workers: 4 });
    expect(t4.lowerBound[0]).toMatchObject({ kind: 'pdb', rounds: 4, batches: 1 });
    expect(t4.lowerBoundSeconds).toBe(t4.estimateSeconds);
    expect(t4.estimateSeconds).toBeLessThan(t.estimateSeconds);
    const capped = makespan(plan(model({ workers: m.workers }), { maxUnavailable: 1 }), {
      timing,
      strategy: 'surge',
      maxUnavailable: 1,
      workers: 4,
    });
    expect(capped.lowerBound[0]).toMatchObject({ kind: 'max-unavailable', batches: 4 });
    // One batch of one worker per cap: the bound is the estimate.
    expect(capped.lowerBoundSeconds).toBe(capped.estimateSeconds);
  });
});
