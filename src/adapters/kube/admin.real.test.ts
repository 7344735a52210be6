import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FerryError } from '../../errors.js';
import { EvictionLog } from '../../lab/apiserver/eviction-log.js';
import { type LabApiFixture, startLabApi } from '../../lab/apiserver/testing.js';
import { type DrainEvent, type DrainNodesOptions, drainNodes } from '../../run/drain-nodes.js';
import { acquireLease } from '../../run/lock.js';
import { KubeAdmin } from './admin.js';
import { loadKubeconfig } from './kubeconfig.js';
import { createRequester } from './request.js';

let lab: LabApiFixture;
let dir: string;
let admin: KubeAdmin;
const evictions = new EvictionLog();

beforeAll(async () => {
  lab = await startLabApi({ evictionLog: evictions });
  dir = await mkdtemp(join(tmpdir(), 'ferry-kube-admin-'));
  await writeFile(join(dir, 'kubeconfig'), lab.kubeconfig, { mode: 0o600 });
  admin = KubeAdmin.fromKubeconfig({ kubeconfig: join(dir, 'kubeconfig') });
});
afterAll(async () => {
  await lab?.stop();
  await rm(dir, { recursive: true, force: true });
});

function drainOpts(nodes: string[], timeoutMs: number, record: (e: DrainEvent) => void): DrainNodesOptions {
  return {
    nodes,
    concurrency: 2,
    timeoutMs,
    signal: new AbortController().signal,
    evictBarePods: false,
    record,
    pacing: { kind: 'fixed', retryMs: 300 },
  };
}

/** Raw calls to set up fixtures (what kubectl apply / a kubelet would do). */
async function call(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
  const r = createRequester(loadKubeconfig(join(dir, 'kubeconfig')));
  return r.request(method, path, {
    ...(body !== undefined && { body }),
    ...(contentType && { contentType }),
  });
}

async function node(name: string): Promise<void> {
  await call('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { role: 'x' } },
  });
  await call(
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      },
    },
    'application/merge-patch+json',
  );
}

async function pod(
  ns: string,
  name: string,
  nodeName: string,
  opts: { labels?: Record<string, string>; owner?: string; grace?: number; mirror?: boolean } = {},
): Promise<void> {
  await call('POST', `/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: opts.labels ?? {},
      ...(opts.mirror && { annotations: { 'kubernetes.io/config.mirror': 'x' } }),
      ...(opts.owner && {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: opts.owner, name: 'o', uid: 'u1', controller: true },
        ],
      }),
    },
    spec: {
      nodeName,
      terminationGracePeriodSeconds: opts.grace ?? 0,
      containers: [{ name: 'c', image: 'i' }],
    },
  });
  await call(
    'PATCH',
    `/api/v1/namespaces/${ns}/pods/${name}/status`,
    { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
    'application/merge-patch+json',
  );
}

async function namespace(ns: string): Promise<void> {
  await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
}

describe('KubeAdmin against the lab API server', () => {
  it('reads, cordons and uncordons nodes, deletes them idempotently', async () => {
    await node('n1');
    let n = await admin.getNode('n1');
    expect(n).toMatchObject({ name: 'n1', ready: true, unschedulable: false, addresses: ['10.0.0.1'] });
    await admin.setUnschedulable('n1', true);
    expect((await admin.getNode('n1'))?.unschedulable).toBe(true);
    await admin.setUnschedulable('n1', false);
    n = await admin.getNode('n1');
    expect(n?.unschedulable).toBe(false);
    expect((await admin.listNodes()).map((x) => x.name)).toContain('n1');
    await admin.deleteNode('n1');
    expect(await admin.getNode('n1')).toBeUndefined();
    await admin.deleteNode('n1'); // already gone: no error
    expect(await admin.readyz()).toBe(true);
  });

  it('drains through the Eviction API: skips DaemonSet and mirror pods, waits for terminating pods', async () => {
    await namespace('d1');
    await node('n2');
    // Job-owned: controller pods that nothing has to bring back, so the drain ends with the node empty.
    await pod('d1', 'web-1', 'n2', { owner: 'Job' });
    await pod('d1', 'slow-1', 'n2', { owner: 'Job', grace: 30 });
    await pod('d1', 'agent-1', 'n2', { owner: 'DaemonSet' });
    await pod('d1', 'static-1', 'n2', { mirror: true });
    const views = await admin.podsOnNode('n2');
    expect(
      views
        .filter((p) => p.ignoredByDrain)
        .map((p) => p.name)
        .sort(),
    ).toEqual(['agent-1', 'static-1']);
    // A "kubelet" that finishes terminating pods a little later.
    const kubelet = setInterval(() => {
      void call('GET', '/api/v1/namespaces/d1/pods/slow-1')
        .then((p) => {
          if ((p as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp)
            return call('DELETE', '/api/v1/namespaces/d1/pods/slow-1', { gracePeriodSeconds: 0 });
          return undefined;
        })
        .catch(() => undefined);
    }, 300);
    try {
      const progress: string[] = [];
      const r = await drainNodes(
        admin,
        drainOpts(['n2'], 10_000, (e) => progress.push(e.kind)),
      );
      expect(r.nodes[0]!.evicted.sort()).toEqual(['d1/slow-1', 'd1/web-1']);
      expect(progress).toEqual(['baseline', 'evicted', 'evicted', 'node-drained', 'replacements-ready']);
    } finally {
      clearInterval(kubelet);
    }
    const left = (await admin.podsOnNode('n2')).map((p) => p.name).sort();
    expect(left).toEqual(['agent-1', 'static-1']);
    // Every decision went through the eviction subresource: none was a budget violation.
    expect(
      evictions
        .all()
        .filter((e) => e.namespace === 'd1')
        .map((e) => e.pod)
        .sort(),
    ).toEqual(['slow-1', 'web-1']);
    expect(evictions.violations()).toEqual([]);
  });

  it('stops at the drain deadline naming the PodDisruptionBudget that blocks, and deletes nothing', async () => {
    await namespace('d2');
    await node('n3');
    await call('POST', '/apis/policy/v1/namespaces/d2/poddisruptionbudgets', {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'd2' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    });
    await pod('d2', 'web-a', 'n3', { labels: { app: 'web' }, owner: 'ReplicaSet' });
    await pod('d2', 'web-b', 'n3', { labels: { app: 'web' }, owner: 'ReplicaSet' });
    const progress: { kind: string; pdb?: string | undefined }[] = [];
    const err = await drainNodes(
      admin,
      drainOpts(['n3'], 1_500, (e) => progress.push(e)),
    )
      .then(() => undefined)
      .catch((e: unknown) => e as Error & { kind?: string; remediation?: string });
    expect(err).toBeInstanceOf(Error);
    expect((err as { kind: string }).kind).toBe('gate');
    expect((err as Error).message).toMatch(/drain of node n3 did not finish within 2 s: 2 pod\(s\) left/);
    expect((err as Error).message).toContain('blocked by PodDisruptionBudget d2/web');
    expect((err as Error).message).toContain(
      'The disruption budget web needs 2 healthy pods and has 2 currently',
    );
    expect((err as { remediation: string }).remediation).toContain('never deletes pods');
    expect(progress.find((p) => p.kind === 'blocked')).toMatchObject({ pdb: 'd2/web' });
    expect((await admin.podsOnNode('n3')).map((p) => p.name).sort()).toEqual(['web-a', 'web-b']);
    expect(
      evictions
        .all()
        .filter((e) => e.namespace === 'd2')
        .every((e) => e.outcome === 'refused'),
    ).toBe(true);
  });

  it('two budgets over one pod: the lab answers HTTP 500 as kube-apiserver does, ferry does not retry it and stops naming both', async () => {
    await namespace('d4');
    await node('n4');
    for (const [name, spec] of [
      ['web-a', { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } }],
      ['web-b', { minAvailable: 1, selector: { matchLabels: { tier: 'front' } } }],
    ] as const)
      await call('POST', '/apis/policy/v1/namespaces/d4/poddisruptionbudgets', {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name, namespace: 'd4' },
        spec,
      });
    await pod('d4', 'web-1', 'n4', { labels: { app: 'web', tier: 'front' }, owner: 'ReplicaSet' });
    await pod('d4', 'other', 'n9x', { labels: { app: 'web', tier: 'front' }, owner: 'ReplicaSet' });
    const seen = () => evictions.all().filter((e) => e.namespace === 'd4');
    expect(await admin.evict('d4', 'web-1')).toEqual({
      kind: 'several-budgets',
      message:
        'Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    });
    // One request, not four: a 500 that says this is not an instance going away.
    expect(seen().map((e) => [e.outcome, e.code])).toEqual([['refused', 500]]);
    const err = await drainNodes(
      admin,
      drainOpts(['n4'], 30_000, () => {}),
    ).then(
      () => undefined,
      (e: unknown) => e as FerryError,
    );
    expect(err?.kind).toBe('gate');
    expect(err?.message).toContain('d4/web-a and d4/web-b');
    expect(err?.message).toContain('more than one PodDisruptionBudget');
    expect(err?.remediation).toContain('workload.pdb-overlap');
    expect(seen()).toHaveLength(2);
    expect((await admin.podsOnNode('n4')).map((p) => p.name)).toEqual(['web-1']);
  });

  it('holds the run Lease: a second lineage is refused, release frees it', async () => {
    await namespace('kube-system').catch(() => undefined);
    const a = await acquireLease(admin, { lineage: 'AAA', runId: 'r1' });
    const seen = await admin.getLease('kube-system', 'ferry-run');
    expect(seen).toMatchObject({ holderIdentity: 'ferry/AAA', leaseDurationSeconds: 60 });
    expect(seen?.annotations['ferry.dev/run-id']).toBe('r1');
    await expect(acquireLease(admin, { lineage: 'BBB', runId: 'r2' })).rejects.toThrow(
      /another run holds the Lease/,
    );
    // Stale resourceVersion: the API answers 409.
    await expect(
      admin.replaceLease('kube-system', 'ferry-run', '1', {
        holderIdentity: 'x',
        leaseDurationSeconds: 1,
        renewTime: new Date().toISOString(),
        annotations: {},
      }),
    ).rejects.toMatchObject({ status: 409 });
    await a.release();
    expect(await admin.getLease('kube-system', 'ferry-run')).toBeUndefined();
  });

  it('rides out an instance that answers 503 for a moment (retries transient answers)', async () => {
    await node('n9');
    lab.server.setDown(true);
    const back = setTimeout(() => lab.server.setDown(false), 400);
    try {
      expect((await admin.getNode('n9'))?.name).toBe('n9');
    } finally {
      clearTimeout(back);
      lab.server.setDown(false);
    }
    lab.server.setDown(true);
    try {
      await expect(admin.getNode('n9')).rejects.toMatchObject({ status: 503 });
    } finally {
      lab.server.setDown(false);
    }
  });

  it('reads arbitrary objects for object expectations', async () => {
    await call('POST', '/api/v1/namespaces/d1/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'd1' },
      data: { a: '1' },
    });
    expect(await admin.getObject('v1', 'ConfigMap', 'd1', 'cm')).toMatchObject({ data: { a: '1' } });
    expect(await admin.getObject('v1', 'ConfigMap', 'd1', 'nope')).toBeUndefined();
  });

  it('scales a Deployment and a StatefulSet through their scale subresource', async () => {
    await namespace('sc');
    for (const [plural, kind] of [
      ['deployments', 'Deployment'],
      ['statefulsets', 'StatefulSet'],
    ] as const) {
      await call('POST', `/apis/apps/v1/namespaces/sc/${plural}`, {
        apiVersion: 'apps/v1',
        kind,
        metadata: { name: 'web', namespace: 'sc' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
          ...(kind === 'StatefulSet' && { serviceName: 'web' }),
        },
      });
      await admin.scaleWorkload(kind, 'sc', 'web', 3);
      expect(await admin.getObject('apps/v1', kind, 'sc', 'web')).toMatchObject({ spec: { replicas: 3 } });
    }
  });
});
