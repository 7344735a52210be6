/**
 * The lab provisioner on a lab assembled from the example cluster: Talos control planes join
 * the kubeadm etcd (3.4) with a newer member (3.5) the way Talos does, workers register, faults
 * hold a join, decommission powers a node off. Subnet 127.0.31.x belongs to this file.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { loadSnapshot } from '../../snapshot/load.js';
import { until as poll } from '../../util/testing-until.js';
import type { KObj } from '../apiserver/object.js';
import { LabCluster } from '../cluster.js';
import { localLabControl } from '../control.js';
import { missingReason } from '../etcd/binaries.js';
import { probeReadyz } from '../lb/index.js';
import { isNodeReady, isPodReady } from '../nodes/world.js';
import { skipFor } from '../testing-binaries.js';
import { disposeLab } from '../testing-dispose.js';

const SUBNET = 31;
const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

let lab: LabCluster;
let dir: string;

/** Real etcd and API servers take longer than the in-memory controller tests. */
const until = <T>(what: string, fn: () => Promise<T | undefined | false>) =>
  poll(what, fn, { timeoutMs: 30_000, intervalMs: 150 });

async function readyz(ip: string): Promise<{ ok: boolean; detail: string }> {
  const caPem = await readFile(join(lab.etcd.pkiDir, 'ca.crt'), 'utf8');
  return probeReadyz(`${ip}:6443`, { caPem }, 1_500);
}

describe.skipIf(skipFor(missing))('lab provisioner', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-prov-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    // worker-5 was NotReady when the snapshot was taken.
    const w5 = snapshot.resources.nodes.find((n) => n.metadata.name === 'worker-5')!;
    w5.status.conditions = w5.status.conditions.map((c: { type: string }) =>
      c.type === 'Ready' ? { ...c, status: 'False', reason: 'KubeletNotReady' } : c,
    );
    lab = await LabCluster.fromSnapshot(snapshot, {
      dir,
      subnet: SUBNET,
      timings: { nodeMonitorGracePeriodMs: 2_500, leaseRenewMs: 500 },
    });
  }, 90_000);

  afterAll(() => disposeLab(lab, dir));

  it('keeps a node that was NotReady in the snapshot NotReady, and says so', async () => {
    await until('worker-1 Ready', async () =>
      isNodeReady(await lab.client.get<KObj>('/api/v1/nodes/worker-1')),
    );
    const w5 = await lab.client.get<KObj>('/api/v1/nodes/worker-5');
    expect(w5.status.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
    });
    expect(lab.info().warnings).toContain(
      'node worker-5 was NotReady in the snapshot: the lab keeps it so (fault node-never-ready)',
    );
  });

  it('joins a Talos control plane: 3.5 learner, self-promoted, own API instance, Talos Node', async () => {
    const rec = await lab.provisioner.provisionControlPlane(
      { name: 'talos-cp-1', address: '10.20.0.31' },
      { timeoutMs: 90_000 },
    );
    expect(rec).toMatchObject({
      name: 'talos-cp-1',
      flavor: 'talos',
      role: 'control-plane',
      state: 'joined',
      realAddress: '10.20.0.31',
      labAddress: `127.0.${SUBNET}.4`,
    });
    const members = await lab.etcd.memberList();
    expect(members.find((m) => m.name === 'talos-cp-1')).toMatchObject({
      isLearner: false,
      peerURLs: [`https://127.0.${SUBNET}.4:2380`],
    });
    // A 3.5 member in a 3.4 cluster: the cluster version stays 3.4 (test-infra.md).
    expect(await lab.etcd.version('talos-cp-1')).toMatchObject({
      etcdserver: expect.stringMatching(/^3\.5\./),
      etcdcluster: '3.4.0',
    });
    expect(await readyz(rec.labAddress)).toMatchObject({ ok: true });
    await lab.lb.waitFor((b) => b.length === 4 && b.every((x) => x.state === 'up'), 10_000);
    expect(lab.addresses.byName('talos-cp-1')).toEqual({
      name: 'talos-cp-1',
      role: 'control-plane',
      real: '10.20.0.31',
      lab: `127.0.${SUBNET}.4`,
    });
    const node = await until('talos-cp-1 Ready', async () => {
      const n = await lab.client.get<KObj>('/api/v1/nodes/talos-cp-1');
      return isNodeReady(n) ? n : undefined;
    });
    expect(node.status.nodeInfo).toMatchObject({
      osImage: 'Talos (v1.13.9)',
      containerRuntimeVersion: expect.stringMatching(/^containerd:\/\//),
    });
    expect(node.metadata.labels).toMatchObject({ 'node-role.kubernetes.io/control-plane': '' });
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: `127.0.${SUBNET}.4` });
    const mirror = await until('Talos mirror pods running', async () => {
      const pods = await lab.client.list<KObj>('/api/v1/namespaces/kube-system/pods', {
        fieldSelector: 'spec.nodeName=talos-cp-1',
      });
      const cp = pods.filter((p) => p.metadata.labels?.['app.kubernetes.io/managed-by'] === 'Talos');
      return cp.length === 3 && cp.every(isPodReady) ? cp : undefined;
    });
    expect(mirror.map((p) => p.metadata.name).sort()).toEqual([
      'kube-apiserver-talos-cp-1',
      'kube-controller-manager-talos-cp-1',
      'kube-scheduler-talos-cp-1',
    ]);
  });

  it('registers a Talos worker that gets Ready and its DaemonSet pods', async () => {
    const rec = await lab.provisioner.provisionWorker({
      name: 'talos-w-1',
      address: '10.20.0.41',
      labels: { 'lab.example/pool': 'data' },
    });
    expect(rec).toMatchObject({ state: 'joined', labAddress: `127.0.${SUBNET}.106` });
    await until('cilium ready on talos-w-1', async () => {
      const pods = await lab.client.list<KObj>('/api/v1/namespaces/kube-system/pods', {
        fieldSelector: 'spec.nodeName=talos-w-1',
      });
      return pods.some((p) => p.metadata.name?.startsWith('cilium-') && isPodReady(p));
    });
  });

  it('fault: a member that never catches up holds the join; the Node registers anyway', async () => {
    const fault = await lab.inject({ kind: 'member-never-catches-up', node: 'talos-cp-2' });
    const rec = await lab.provisioner.provisionControlPlane(
      { name: 'talos-cp-2', address: '10.20.0.32' },
      { wait: false },
    );
    expect(rec.state).toBe('joining');
    await until('stalled', async () => lab.provisioner.node('talos-cp-2')?.state === 'stalled');
    const members = await lab.etcd.memberList();
    // An added learner that never started: no name yet, still a learner.
    expect(members.find((m) => m.peerURLs.includes(`https://127.0.${SUBNET}.5:2380`))).toMatchObject({
      isLearner: true,
    });
    const err = await lab.provisioner.waitJoined('talos-cp-2', 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).kind).toBe('gate');
    expect((await readyz(`127.0.${SUBNET}.5`)).ok).toBe(false);
    await lab.provisioner.decommission('talos-cp-2');
    expect(lab.provisioner.node('talos-cp-2')?.state).toBe('decommissioned');
    await fault.clear();
    // What ferry would have to do: remove the leftover learner.
    await lab.etcd.removeMember('talos-cp-2');
  });

  it('fault: a slow boot keeps the machine out of etcd and the API until it has booted', async () => {
    const fault = await lab.inject({ kind: 'slow-boot', node: 'talos-cp-9', seconds: 2 });
    const t0 = Date.now();
    const rec = await lab.provisioner.provisionControlPlane(
      { name: 'talos-cp-9', address: '10.20.0.39' },
      { wait: false },
    );
    expect(rec.state).toBe('booting');
    const peer = `https://${rec.labAddress}:2380`;
    expect((await lab.etcd.memberList()).some((m) => m.peerURLs.includes(peer))).toBe(false);
    await expect(lab.client.get<KObj>('/api/v1/nodes/talos-cp-9')).rejects.toMatchObject({ status: 404 });
    await lab.provisioner.waitJoined('talos-cp-9', 60_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    expect((await lab.etcd.memberList()).find((m) => m.peerURLs.includes(peer))).toMatchObject({
      name: 'talos-cp-9',
      isLearner: false,
    });
    await fault.clear();

    // Powered off while booting: it never joins, and its allotted member is forgotten.
    await lab.inject({ kind: 'slow-boot', node: 'talos-cp-8', seconds: 60 });
    const off = await lab.provisioner.provisionControlPlane(
      { name: 'talos-cp-8', address: '10.20.0.38' },
      { wait: false },
    );
    await lab.provisioner.decommission('talos-cp-8');
    expect(lab.provisioner.node('talos-cp-8')?.state).toBe('decommissioned');
    expect(lab.etcd.members().map((m) => m.name)).not.toContain('talos-cp-8');
    const offPeer = `https://${off.labAddress}:2380`;
    expect((await lab.etcd.memberList()).some((m) => m.peerURLs.includes(offPeer))).toBe(false);

    await lab.provisioner.decommission('talos-cp-9');
    await lab.etcd.removeMember('talos-cp-9');
    await lab.client.delete('/api/v1/nodes/talos-cp-9');
  });

  it('decommission powers a node off: out of the LB, API and etcd stopped, node goes Unknown', async () => {
    await lab.provisioner.decommission('talos-cp-1');
    expect(lab.lb.backends().map((b) => b.address)).not.toContain(`127.0.${SUBNET}.4:6443`);
    expect((await readyz(`127.0.${SUBNET}.4`)).ok).toBe(false);
    expect(lab.etcd.member('talos-cp-1').state).toBe('stopped');
    // Status and taints are two writes of the node lifecycle controller: wait for both.
    await until('talos-cp-1 Unknown and unreachable', async () => {
      const n = await lab.client.get<KObj>('/api/v1/nodes/talos-cp-1');
      const unknown =
        n.status.conditions.find((c: { type: string }) => c.type === 'Ready')?.status === 'Unknown';
      return (
        unknown &&
        (n.spec.taints ?? []).some((t: { key: string }) => t.key === 'node.kubernetes.io/unreachable')
      );
    });
    // The cluster keeps serving through the kubeadm instances.
    expect((await lab.client.list<KObj>('/api/v1/nodes')).length).toBe(11);
  });

  // Last: it adds a Node the counts above do not expect.
  it("a replacement through the lab control takes the machine config's labels and taints", async () => {
    const config = join(dir, 'worker-edge.yaml');
    await writeFile(
      config,
      'machine:\n  type: worker\n  nodeLabels:\n    lab.example/pool: edge\n  nodeTaints:\n    lab.example/edge: "true:NoSchedule"\n',
    );
    const { name } = await localLabControl(lab).provision({
      replaces: 'worker-4',
      name: 'talos-w-edge',
      address: '10.20.0.44',
      role: 'worker',
      talosVersion: 'v1.13.9',
      machineConfig: config,
      endpoint: null,
      claimed: [],
    });
    const node = await lab.client.get<KObj>(`/api/v1/nodes/${name}`);
    expect(node.metadata.labels?.['lab.example/pool']).toBe('edge');
    // Beside the node controller's not-ready taint while it boots.
    expect((node.spec as { taints?: unknown[] }).taints).toContainEqual({
      key: 'lab.example/edge',
      value: 'true',
      effect: 'NoSchedule',
    });
  });
});
