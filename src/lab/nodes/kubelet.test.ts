import { describe, expect, it } from 'vitest';
import { RUNTIME_HTTP, RUNTIME_LABEL } from './canary.js';
import { finishTime, kubeletActions } from './kubelet.js';
import { node, pod, world } from './testing.js';
import { type Action, DEFAULT_TIMINGS, NORMAL, newMemory, type Timings } from './world.js';

const t: Timings = {
  ...DEFAULT_TIMINGS,
  podStartDelayMs: 1000,
  nodeReadyDelayMs: 500,
  terminationDelayMs: 200,
  leaseRenewMs: 2000,
};
const patches = (a: Action[]) => a.filter((x): x is Extract<Action, { kind: 'patch' }> => x.kind === 'patch');

describe('kubelet: node and lease', () => {
  it('creates its Lease, then renews it no more often than asked', () => {
    const mem = newMemory();
    const n = node('w1');
    const w = world({ nodes: [n] });
    const first = kubeletActions(n, w, mem, t, NORMAL);
    expect(first[0]).toMatchObject({
      kind: 'create',
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      body: { metadata: { name: 'w1' }, spec: { holderIdentity: 'w1', leaseDurationSeconds: 40 } },
    });
    const lease = (first[0] as Extract<Action, { kind: 'create' }>).body;
    const soon = kubeletActions(n, world({ nodes: [n], leases: [lease], now: w.now + 1000 }), mem, t, NORMAL);
    expect(soon.some((a) => 'path' in a && a.path.includes('/leases/'))).toBe(false);
    const later = kubeletActions(
      n,
      world({ nodes: [n], leases: [lease], now: w.now + 2500 }),
      mem,
      t,
      NORMAL,
    );
    expect(later).toContainEqual(
      expect.objectContaining({
        kind: 'patch',
        path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/w1',
      }),
    );
  });

  it('reports Ready after the ready delay, or never under the fault', () => {
    const mem = newMemory();
    const n = node('w1');
    const w0 = world({ nodes: [n] });
    const ready = (a: Action[]) =>
      patches(a).find((p) => p.path === '/api/v1/nodes/w1/status')?.patch as
        | { status: { conditions: { type: string; status: string }[] } }
        | undefined;
    expect(
      ready(kubeletActions(n, w0, mem, t, NORMAL))?.status.conditions.find((c) => c.type === 'Ready')?.status,
    ).toBe('False');
    const later = { ...w0, now: w0.now + 600 };
    expect(
      ready(kubeletActions(n, later, mem, t, NORMAL))?.status.conditions.find((c) => c.type === 'Ready')
        ?.status,
    ).toBe('True');
    const mem2 = newMemory();
    kubeletActions(n, w0, mem2, t, { ...NORMAL, neverReady: true });
    const never = kubeletActions(n, { ...w0, now: w0.now + 60_000 }, mem2, t, {
      ...NORMAL,
      neverReady: true,
    });
    expect(ready(never)?.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
    });
  });

  it('does nothing when its kubelet is stopped', () => {
    expect(kubeletActions(node('w1'), world(), newMemory(), t, { ...NORMAL, kubeletStopped: true })).toEqual(
      [],
    );
  });
});

describe('kubelet: pods', () => {
  const n = node('w1', { ready: true, podCIDR: '10.244.3.0/24', ip: '127.0.30.21' });

  it('starts a bound pod after the start delay, with an IP from the pod CIDR', () => {
    const mem = newMemory();
    const p = pod('web-1', { node: 'w1' });
    const w0 = world({ nodes: [n], pods: [p] });
    expect(patches(kubeletActions(n, w0, mem, t, NORMAL)).filter((a) => a.path.includes('/pods/'))).toEqual(
      [],
    );
    const started = patches(kubeletActions(n, { ...w0, now: w0.now + 1000 }, mem, t, NORMAL)).find(
      (a) => a.path === '/api/v1/namespaces/default/pods/web-1/status',
    );
    expect(started?.patch).toMatchObject({
      status: {
        phase: 'Running',
        hostIP: '127.0.30.21',
        podIP: '10.244.3.2',
        containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }],
      },
    });
    expect(
      (started!.patch as { status: { conditions: { type: string; status: string }[] } }).status.conditions,
    ).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
  });

  it('starts only host-network pods while the pod network is down', () => {
    const mem = newMemory();
    const plain = pod('a', { node: 'w1' });
    const host = pod('b', { node: 'w1', spec: { hostNetwork: true } });
    const b = { ...NORMAL, neverReady: true };
    const w0 = world({ nodes: [n], pods: [plain, host] });
    kubeletActions(n, w0, mem, t, b);
    const started = patches(kubeletActions(n, { ...w0, now: w0.now + 5000 }, mem, t, b)).filter((a) =>
      a.path.includes('/pods/'),
    );
    expect(started.map((a) => a.path)).toEqual(['/api/v1/namespaces/default/pods/b/status']);
    expect(started[0]!.patch).toMatchObject({ status: { podIP: '127.0.30.21' } });
  });

  it('finishes a terminating pod after the termination delay, never after its grace, slow drain taking the grace', () => {
    const seen = Date.parse('2026-01-01T00:10:00Z');
    const p = pod('x', { node: 'w1', phase: 'Running', deletionTimestamp: '2026-01-01T00:10:30Z' });
    expect(finishTime(p, seen, t, NORMAL)).toBe(seen + 200);
    expect(finishTime(p, seen, { ...t, terminationDelayMs: 60_000 }, NORMAL)).toBe(seen + 30_000);
    expect(finishTime(p, seen, t, { ...NORMAL, slowDrain: {} })).toBe(seen + 30_000);
    expect(finishTime(p, seen, t, { ...NORMAL, slowDrain: { graceSeconds: 5 } })).toBe(seen + 5_000);
    const mem = newMemory();
    const w0 = world({ nodes: [n], pods: [p], now: seen });
    expect(kubeletActions(n, w0, mem, t, NORMAL).some((a) => a.kind === 'delete')).toBe(false);
    const done = kubeletActions(n, { ...w0, now: seen + 250 }, mem, t, NORMAL).find(
      (a) => a.kind === 'delete',
    );
    expect(done).toMatchObject({
      path: '/api/v1/namespaces/default/pods/x',
      gracePeriodSeconds: 0,
      uid: 'uid-x',
    });
  });
});

describe('kubelet: pods the lab runs for real (canary listeners)', () => {
  const real = { [RUNTIME_LABEL]: RUNTIME_HTTP };
  const readyPatch = (a: Action[]) =>
    patches(a).find((p) => p.path.endsWith('/pods/c1/status'))?.patch as
      | { status: { conditions: { type: string; status: string }[] } }
      | undefined;
  const readyOf = (a: Action[]) => readyPatch(a)?.status.conditions.find((c) => c.type === 'Ready')?.status;

  it('posts Ready only once the runtime says the listener answered', () => {
    const n = node('w1', { ready: true });
    const p = pod('c1', { node: 'w1', phase: 'Running', ready: false, labels: real });
    const starting = world({ nodes: [n], pods: [p], containers: new Map([['uid-c1', 'starting']]) });
    expect(readyPatch(kubeletActions(n, starting, newMemory(), t, NORMAL))).toBeUndefined();
    const answered = { ...starting, containers: new Map([['uid-c1', 'ready' as const]]) };
    expect(readyOf(kubeletActions(n, answered, newMemory(), t, NORMAL))).toBe('True');
    // The same pod without the label is a record: Ready as soon as it runs.
    const record = pod('c1', { node: 'w1', phase: 'Running', ready: false });
    expect(readyOf(kubeletActions(n, world({ nodes: [n], pods: [record] }), newMemory(), t, NORMAL))).toBe(
      'True',
    );
  });

  it('starts a real pod not Ready, and finishes its deletion only once its listener stopped', () => {
    const n = node('w1', { ready: true });
    const mem = newMemory();
    const pending = pod('c1', { node: 'w1', labels: real });
    const w0 = world({ nodes: [n], pods: [pending] });
    kubeletActions(n, w0, mem, t, NORMAL);
    expect(readyOf(kubeletActions(n, { ...w0, now: w0.now + 1_500 }, mem, t, NORMAL))).toBe('False');
    const gone = pod('c1', {
      node: 'w1',
      phase: 'Running',
      ready: true,
      labels: real,
      deletionTimestamp: '2026-01-01T00:10:10Z',
    });
    const deletes = (c: 'stopping' | 'stopped', dt: number) =>
      kubeletActions(
        n,
        world({ nodes: [n], pods: [gone], containers: new Map([['uid-c1', c]]), now: w0.now + dt }),
        mem,
        t,
        NORMAL,
      ).filter((a) => a.kind === 'delete');
    // Past the lab's 200 ms termination delay, but the preStop sleep still runs.
    expect(deletes('stopping', 1_000)).toEqual([]);
    expect(deletes('stopped', 1_100)).toHaveLength(1);
  });
});
