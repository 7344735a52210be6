/**
 * The lab API server on a real 3-member etcd (EtcdLabCluster), one instance per member as a
 * stacked kube-apiserver runs, behind the lab load balancer. Subnets 21 (etcd) and 22 (API
 * servers, load balancer) belong to this file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdAdmin } from '../../adapters/etcd/admin.js';
import { scaled } from '../../util/testing-slowness.js';
import { missingReason } from '../etcd/binaries.js';
import { readCredentials } from '../etcd/client.js';
import { EtcdLabCluster } from '../etcd/cluster.js';
import { LabLoadBalancer } from '../lb/balancer.js';
import { probeReadyz } from '../lb/health.js';
import { skipFor } from '../testing-binaries.js';
import { issueClientCert } from './credentials.js';
import { EtcdStore } from './etcd-store.js';
import { EvictionLog } from './eviction-log.js';
import { clientKubeConfig, failure, type LabApiFixture, labCA, startLabApi } from './testing.js';

const missing = await missingReason('3.4');
const LB_IP = '127.0.22.10';

let etcd: EtcdLabCluster;
let ca: Awaited<ReturnType<typeof labCA>>;
let lb: LabLoadBalancer;
const api: LabApiFixture[] = [];
const stores: EtcdStore[] = [];
const log = new EvictionLog();
let viaLb: CoreV1Api;
let adminCert: Awaited<ReturnType<typeof issueClientCert>>;

beforeAll(async () => {
  if (missing) return;
  etcd = await EtcdLabCluster.start({ subnet: 21, members: 3, version: '3.4' });
  const creds = await readCredentials(etcd.clientTls());
  ca = await labCA();
  adminCert = await issueClientCert(ca, 'kubernetes-admin', ['kubeadm:cluster-admins']);
  for (const [i, m] of etcd.members().entries()) {
    const store = new EtcdStore({ endpoint: m.clientUrl, credentials: creds });
    stores.push(store);
    api.push(
      await startLabApi({
        host: `127.0.22.${i + 1}`,
        port: 6443,
        store,
        ca,
        name: `cp-${i + 1}`,
        evictionLog: log,
        ipAddresses: [LB_IP],
      }),
    );
  }
  lb = await LabLoadBalancer.start({
    host: LB_IP,
    port: 6443,
    backends: api.map((a) => a.server.address),
    health: {
      caPem: ca.certPem,
      certPem: adminCert.certPem,
      keyPem: adminCert.keyPem,
      intervalMs: 200,
      rise: 2,
      fall: 2,
    },
  });
  await lb.waitFor((bs) => bs.every((b) => b.state === 'up'));
  viaLb = (await clientKubeConfig(lb.url, ca)).kc.makeApiClient(CoreV1Api);
}, 120_000);

afterAll(async () => {
  await lb?.stop();
  for (const a of api) await a.stop();
  for (const s of stores) await s.close();
  await etcd?.dispose();
});

const readyz = (i: number) => probeReadyz(api[i]!.server.address, { caPem: ca.certPem }, 3_000);

async function readiness(): Promise<boolean[]> {
  return Promise.all(api.map(async (_, i) => (await readyz(i)).ok));
}

async function eventually(
  pred: () => Promise<boolean>,
  what: string,
  timeoutMs = scaled(15_000),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Requests through the load balancer on fresh connections until stopped; failures are kept. */
function load(): { stop: () => Promise<{ ok: number; failed: string[] }> } {
  let running = true;
  let ok = 0;
  const failed: string[] = [];
  const loop = (async () => {
    while (running) {
      try {
        await viaLb.readNamespace({ name: 'default' });
        ok++;
      } catch (err) {
        failed.push(String((err as Error).message).slice(0, 200));
      }
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { ok, failed };
    },
  };
}

describe.skipIf(skipFor(missing))('lab API server on a 3-member etcd', () => {
  it('commits through etcd: resourceVersion is the key mod revision, other instances read it, stale writes conflict', async () => {
    const c1 = api[0]!.kc.makeApiClient(CoreV1Api);
    const c3 = api[2]!.kc.makeApiClient(CoreV1Api);
    const cm = await c1.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'shared' }, data: { v: '1' } },
    });
    const client = etcd.client();
    try {
      const kv = (await client.kv.range({ key: Buffer.from('/registry/configmaps/default/shared') })).kvs[0]!;
      expect(kv.mod_revision).toBe(cm.metadata?.resourceVersion);
      expect(JSON.parse(kv.value.toString())).toMatchObject({
        kind: 'ConfigMap',
        data: { v: '1' },
        metadata: { uid: cm.metadata?.uid },
      });
    } finally {
      client.close();
    }
    const seen = await c3.readNamespacedConfigMap({ namespace: 'default', name: 'shared' });
    expect(seen.metadata?.resourceVersion).toBe(cm.metadata?.resourceVersion);
    await c3.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'shared',
      body: { ...seen, data: { v: '3' } },
    });
    const stale = await failure(
      c1.replaceNamespacedConfigMap({
        namespace: 'default',
        name: 'shared',
        body: { ...cm, data: { v: 'x' } },
      }),
    );
    expect(stale).toMatchObject({ code: 409, status: { reason: 'Conflict' } });
  });

  it('pages at one etcd revision and answers 410 once etcd has compacted it', async () => {
    const c2 = api[1]!.kc.makeApiClient(CoreV1Api);
    await c2.createNamespace({ body: { metadata: { name: 'pages' } } });
    for (let i = 0; i < 5; i++)
      await c2.createNamespacedConfigMap({ namespace: 'pages', body: { metadata: { name: `cm-${i}` } } });
    const first = await c2.listNamespacedConfigMap({ namespace: 'pages', limit: 2 });
    await c2.deleteNamespacedConfigMap({ namespace: 'pages', name: 'cm-3' });
    const second = await c2.listNamespacedConfigMap({
      namespace: 'pages',
      limit: 2,
      _continue: first.metadata?._continue,
    });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(['cm-2', 'cm-3']);
    await stores[1]!.compact(await stores[1]!.revision());
    const gone = await failure(
      c2.listNamespacedConfigMap({ namespace: 'pages', limit: 2, _continue: first.metadata?._continue }),
    );
    expect(gone).toMatchObject({ code: 410, status: { reason: 'Expired' } });
  });

  it('refuses an eviction through the load balancer with the exact budget cause', async () => {
    const { kc } = await clientKubeConfig(lb.url, ca);
    const policy = kc.makeApiClient(PolicyV1Api);
    for (const name of ['a', 'b']) {
      await viaLb.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name, labels: { app: 'web' } },
          spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
        },
      });
      await viaLb.replaceNamespacedPodStatus({
        namespace: 'default',
        name,
        body: {
          metadata: { name },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
        },
      });
    }
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: {
        metadata: { name: 'web' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      },
    });
    const f = await failure(
      viaLb.createNamespacedPodEviction({
        namespace: 'default',
        name: 'a',
        body: { metadata: { name: 'a', namespace: 'default' } },
      }),
    );
    expect(f.code).toBe(429);
    expect(f.status.details?.causes).toEqual([
      {
        reason: 'DisruptionBudget',
        message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
      },
    ]);
    expect(log.violations()).toEqual([]);
  });

  it('stopping member 2 fails exactly instance 2; the load balancer routes around it; restarting it heals', async () => {
    expect(await readiness()).toEqual([true, true, true]);
    await etcd.stop('m2');
    await eventually(async () => (await readyz(1)).ok === false, 'instance 2 to fail /readyz');
    expect(await readiness()).toEqual([true, false, true]);
    // The instance still answers, with errors, as a kube-apiserver without its etcd does.
    const direct = await failure(api[1]!.kc.makeApiClient(CoreV1Api).readNamespace({ name: 'default' }));
    expect([500, 504]).toContain(direct.code);

    await lb.waitFor(
      (bs) => bs.find((b) => b.address === api[1]!.server.address)?.state === 'down',
      scaled(5_000),
    );
    const cp2 = () => lb.backends().find((b) => b.address === api[1]!.server.address)!.connections;
    const before = cp2();
    const l = load();
    await sleep(scaled(1_000));
    await viaLb.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'written-with-m2-down' } },
    });
    const r = await l.stop();
    expect(r.failed).toEqual([]);
    expect(r.ok).toBeGreaterThan(10);
    expect(cp2()).toBe(before);

    await etcd.restart('m2');
    await eventually(async () => (await readyz(1)).ok, 'instance 2 to be ready again', scaled(30_000));
    await lb.waitFor((bs) => bs.every((b) => b.state === 'up'), scaled(5_000));
    const back = await api[1]!.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: 'default', name: 'written-with-m2-down' });
    expect(back.metadata?.name).toBe('written-with-m2-down');
  });

  it('a leadership move costs reads nothing: like clientv3, reads retry while the cluster is between leaders', async () => {
    const admin = new EtcdAdmin({ endpoints: etcd.endpoints(), tls: etcd.clientTls() });
    const failures: string[] = [];
    let reads = 0;
    let running = true;
    // Back-to-back linearizable reads on every member: one is in flight whenever leadership moves.
    const readers = stores.map(async (store) => {
      while (running) {
        await Promise.all([store.revision(scaled(1_000)), store.list('/registry/namespaces/')]).then(
          () => reads++,
          (err: unknown) => failures.push((err as Error).message),
        );
      }
    });
    try {
      for (let i = 0; i < 6; i++) {
        const leader = await etcd.waitForLeader();
        const next = etcd.members().find((m) => m.name !== leader && m.state === 'running')!;
        await admin.moveLeader(next.id!);
        await sleep(scaled(100));
      }
    } finally {
      running = false;
      await Promise.all(readers);
      admin.close();
    }
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(50);
  });

  it('taken out of the load balancer first, an instance loses its member with no failed request; without quorum the survivor fails too', async () => {
    const l = load();
    await sleep(scaled(300));
    lb.removeBackend(api[2]!.server.address);
    // As the plan does: let the request in flight finish and the LB close the session between two
    // exchanges before the member goes.
    await sleep(scaled(200));
    await etcd.stop('m3');
    await eventually(async () => (await readyz(2)).ok === false, 'instance 3 to fail /readyz');
    await sleep(scaled(500));
    const r = await l.stop();
    expect(r.failed).toEqual([]);
    expect(await readiness()).toEqual([true, true, false]);

    // Member 1 alone is no quorum: its instance cannot read linearizably any more.
    await etcd.stop('m2');
    await eventually(async () => (await readyz(0)).ok === false, 'instance 1 to fail /readyz without quorum');
    expect(await readiness()).toEqual([false, false, false]);
  });
});
