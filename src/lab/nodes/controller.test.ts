import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../util/testing-until.js';
import type { KObj } from '../apiserver/object.js';
import { LabFaults } from '../faults.js';
import type { LabKubeClient } from './client.js';
import { LabNodesController } from './controller.js';
import { memoryApi } from './testing.js';

// Subnet 127.0.39.x belongs to this file (the lab's tests use 127.0.30–39).
const HOST = '127.0.39.1';

type Api = Awaited<ReturnType<typeof memoryApi>>;
let api: Api;
let client: LabKubeClient;
const faults = new LabFaults();
let controller: LabNodesController;

function nodeBody(name: string, opts: { cpu?: string; labels?: Record<string, string> } = {}): KObj {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: {},
    status: {
      allocatable: { cpu: opts.cpu ?? '2', memory: '4Gi', pods: '110' },
      capacity: { cpu: opts.cpu ?? '2', memory: '4Gi', pods: '110' },
      addresses: [{ type: 'InternalIP', address: '127.0.39.50' }],
    },
  };
}

const template = (app: string, extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app } },
  spec: {
    terminationGracePeriodSeconds: 30,
    containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }],
    ...extra,
  },
});

const pods = (selector: string) => client.list<KObj>('/api/v1/pods', { labelSelector: selector });
const running = (ps: KObj[]) =>
  ps.filter(
    (p) =>
      p.status?.phase === 'Running' &&
      !p.metadata.deletionTimestamp &&
      p.status.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
      ),
  );

beforeAll(async () => {
  api = await memoryApi(HOST);
  client = api.client;
  controller = new LabNodesController({
    client,
    intervalMs: 50,
    timings: {
      podStartDelayMs: 100,
      nodeReadyDelayMs: 100,
      terminationDelayMs: 100,
      leaseRenewMs: 300,
      nodeMonitorGracePeriodMs: 1500,
    },
    behaviour: (n) => faults.behaviour(n),
    clusterCidr: '10.244.0.0/16',
  });
  await client.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'shop' },
  });
  for (const n of ['w1', 'w2']) await client.create('/api/v1/nodes', nodeBody(n));
  controller.start();
});

afterAll(async () => {
  await controller?.stop();
  await api?.dispose();
});

describe('lab nodes controller against the lab API server', () => {
  it('makes new nodes Ready: renews Leases and removes the not-ready taint', async () => {
    const w1 = await until('w1 Ready without taint', async () => {
      const n = await client.get<KObj>('/api/v1/nodes/w1');
      const ready = n.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
      );
      return ready && !(n.spec?.taints ?? []).length ? n : undefined;
    });
    expect(w1.status.conditions.find((c: { type: string }) => c.type === 'Ready').reason).toBe(
      'KubeletReady',
    );
    const lease = await client.get<KObj>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/w1');
    expect(lease.spec.holderIdentity).toBe('w1');
    const first = lease.spec.renewTime;
    await until(
      'lease renewed',
      async () =>
        (await client.get<KObj>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/w1')).spec
          .renewTime !== first,
    );
  });

  it('runs a Deployment: ReplicaSet, pods spread over nodes, Running and Ready, statuses filled', async () => {
    await client.create('/apis/apps/v1/namespaces/shop/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { replicas: 4, selector: { matchLabels: { app: 'web' } }, template: template('web') },
    });
    const ready = await until('4 web pods ready', async () => {
      const r = running(await pods('app=web'));
      return r.length === 4 ? r : undefined;
    });
    const perNode = new Map<string, number>();
    for (const p of ready) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    expect([...perNode.values()]).toEqual([2, 2]);
    expect(ready[0]!.metadata.ownerReferences?.[0]?.kind).toBe('ReplicaSet');
    expect(ready.map((p) => p.status.podIP)).toEqual(
      ready.map(() => expect.stringMatching(/^10\.244\.[01]\.\d+$/)),
    );
    const d = await until('deployment status', async () => {
      const o = await client.get<KObj>('/apis/apps/v1/namespaces/shop/deployments/web');
      return o.status?.readyReplicas === 4 ? o : undefined;
    });
    expect(d.status).toMatchObject({ replicas: 4, availableReplicas: 4, observedGeneration: 1 });
  });

  it('recreates a deleted pod and finishes the terminating one', async () => {
    const [victim] = running(await pods('app=web'));
    await client.delete(`/api/v1/namespaces/shop/pods/${victim!.metadata.name}`);
    const during = await client.get<KObj>(`/api/v1/namespaces/shop/pods/${victim!.metadata.name}`);
    expect(during.metadata.deletionTimestamp).toBeDefined();
    await until(
      'victim gone',
      async () => !(await pods('app=web')).some((p) => p.metadata.name === victim!.metadata.name),
    );
    await until('4 ready again', async () => running(await pods('app=web')).length === 4);
  });

  it('fault: slow drain keeps a deleted pod Terminating for its whole grace period', async () => {
    const victim = running(await pods('app=web')).find((p) => p.spec.nodeName === 'w2')!;
    faults.add({ kind: 'slow-drain', node: 'w2' });
    try {
      const t0 = Date.now();
      await client.delete(`/api/v1/namespaces/shop/pods/${victim.metadata.name}`, { gracePeriodSeconds: 3 });
      await sleep(1_000);
      const during = await client.get<KObj>(`/api/v1/namespaces/shop/pods/${victim.metadata.name}`);
      expect(during.metadata.deletionTimestamp).toBeDefined();
      await until(
        'victim gone',
        async () => !(await pods('app=web')).some((p) => p.metadata.name === victim.metadata.name),
      );
      // deletionTimestamp has second precision: at least 2 of the 3 seconds.
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    } finally {
      faults.remove({ kind: 'slow-drain', node: 'w2' });
    }
    await until('4 ready again', async () => running(await pods('app=web')).length === 4);
  });

  it('keeps pods of a nodeSelector that no node satisfies Pending with the scheduler message', async () => {
    await client.create('/apis/apps/v1/namespaces/shop/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'pg', namespace: 'shop' },
      spec: {
        replicas: 2,
        serviceName: 'pg',
        selector: { matchLabels: { app: 'pg' } },
        template: template('pg', { nodeSelector: { pool: 'data' } }),
      },
    });
    const pending = await until('pg-0 unschedulable', async () => {
      const p = (await pods('app=pg')).find((x) => x.metadata.name === 'pg-0');
      const c = p?.status?.conditions?.find((x: { type: string }) => x.type === 'PodScheduled');
      return c?.status === 'False' ? c : undefined;
    });
    expect(pending.message).toBe(
      "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    );
    await client.patch('/api/v1/nodes/w2', { metadata: { labels: { pool: 'data' } } });
    const both = await until('pg-0 and pg-1 ready on w2', async () => {
      const r = running(await pods('app=pg'));
      return r.length === 2 ? r : undefined;
    });
    expect(both.map((p) => [p.metadata.name, p.spec.nodeName]).sort()).toEqual([
      ['pg-0', 'w2'],
      ['pg-1', 'w2'],
    ]);
  });

  it('runs a DaemonSet pod on every node, a new node included once Ready', async () => {
    await client.create('/apis/apps/v1/namespaces/shop/daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'shop' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent') },
    });
    await until('agent on w1, w2', async () => running(await pods('app=agent')).length === 2);
    await client.create('/api/v1/nodes', nodeBody('w3'));
    const three = await until('agent on 3 nodes', async () => {
      const r = running(await pods('app=agent'));
      return r.length === 3 ? r : undefined;
    });
    expect(three.map((p) => p.spec.nodeName).sort()).toEqual(['w1', 'w2', 'w3']);
  });

  it('fault: a node that never gets Ready keeps its taint and gets no pods', async () => {
    faults.add({ kind: 'node-never-ready', node: 'w4' });
    await client.create('/api/v1/nodes', nodeBody('w4'));
    await sleep(800);
    const n = await client.get<KObj>('/api/v1/nodes/w4');
    expect(n.status.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
    });
    expect(n.spec.taints.map((t: { key: string }) => t.key)).toContain('node.kubernetes.io/not-ready');
    expect(
      (await client.list<KObj>('/api/v1/pods', { fieldSelector: 'spec.nodeName=w4' })).filter(
        (p) => p.status?.phase === 'Running',
      ),
    ).toEqual([]);
  });

  it('a cordoned node gets the unschedulable taint; a drained pod moves; a silent node goes Unknown', async () => {
    await client.patch('/api/v1/nodes/w1', { spec: { unschedulable: true } });
    await until('unschedulable taint', async () =>
      ((await client.get<KObj>('/api/v1/nodes/w1')).spec.taints ?? []).some(
        (t: { key: string }) => t.key === 'node.kubernetes.io/unschedulable',
      ),
    );
    const onW1 = running(await pods('app=web')).filter((p) => p.spec.nodeName === 'w1');
    expect(onW1.length).toBeGreaterThan(0);
    for (const p of onW1) {
      await client.create(`/api/v1/namespaces/shop/pods/${p.metadata.name}/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: p.metadata.name, namespace: 'shop' },
      });
    }
    await until('web back to 4 ready, none on w1', async () => {
      const r = running(await pods('app=web'));
      return (
        r.length === 4 && r.every((p) => p.spec.nodeName !== 'w1') && (await pods('app=web')).length === 4
      );
    });
    faults.stopKubelet('w3');
    try {
      // Status and taints are two writes: wait for both.
      const unknown = await until('w3 Unknown and unreachable', async () => {
        const n = await client.get<KObj>('/api/v1/nodes/w3');
        const c = n.status.conditions.find((x: { type: string }) => x.type === 'Ready');
        const tainted = (n.spec.taints ?? []).some(
          (t: { key: string }) => t.key === 'node.kubernetes.io/unreachable',
        );
        return c.status === 'Unknown' && tainted ? n : undefined;
      });
      expect(unknown.spec.taints.map((t: { key: string; effect: string }) => `${t.key}:${t.effect}`)).toEqual(
        ['node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute'],
      );
      await until('agent on w3 not ready', async () => {
        const agentW3 = (await pods('app=agent')).find((p) => p.spec.nodeName === 'w3');
        return (
          agentW3?.status.conditions.find((c: { type: string }) => c.type === 'Ready').status === 'False'
        );
      });
    } finally {
      faults.startKubelet('w3');
    }
    await until('w3 Ready again', async () =>
      (await client.get<KObj>('/api/v1/nodes/w3')).status.conditions.some(
        (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
      ),
    );
  });

  it('deleting a Deployment garbage-collects its ReplicaSet and pods', async () => {
    await client.delete('/apis/apps/v1/namespaces/shop/deployments/web');
    await until('no web pods', async () => (await pods('app=web')).length === 0);
    expect(await client.list('/apis/apps/v1/namespaces/shop/replicasets')).toEqual([]);
  });
});
