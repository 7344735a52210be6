import { describe, expect, it } from 'vitest';
import type { KObj } from './object.js';
import {
  computePdbStatus,
  DELETION_TIMEOUT_MS,
  decideEviction,
  EVICTION_REFUSED,
  type PdbStatus,
} from './pdb.js';

const NOW = new Date('2026-01-01T00:10:00Z');

function pod(
  name: string,
  o: {
    ready?: boolean;
    terminating?: boolean;
    created?: string;
    phase?: string;
    owner?: string;
    labels?: Record<string, string>;
  } = {},
): KObj {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.terminating && { deletionTimestamp: '2026-01-01T00:09:30Z' }),
      ...(o.created && { creationTimestamp: o.created }),
      ...(o.owner && {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: o.owner,
            uid: `uid-${o.owner}`,
            controller: true,
          },
        ],
      }),
    },
    spec: { nodeName: 'n1' },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

function pdb(spec: Record<string, unknown>, status?: Partial<PdbStatus>): KObj {
  return {
    metadata: { name: 'web', namespace: 'ns', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
    ...(status && { status }),
  };
}

const rs = (name: string, replicas: number, deployment?: { name: string; replicas: number }): KObj[] => [
  {
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      ...(deployment && {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: deployment.name,
            uid: `uid-${deployment.name}`,
            controller: true,
          },
        ],
      }),
    },
    spec: { replicas },
  },
  ...(deployment
    ? [
        {
          kind: 'Deployment',
          metadata: { name: deployment.name, namespace: 'ns', uid: `uid-${deployment.name}` },
          spec: { replicas: deployment.replicas },
        },
      ]
    : []),
];

describe('computePdbStatus', () => {
  it('minAvailable as a number: expected = matching pods, healthy = ready and not terminating', () => {
    const pods = [
      pod('a'),
      pod('b'),
      pod('c', { ready: false }),
      pod('d', { terminating: true }),
      pod('x', { labels: { app: 'db' } }),
    ];
    const st = computePdbStatus(pdb({ minAvailable: 2 }), pods, [], NOW);
    expect(st).toMatchObject({
      currentHealthy: 2,
      desiredHealthy: 2,
      expectedPods: 4,
      disruptionsAllowed: 0,
      observedGeneration: 1,
    });
    expect(st.conditions[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: 'False',
      reason: 'InsufficientPods',
    });
  });

  it('maxUnavailable uses the scale of the owning Deployment, percentages rounding up', () => {
    const pods = [pod('a', { owner: 'rs1' }), pod('b', { owner: 'rs1' }), pod('c', { owner: 'rs1' })];
    const st = computePdbStatus(
      pdb({ maxUnavailable: '50%' }),
      pods,
      rs('rs1', 3, { name: 'web', replicas: 4 }),
      NOW,
    );
    // expected 4 (Deployment replicas), maxUnavailable ceil(2) = 2, desired 2, healthy 3.
    expect(st).toMatchObject({
      expectedPods: 4,
      desiredHealthy: 2,
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
    expect(st.conditions[0]).toMatchObject({ status: 'True', reason: 'SufficientPods' });
  });

  it('fails safe when a pod names a controller that does not exist', () => {
    const st = computePdbStatus(pdb({ maxUnavailable: 1 }), [pod('a', { owner: 'gone' })], [], NOW);
    expect(st.disruptionsAllowed).toBe(0);
    expect(st.conditions[0]).toMatchObject({
      reason: 'SyncFailed',
      message: 'found no controllers for pod "a"',
    });
  });

  it('keeps disruptedPods for pods being deleted or recently evicted, and does not count them healthy', () => {
    const recent = new Date(NOW.getTime() - 10_000).toISOString();
    const old = new Date(NOW.getTime() - DELETION_TIMEOUT_MS - 1).toISOString();
    const pods = [pod('a'), pod('b'), pod('c', { terminating: true }), pod('d')];
    const st = computePdbStatus(
      pdb({ minAvailable: 1 }, { disruptedPods: { a: recent, c: old, d: old, gone: recent } }),
      pods,
      [],
      NOW,
    );
    expect(st.disruptedPods).toEqual({ a: recent, c: old });
    expect(st.currentHealthy).toBe(2); // b and d
    expect(st.disruptionsAllowed).toBe(1);
  });

  it('drops a disruptedPods entry once a pod of that name was created after the eviction (a StatefulSet pod back under its old name counts healthy at once, not 2 min later)', () => {
    const at = new Date(NOW.getTime() - 10_000);
    const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const pods = [
      pod('db-0', { created: iso(new Date(at.getTime() + 5_000)) }), // back under its old name
      pod('db-1', { created: iso(new Date(at.getTime() - 60_000)) }), // the evicted one, still there
      pod('db-2', { created: iso(at) }), // same second: not known to be a new pod, kept
    ];
    const st = computePdbStatus(
      pdb({ minAvailable: 1 }, { disruptedPods: { 'db-0': iso(at), 'db-1': iso(at), 'db-2': iso(at) } }),
      pods,
      [],
      NOW,
    );
    expect(st.disruptedPods).toEqual({ 'db-1': iso(at), 'db-2': iso(at) });
    expect(st.currentHealthy).toBe(1);
  });

  it('allows no disruption while no pod is expected', () => {
    expect(computePdbStatus(pdb({ maxUnavailable: 1 }), [], [], NOW).disruptionsAllowed).toBe(0);
  });
});

describe('decideEviction', () => {
  const withStatus = (spec: Record<string, unknown>, pods: KObj[]) => {
    const p = pdb(spec);
    p.status = computePdbStatus(p, pods, [], NOW);
    return p;
  };

  it('refuses with the DisruptionBudget cause when no disruption is allowed', () => {
    const pods = [pod('a'), pod('b')];
    const d = decideEviction(pods[0]!, [withStatus({ minAvailable: 2 }, pods)]);
    expect(d).toEqual({
      allowed: false,
      code: 429,
      pdb: 'web',
      message: EVICTION_REFUSED,
      cause: 'The disruption budget web needs 2 healthy pods and has 2 currently',
    });
  });

  it('allows within the budget and names the budget to charge', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    const budget = withStatus({ minAvailable: 2 }, pods);
    expect(decideEviction(pods[0]!, [budget])).toEqual({ allowed: true, budget, reason: 'within-budget' });
  });

  it('ignores budgets for pending, finished and terminating pods, and without a budget', () => {
    const pods = [pod('a'), pod('b')];
    const budget = withStatus({ minAvailable: 2 }, pods);
    for (const p of [
      pod('p', { phase: 'Pending' }),
      pod('s', { phase: 'Succeeded' }),
      pod('t', { terminating: true }),
    ]) {
      expect(decideEviction(p, [budget])).toMatchObject({ allowed: true, reason: 'ignores-budget' });
    }
    expect(decideEviction(pod('x', { labels: { app: 'db' } }), [budget])).toMatchObject({
      allowed: true,
      reason: 'no-budget',
    });
  });

  it('lets an unready pod go without charging a budget that is healthy (IfHealthyBudget)', () => {
    const pods = [pod('a'), pod('b'), pod('c', { ready: false })];
    const budget = withStatus({ minAvailable: 2 }, pods);
    expect(decideEviction(pods[2]!, [budget])).toMatchObject({
      allowed: true,
      budget: undefined,
      reason: 'unhealthy-pod',
    });
    const tight = withStatus({ minAvailable: 3 }, pods);
    expect(decideEviction(pods[2]!, [tight])).toMatchObject({ allowed: false, code: 429 });
    const always = withStatus({ minAvailable: 3, unhealthyPodEvictionPolicy: 'AlwaysAllow' }, pods);
    expect(decideEviction(pods[2]!, [always])).toMatchObject({ allowed: true, reason: 'unhealthy-pod' });
  });

  it('refuses a pod covered by two budgets with 500', () => {
    const pods = [pod('a'), pod('b'), pod('c')];
    const one = withStatus({ minAvailable: 1 }, pods);
    const two = { ...withStatus({ minAvailable: 1 }, pods), metadata: { ...one.metadata, name: 'other' } };
    expect(decideEviction(pods[0]!, [one, two])).toMatchObject({ allowed: false, code: 500 });
  });
});
