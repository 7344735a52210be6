/**
 * The assembled lab on the example cluster, with real etcd (3.4) members: what `ferry lab up`
 * promises. Subnet 127.0.30.x belongs to this file.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadSnapshot } from '../snapshot/load.js';
import type { KObj } from './apiserver/object.js';
import { LabCluster } from './cluster.js';
import { missingReason } from './etcd/binaries.js';
import { probeReadyz } from './lb/index.js';
import { LabApiError } from './nodes/client.js';
import { skipFor } from './testing-binaries.js';
import { disposeLab } from './testing-dispose.js';

const SUBNET = 30;
const missing = await missingReason('3.4');
const KUBECTL = '/usr/bin/kubectl';

let lab: LabCluster;
let dir: string;
let assembledMs = 0;

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(KUBECTL, ['--kubeconfig', lab.kubeconfigPath, ...args], {
    timeout: 30_000,
  });
  return stdout;
}

async function readyz(node: string): Promise<boolean> {
  const url = lab.info().apiServers.find((a) => a.node === node)!.url;
  const caPem = await readFile(join(lab.etcd.pkiDir, 'ca.crt'), 'utf8');
  return (await probeReadyz(new URL(url).host, { caPem }, 1_500)).ok;
}

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(skipFor(missing))('LabCluster from examples/lab-cluster', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-cluster-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    const t0 = Date.now();
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, source: 'examples/lab-cluster' });
    assembledMs = Date.now() - t0;
  }, 90_000);

  afterAll(() => disposeLab(lab, dir));

  it('settles well within a minute, and kubectl lists its nodes and pods', async () => {
    const settled = await lab.waitSettled(45_000);
    expect(settled).toEqual({ settled: true, pending: [] });
    expect(assembledMs).toBeLessThan(60_000);
    const doc = JSON.parse(await kubectl('get', 'nodes,pods', '-A', '-o', 'json')) as { items: KObj[] };
    const nodes = doc.items.filter((o) => o.kind === 'Node');
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
      'worker-1',
      'worker-2',
      'worker-3',
      'worker-4',
      'worker-5',
    ]);
    expect(
      nodes.every((n) =>
        n.status.conditions.some(
          (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
        ),
      ),
    ).toBe(true);
    const pods = doc.items.filter((o) => o.kind === 'Pod');
    const running = (prefix: string) =>
      pods.filter(
        (p) =>
          `${p.metadata.namespace}/${p.metadata.name}`.startsWith(prefix) && p.status.phase === 'Running',
      );
    expect(running('shop/checkout-')).toHaveLength(2);
    expect(
      running('shop/postgres-')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['postgres-0', 'postgres-1', 'postgres-2']);
    // The StatefulSet's nodeSelector (lab.example/pool=data) is honoured.
    expect(
      running('shop/postgres-').every((p) => ['worker-3', 'worker-4', 'worker-5'].includes(p.spec.nodeName)),
    ).toBe(true);
    expect(
      running('kube-system/cilium-').filter((p) => p.metadata.ownerReferences?.[0]?.kind === 'DaemonSet'),
    ).toHaveLength(8);
    expect(running('default/netshoot')).toHaveLength(1);
    const table = await kubectl('get', 'nodes,pods', '-A');
    expect(table).toContain('worker-5');
    expect(table).toContain('checkout-');
  });

  it('never hands out a real address: kubeconfig, nodes, etcd and API servers are on 127.0.30.x', async () => {
    const kc = parse(await readFile(lab.kubeconfigPath, 'utf8'));
    expect(kc.clusters[0].cluster.server).toBe(`https://127.0.${SUBNET}.254:6443`);
    const nodes = await lab.client.list<KObj>('/api/v1/nodes');
    const ips = nodes.map(
      (n) => n.status.addresses.find((a: { type: string }) => a.type === 'InternalIP').address,
    );
    expect(ips.every((ip: string) => ip.startsWith(`127.0.${SUBNET}.`))).toBe(true);
    const info = lab.info();
    expect(info.etcd.endpoints).toEqual([1, 2, 3].map((i) => `https://127.0.${SUBNET}.${i}:2379`));
    expect(info.addresses).toContainEqual({
      name: 'cp-1',
      role: 'control-plane',
      real: '10.20.0.11',
      lab: `127.0.${SUBNET}.1`,
    });
    expect(info.addresses).toContainEqual({
      name: 'endpoint',
      role: 'endpoint',
      real: 'k8s-api.lab.example:6443',
      lab: `127.0.${SUBNET}.254`,
    });
    expect(info.etcd.standIn).toMatchObject({ snapshot: '3.5.16', lab: expect.stringMatching(/^3\.4\./) });
    expect(info.etcd.standIn.note).toContain('standing in for 3.5.16');
  });

  it('writes etcd client settings that etcdctl can use as they are', async () => {
    const settings = JSON.parse(await readFile(join(dir, 'etcd-client.json'), 'utf8'));
    expect(settings).toEqual(lab.etcdClientSettings());
    const env = Object.fromEntries(
      (await readFile(join(dir, 'etcdctl.env'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => l.split('=') as [string, string]),
    );
    const { stdout } = await promisify(execFile)('/usr/bin/etcdctl', ['member', 'list', '-w', 'json'], {
      env: { PATH: process.env.PATH, ...env },
      timeout: 20_000,
    });
    // Member IDs exceed 2^53: only names and URLs are compared.
    const names = [...stdout.matchAll(/"name":"([^"]+)"/g)].map((m) => m[1]).sort();
    expect(names).toEqual(['cp-1', 'cp-2', 'cp-3']);
  });

  it('answers an eviction against a PDB with no room with 429 and the DisruptionBudget cause', async () => {
    const [pod] = await lab.client.list<KObj>('/api/v1/namespaces/shop/pods', {
      labelSelector: 'app.kubernetes.io/name=checkout',
    });
    const err = await lab.client
      .create(`/api/v1/namespaces/shop/pods/${pod!.metadata.name}/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod!.metadata.name, namespace: 'shop' },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LabApiError);
    expect((err as LabApiError).status).toBe(429);
    expect((err as LabApiError).body).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: 'The disruption budget checkout needs 2 healthy pods and has 2 currently',
          },
        ],
      },
    });
  });

  it('an injected eviction refusal turns an allowed eviction into 429', async () => {
    const [pod] = await lab.client.list<KObj>('/api/v1/namespaces/shop/pods', {
      labelSelector: 'app.kubernetes.io/name=frontend',
    });
    const fault = await lab.inject({
      kind: 'eviction-refused',
      namespace: 'shop',
      podNamePrefix: 'frontend-',
    });
    const evict = () =>
      lab.client.create(`/api/v1/namespaces/shop/pods/${pod!.metadata.name}/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: pod!.metadata.name, namespace: 'shop' },
      });
    expect(((await evict().catch((e: unknown) => e)) as LabApiError).status).toBe(429);
    await fault.clear();
    await evict();
    await until('frontend back to 3 ready', async () => {
      const d = await lab.client.get<KObj>('/apis/apps/v1/namespaces/shop/deployments/frontend');
      const pods = await lab.client.list<KObj>('/api/v1/namespaces/shop/pods', {
        labelSelector: 'app.kubernetes.io/name=frontend',
      });
      return d.status?.readyReplicas === 3 && !pods.some((p) => p.metadata.name === pod!.metadata.name);
    });
  });

  it("stopping a control plane's etcd member fails exactly its API instance; the LB serves from the others", async () => {
    expect(await Promise.all(['cp-1', 'cp-2', 'cp-3'].map(readyz))).toEqual([true, true, true]);
    await lab.stopEtcdMember('cp-2');
    await until('cp-2 /readyz failing', async () => !(await readyz('cp-2')));
    expect(await readyz('cp-1')).toBe(true);
    expect(await readyz('cp-3')).toBe(true);
    await lab.lb.waitFor(
      (b) => b.find((x) => x.address.startsWith(`127.0.${SUBNET}.2:`))?.state === 'down',
      10_000,
    );
    expect(lab.lb.healthy().sort()).toEqual([`127.0.${SUBNET}.1:6443`, `127.0.${SUBNET}.3:6443`]);
    // Through the endpoint every request still succeeds.
    for (let i = 0; i < 15; i++) {
      lab.client.resetConnections();
      expect((await lab.client.list<KObj>('/api/v1/nodes')).length).toBe(8);
    }
    await lab.etcd.restart('cp-2');
    await until('cp-2 /readyz ok again', () => readyz('cp-2'));
    await lab.lb.waitFor((b) => b.every((x) => x.state === 'up'), 10_000);
  });

  it('fault: a process crash kills the member and the API instance; clearing it brings them back', async () => {
    await lab.lb.waitFor((b) => b.every((x) => x.state === 'up'), 30_000);
    const fault = await lab.inject({ kind: 'process-crash', node: 'cp-1' });
    try {
      expect(lab.etcd.member('cp-1').state).toBe('crashed');
      expect(await readyz('cp-1')).toBe(false);
      expect(lab.faults.behaviour('cp-1').kubeletStopped).toBe(true);
      await lab.lb.waitFor(
        (b) => b.find((x) => x.address.startsWith(`127.0.${SUBNET}.1:`))?.state === 'down',
        10_000,
      );
      // If cp-1's member led, the others elect a leader first (their /readyz fails meanwhile, as a
      // kube-apiserver's does): the endpoint serves again once they are back in rotation.
      await lab.lb.waitFor((b) => b.filter((x) => x.state === 'up').length === 2, 30_000);
      // Two instances up at the balancer's last look; one may still flap while the election
      // settles, and a connection to it is reset: the endpoint must serve again, not at once.
      await until('the nodes listed through the load balancer', async () => {
        return (await lab.client.list<KObj>('/api/v1/nodes')).length === 8;
      });
    } finally {
      await fault.clear();
    }
    expect(lab.etcd.member('cp-1').state).toBe('running');
    await until('cp-1 /readyz ok', () => readyz('cp-1'));
    await lab.lb.waitFor((b) => b.every((x) => x.state === 'up'), 10_000);
  });

  it('fault: an API instance down is taken out of the load balancer, then comes back', async () => {
    await lab.lb.waitFor((b) => b.every((x) => x.state === 'up'), 30_000);
    const fault = await lab.inject({ kind: 'api-down', node: 'cp-3' });
    try {
      expect(await readyz('cp-3')).toBe(false);
      await lab.lb.waitFor(
        (b) => b.find((x) => x.address.startsWith(`127.0.${SUBNET}.3:`))?.state === 'down',
        10_000,
      );
      // Two instances up at the balancer's last look; one may still flap while the election
      // settles, and a connection to it is reset: the endpoint must serve again, not at once.
      await until('the nodes listed through the load balancer', async () =>
        lab.client.list<KObj>('/api/v1/nodes').then(
          (nodes) => nodes.length === 8,
          () => false,
        ),
      );
    } finally {
      await fault.clear();
    }
    await until('cp-3 /readyz ok', () => readyz('cp-3'));
    expect(existsSync(lab.kubeconfigPath)).toBe(true);
  });
});
