/**
 * Eviction, PodDisruptionBudget status and pod deletion through @kubernetes/client-node, checked
 * against the behaviour observed on a real kube-apiserver (test-infra.md): 201 within the budget,
 * 429 with the exact DisruptionBudget cause without room, Terminating pods counted in
 * disruptedPods until deleted with grace 0.
 */
import { AppsV1Api, CoreV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EvictionLog } from './eviction-log.js';
import { failure, type LabApiFixture, startLabApi } from './testing.js';

let lab: LabApiFixture;
let core: CoreV1Api;
let policy: PolicyV1Api;
let apps: AppsV1Api;
const log = new EvictionLog();
let ns: string;
let nsCounter = 0;

beforeAll(async () => {
  lab = await startLabApi({ name: 'cp-1', evictionLog: log });
  core = lab.kc.makeApiClient(CoreV1Api);
  policy = lab.kc.makeApiClient(PolicyV1Api);
  apps = lab.kc.makeApiClient(AppsV1Api);
});
afterAll(async () => {
  await lab?.stop();
});
beforeEach(async () => {
  ns = `ev-${++nsCounter}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  log.clear();
});

/** A pod on node n1, Running and Ready (what the kubelet would report). */
async function readyPod(
  name: string,
  labels = { app: 'web' },
  owner?: { kind: string; name: string; uid: string },
): Promise<V1Pod> {
  await core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: {
        name,
        labels,
        ...(owner && { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true }] }),
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx:1.27' }] },
    },
  });
  return core.replaceNamespacedPodStatus({
    namespace: ns,
    name,
    body: {
      metadata: { name },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    },
  });
}

const evict = (name: string, gracePeriodSeconds?: number) =>
  core.createNamespacedPodEviction({
    namespace: ns,
    name,
    body: {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: ns },
      ...(gracePeriodSeconds !== undefined && { deleteOptions: { gracePeriodSeconds } }),
    },
  });

const budget = (spec: Record<string, unknown>) =>
  policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } },
  });

describe('eviction', () => {
  it('answers 429 with the DisruptionBudget cause when the budget has no room', async () => {
    await readyPod('a');
    await readyPod('b');
    await budget({ minAvailable: 2 });
    const f = await failure(evict('a'));
    expect(f.code).toBe(429);
    expect(f.status).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
          },
        ],
      },
      code: 429,
    });
    expect(
      (await core.readNamespacedPod({ namespace: ns, name: 'a' })).metadata?.deletionTimestamp,
    ).toBeUndefined();
    expect(log.all()).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        code: 429,
        pod: 'a',
        pdb: 'web',
        instance: 'cp-1',
        user: 'kubernetes-admin',
      }),
    ]);
  });

  it('evicts within the budget: 201, pod Terminating and counted in disruptedPods until deleted with grace 0', async () => {
    for (const p of ['a', 'b', 'c']) await readyPod(p);
    await budget({ minAvailable: 2 });
    const before = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
    expect(before.status).toMatchObject({
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
      expectedPods: 3,
      observedGeneration: 1,
    });

    const t0 = Date.now();
    await evict('a');
    const a = await core.readNamespacedPod({ namespace: ns, name: 'a' });
    expect(a.metadata?.deletionGracePeriodSeconds).toBe(30);
    const deletionAt = new Date(a.metadata!.deletionTimestamp!).getTime();
    expect(deletionAt).toBeGreaterThanOrEqual(Math.floor(t0 / 1000) * 1000 + 29_000);
    expect(a.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }),
    );

    const after = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
    expect(after.status).toMatchObject({
      currentHealthy: 2,
      desiredHealthy: 2,
      disruptionsAllowed: 0,
      expectedPods: 3,
    });
    expect(Object.keys(after.status?.disruptedPods ?? {})).toEqual(['a']);

    const f = await failure(evict('b'));
    expect(f.status.details?.causes?.[0]?.message).toBe(
      'The disruption budget web needs 2 healthy pods and has 2 currently',
    );
    // Evicting a pod already being deleted does not touch the budget.
    await evict('a');

    await core.deleteNamespacedPod({ namespace: ns, name: 'a', gracePeriodSeconds: 0 });
    expect((await failure(core.readNamespacedPod({ namespace: ns, name: 'a' }))).code).toBe(404);
    const cleared = await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
    expect(cleared.status?.disruptedPods).toBeUndefined();
    expect(cleared.status).toMatchObject({ currentHealthy: 2, expectedPods: 2, disruptionsAllowed: 0 });
    expect(log.violations()).toEqual([]);
    expect(log.all().map((r) => [r.pod, r.outcome, r.budget?.disruptionsAllowed])).toEqual([
      ['a', 'evicted', 1],
      ['b', 'refused', 0],
      ['a', 'evicted', undefined],
    ]);
  });

  it('lets exactly as many concurrent evictions through as the budget allows', async () => {
    const pods = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const p of pods) await readyPod(p);
    await budget({ minAvailable: 3 });
    const results = await Promise.allSettled(pods.map((p) => evict(p)));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter(
      (r) => r.status === 'rejected' && (r.reason as { code?: number }).code === 429,
    ).length;
    expect([ok, refused]).toEqual([2, 3]);
    const st = (await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' })).status;
    expect(st).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 0 });
    expect(Object.keys(st?.disruptedPods ?? {})).toHaveLength(2);
    expect(log.violations()).toEqual([]);
  });

  it('derives expectedPods for maxUnavailable from the owning Deployment', async () => {
    const d = await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      },
    });
    const rs = await apps.createNamespacedReplicaSet({
      namespace: ns,
      body: {
        metadata: {
          name: 'web-1',
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name: 'web',
              uid: d.metadata!.uid!,
              controller: true,
            },
          ],
        },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      },
    });
    const owner = { kind: 'ReplicaSet', name: 'web-1', uid: rs.metadata!.uid! };
    await readyPod('w1', { app: 'web' }, owner);
    await readyPod('w2', { app: 'web' }, owner);
    await budget({ maxUnavailable: 1 });
    const st = (await policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' })).status;
    // 3 expected (Deployment replicas), 2 healthy: the budget is already spent.
    expect(st).toMatchObject({
      expectedPods: 3,
      desiredHealthy: 2,
      currentHealthy: 2,
      disruptionsAllowed: 0,
    });
    expect((await failure(evict('w1'))).code).toBe(429);
  });

  it('evicts pods no budget covers, and refuses on an injected fault', async () => {
    await readyPod('free', { app: 'other' });
    lab.server.setEvictionFault(({ name }) => (name === 'free' ? 'injected: eviction refused' : undefined));
    try {
      const f = await failure(evict('free'));
      expect(f.code).toBe(429);
      expect(f.status.details?.causes).toEqual([
        { reason: 'DisruptionBudget', message: 'injected: eviction refused' },
      ]);
    } finally {
      lab.server.setEvictionFault(undefined);
    }
    await evict('free', 0);
    expect((await failure(core.readNamespacedPod({ namespace: ns, name: 'free' }))).code).toBe(404);
    expect((await failure(evict('free'))).code).toBe(404);
  });
});

describe('pod deletion and binding', () => {
  it('a scheduled pod deleted with a grace period stays Terminating; grace 0 removes it', async () => {
    await readyPod('t');
    const first = await core.deleteNamespacedPod({ namespace: ns, name: 't' });
    expect(first.metadata?.deletionGracePeriodSeconds).toBe(30);
    const again = await core.deleteNamespacedPod({ namespace: ns, name: 't', gracePeriodSeconds: 5 });
    expect(again.metadata?.deletionGracePeriodSeconds).toBe(5);
    expect((await core.listNamespacedPod({ namespace: ns })).items.map((p) => p.metadata?.name)).toEqual([
      't',
    ]);
    await core.deleteNamespacedPod({ namespace: ns, name: 't', gracePeriodSeconds: 0 });
    expect((await core.listNamespacedPod({ namespace: ns })).items).toEqual([]);
  });

  it('an unscheduled pod is deleted at once; binding schedules a pod once', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'u' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    await core.createNamespacedBinding({
      namespace: ns,
      body: { metadata: { name: 'u' }, target: { apiVersion: 'v1', kind: 'Node', name: 'n7' } },
    });
    const bound = await core.readNamespacedPod({ namespace: ns, name: 'u' });
    expect(bound.spec?.nodeName).toBe('n7');
    expect(bound.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'PodScheduled', status: 'True' }),
    );
    const twice = await failure(
      core.createNamespacedBinding({
        namespace: ns,
        body: { metadata: { name: 'u' }, target: { kind: 'Node', name: 'n8' } },
      }),
    );
    expect(twice.code).toBe(409);
    expect(twice.status.message).toContain('is already assigned to node "n7"');

    await core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'v' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    await core.deleteNamespacedPod({ namespace: ns, name: 'v' });
    expect((await failure(core.readNamespacedPod({ namespace: ns, name: 'v' }))).code).toBe(404);
  });
});
