/**
 * drain-nodes.ts through the production adapter (KubeAdmin) against the lab API server and the lab
 * nodes controller (scheduler, kubelets, ReplicaSet and StatefulSet controllers): a batch drained
 * in parallel, a StatefulSet pod back under its old name, a budget that blocks a batch.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeAdmin } from '../adapters/kube/admin.js';
import type { FerryError } from '../errors.js';
import { issueClientCert } from '../lab/apiserver/credentials.js';
import { EvictionLog } from '../lab/apiserver/eviction-log.js';
import type { KObj } from '../lab/apiserver/object.js';
import { type LabApiFixture, startLabApi } from '../lab/apiserver/testing.js';
import { LabKubeClient } from '../lab/nodes/client.js';
import { LabNodesController } from '../lab/nodes/controller.js';
import { until } from '../util/testing-until.js';
import { type DrainEvent, type DrainNodesOptions, drainNodes } from './drain-nodes.js';

// Subnet 127.0.110.x belongs to this file (the drain's real-server tests use 127.0.110–119).
const HOST = '127.0.110.1';

let lab: LabApiFixture;
let client: LabKubeClient;
let controller: LabNodesController;
let admin: KubeAdmin;
let dir: string;
const evictions = new EvictionLog();

const nodeBody = (name: string, pool: string): KObj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, pool } },
  spec: {},
  status: {
    allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    addresses: [{ type: 'InternalIP', address: '127.0.110.50' }],
  },
});

const template = (app: string, pool: string) => ({
  metadata: { labels: { app } },
  spec: {
    nodeSelector: { pool },
    terminationGracePeriodSeconds: 30,
    containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }],
  },
});

async function deployment(ns: string, name: string, replicas: number, pool: string): Promise<void> {
  await client.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template(name, pool) },
  });
}

async function pdb(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
  await client.create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: ns },
    spec: { ...spec, selector: { matchLabels: { app: name } } },
  });
}

const podsOf = async (ns: string, app: string) =>
  client.list<KObj>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `app=${app}` });
const ready = (p: KObj) =>
  !p.metadata.deletionTimestamp &&
  (p.status?.conditions ?? []).some(
    (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
  );

async function allReady(ns: string, app: string, n: number): Promise<KObj[]> {
  return until(`${n} Ready pods of ${ns}/${app}`, async () => {
    const ps = (await podsOf(ns, app)).filter(ready);
    return ps.length === n ? ps : undefined;
  });
}

function options(
  nodes: string[],
  o: Partial<DrainNodesOptions> = {},
): DrainNodesOptions & { events: DrainEvent[] } {
  const events: DrainEvent[] = [];
  return {
    nodes,
    concurrency: 2,
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    evictBarePods: false,
    record: (e) => events.push(e),
    events,
    ...o,
  };
}

async function cordon(...nodes: string[]): Promise<void> {
  for (const n of nodes) await admin.setUnschedulable(n, true);
}

beforeAll(async () => {
  lab = await startLabApi({ host: HOST, evictionLog: evictions });
  const cert = await issueClientCert(lab.ca, 'kubernetes-admin', ['system:masters']);
  client = new LabKubeClient({
    server: lab.server.url,
    ca: lab.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
  });
  dir = await mkdtemp(join(tmpdir(), 'ferry-drain-nodes-'));
  await writeFile(join(dir, 'kubeconfig'), lab.kubeconfig, { mode: 0o600 });
  admin = KubeAdmin.fromKubeconfig({ kubeconfig: join(dir, 'kubeconfig') });
  controller = new LabNodesController({
    client,
    intervalMs: 50,
    timings: {
      podStartDelayMs: 100,
      nodeReadyDelayMs: 100,
      terminationDelayMs: 100,
      leaseRenewMs: 300,
      nodeMonitorGracePeriodMs: 5_000,
    },
    clusterCidr: '10.244.0.0/16',
  });
  for (const ns of ['a', 'b'])
    await client.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    });
  for (const n of ['a1', 'a2', 'a3', 'a4']) await client.create('/api/v1/nodes', nodeBody(n, 'a'));
  for (const n of ['b1', 'b2']) await client.create('/api/v1/nodes', nodeBody(n, 'b'));
  controller.start();
});

afterAll(async () => {
  await controller?.stop();
  client?.close();
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('drainNodes on the lab', () => {
  it('drains a batch in parallel within its budget; a StatefulSet pod comes back under its old name on another node', async () => {
    await deployment('a', 'web', 4, 'a');
    await pdb('a', 'web', { maxUnavailable: 1 });
    await client.create('/apis/apps/v1/namespaces/a/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'a' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: template('db', 'a'),
      },
    });
    await allReady('a', 'web', 4);
    const before = await allReady('a', 'db', 2);
    // Drain the nodes holding the StatefulSet's pods (and whatever web pods are there).
    const batch = [...new Set(before.map((p) => p.spec.nodeName as string))];
    while (batch.length < 2) batch.push(['a1', 'a2', 'a3', 'a4'].find((n) => !batch.includes(n))!);
    await cordon(...batch);
    const o = options(batch);
    const r = await drainNodes(admin, o);

    expect(r.nodes.map((n) => n.node)).toEqual(batch);
    for (const n of batch) expect((await admin.podsOnNode(n)).filter((p) => !p.ignoredByDrain)).toEqual([]);
    const after = (await podsOf('a', 'db')).filter(ready);
    expect(after.map((p) => p.metadata.name).sort()).toEqual(before.map((p) => p.metadata.name).sort());
    for (const p of after) {
      expect(batch).not.toContain(p.spec.nodeName);
      expect(before.map((b) => b.metadata.uid)).not.toContain(p.metadata.uid);
    }
    // Every replacement was Ready when the drain said so, not later.
    expect((await podsOf('a', 'web')).filter(ready)).toHaveLength(4);
    expect(
      o.events
        .filter((e) => e.kind === 'node-drained')
        .map((e) => (e as { node: string }).node)
        .sort(),
    ).toEqual([...batch].sort());
    const evicted = o.events.flatMap((e) => (e.kind === 'evicted' ? [e.evicted.uid] : []));
    expect(new Set(evicted).size).toBe(evicted.length);
    expect(evictions.violations()).toEqual([]);
  });

  it('a pod pinned to the drained node by hostname cannot come back elsewhere: the drain does not wait for it', async () => {
    const free = (await admin.listNodes()).find((n) => n.labels['pool'] === 'a' && !n.unschedulable)!;
    await client.create('/apis/apps/v1/namespaces/a/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pinned', namespace: 'a' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'pinned' } },
        template: {
          metadata: { labels: { app: 'pinned' } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': free.name },
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: 'nginx' }],
          },
        },
      },
    });
    await allReady('a', 'pinned', 1);
    await cordon(free.name);
    const o = options([free.name], { timeoutMs: 20_000 });
    const t0 = Date.now();
    await drainNodes(admin, o);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(o.events.find((e) => e.kind === 'not-replaceable')).toMatchObject({ node: free.name });
  });

  it('pods pinned to the drained node by required node affinity (hostname In, matchFields metadata.name) are not waited for either', async () => {
    await client.create('/api/v1/nodes', nodeBody('p1', 'p'));
    const pinnedBy = async (name: string, term: Record<string, unknown>) =>
      client.create('/apis/apps/v1/namespaces/a/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, namespace: 'a' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] },
                },
              },
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: 'nginx' }],
            },
          },
        },
      });
    await pinnedBy('by-host', {
      matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['p1'] }],
    });
    await pinnedBy('by-name', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['p1'] }] });
    await allReady('a', 'by-host', 1);
    await allReady('a', 'by-name', 1);
    await cordon('p1');
    const o = options(['p1'], { timeoutMs: 20_000 });
    const t0 = Date.now();
    await drainNodes(admin, o);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(
      o.events
        .flatMap((e) => (e.kind === 'not-replaceable' ? [`${e.owner} ${e.node}`] : []))
        .map((s) => s.replace(/-[a-z0-9]+ /, ' '))
        .sort(),
    ).toEqual(['a/ReplicaSet/by-host p1', 'a/ReplicaSet/by-name p1']);
  });

  it("a replacement the scheduler cannot place stops the drain at its deadline with the scheduler's reason", async () => {
    await client.create('/api/v1/nodes', nodeBody('c1', 'c'));
    await deployment('a', 'lonely', 1, 'c');
    await allReady('a', 'lonely', 1);
    await cordon('c1');
    const o = options(['c1'], { timeoutMs: 3_000 });
    const err = await drainNodes(admin, o).then(
      () => undefined,
      (e: unknown) => e as FerryError,
    );
    expect(err?.kind).toBe('gate');
    expect(err?.message).toContain('ReplicaSet');
    expect(err?.message).toMatch(/0 of 1 Ready elsewhere \(a\/lonely-[^ ]+ unschedulable: .*node/);
  });

  it('a budget that allows no disruption stops the batch at its deadline, naming it; nothing deleted past it', async () => {
    await deployment('b', 'checkout', 2, 'b');
    await pdb('b', 'checkout', { minAvailable: 2 });
    await allReady('b', 'checkout', 2);
    await cordon('b1', 'b2');
    const o = options(['b1', 'b2'], { timeoutMs: 2_000 });
    const t0 = Date.now();
    const err = await drainNodes(admin, o).then(
      () => undefined,
      (e: unknown) => e as FerryError,
    );
    expect(err?.kind).toBe('gate');
    expect(err?.message).toContain('blocked by PodDisruptionBudget b/checkout');
    expect(err?.message).toContain('needs 2 healthy pods and has 2 currently');
    // The deadline is checked inside the round (a refused pod waits on its budget), not after it.
    expect(Date.now() - t0).toBeLessThan(6_000);
    expect((await podsOf('b', 'checkout')).filter(ready)).toHaveLength(2);
    expect(o.events.some((e) => e.kind === 'evicted')).toBe(false);
    expect(evictions.violations()).toEqual([]);
  });
});
