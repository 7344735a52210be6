/**
 * H4 on a real lab (examples/lab-cluster, real etcd; subnet 127.0.161.x belongs to this file):
 * right after adoption no control-plane Machine exists, and the lab's Cluster API then deletes a
 * worker Machine without draining it and leaves its Node. Two kubeadm workers are handed to the
 * MachineDeployment as Machines (as a hand adoption would). Naive: Cluster API removes worker-3 —
 * powered off with its pods, none evicted. ferry: workerRemoval says ferry drains worker-2 itself
 * (Eviction API, budgets respected) before it goes; every one of its pods is evicted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { KubeAdmin } from '../../adapters/kube/admin.js';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { workerRemoval } from '../../capi/worker-removal.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { drainNodes } from '../../run/drain-nodes.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { KubeObject } from '../../snapshot/model.js';
import { LabCluster } from '../cluster.js';
import { missingReason } from '../etcd/binaries.js';
import { skipFor } from '../testing-binaries.js';
import type { LabCapiReconciler } from './reconciler.js';

const SUBNET = 161;
const missing = await missingReason('3.4');
const NS = 'h4';
const CAPI = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${NS}`;
const MD = `${CAPI}/machinedeployments/lab-workers`;
const MERGE = 'application/merge-patch+json';

let lab: LabCluster;
let dir: string;
let req: KubeRequester;
let r: LabCapiReconciler;

const patch = (path: string, body: unknown) => req.request('PATCH', path, { body, contentType: MERGE });
const list = async (path: string, query: Record<string, string> = {}) =>
  ((await req.request('GET', path, { query })) as { items: KubeObject[] }).items;

/** The pods a drain must move off `node`: not DaemonSet pods, not mirror pods. */
async function drainablePods(node: string): Promise<string[]> {
  return (await list('/api/v1/pods', { fieldSelector: `spec.nodeName=${node}` }))
    .filter(
      (p) =>
        p.metadata.deletionTimestamp === undefined &&
        !p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet') &&
        p.metadata.annotations?.['kubernetes.io/config.mirror'] === undefined,
    )
    .map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
    .sort();
}

const evicted = () =>
  new Set(
    lab.evictionLog
      .all()
      .filter((e) => e.outcome === 'evicted')
      .map((e) => `${e.namespace}/${e.pod}`),
  );

/** A kubeadm worker as a Machine of the MachineDeployment's MachineSet, its Node referenced. */
async function handOver(node: string, machineSet: KubeObject): Promise<void> {
  await req.request('POST', `${CAPI}/machines`, {
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: node,
        namespace: NS,
        labels: {
          'cluster.x-k8s.io/cluster-name': 'lab',
          'cluster.x-k8s.io/deployment-name': 'lab-workers',
          'cluster.x-k8s.io/set-name': machineSet.metadata.name,
        },
        finalizers: ['machine.cluster.x-k8s.io'],
        ownerReferences: [
          {
            apiVersion: machineSet.apiVersion,
            kind: 'MachineSet',
            name: machineSet.metadata.name,
            uid: machineSet.metadata.uid,
            controller: true,
          },
        ],
      },
      spec: {
        clusterName: 'lab',
        bootstrap: { dataSecretName: node },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'ProxmoxMachine',
          name: node,
        },
      },
    },
  });
  await patch(`${CAPI}/machines/${node}/status`, { status: { nodeRef: { name: node }, phase: 'Running' } });
}

describe.skipIf(skipFor(missing))('H4: a worker removed while no control-plane Machine exists', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-h4-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, canary: false });
    expect((await lab.waitSettled(60_000)).settled).toBe(true);
    req = createRequester(loadKubeconfig(lab.kubeconfigPath));
    // shop/checkout's PDB (minAvailable 2 of 2) allows no disruption: wherever the scheduler put
    // its pods, a drain of that node waits forever. A third replica, as --surge-replicas adds,
    // keeps this test about who drains, not about that budget.
    await patch('/apis/apps/v1/namespaces/shop/deployments/checkout', { spec: { replicas: 3 } });
    expect((await lab.waitSettled(60_000)).settled).toBe(true);
    const budget = (await req.request(
      'GET',
      '/apis/policy/v1/namespaces/shop/poddisruptionbudgets/checkout',
    )) as KubeObject;
    expect(budget.status?.['disruptionsAllowed']).toBe(1);
    r = await lab.capiReconciler({ namespace: NS });
    await adopt(req, labKitObjects(NS), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    await r.pass(); // the MachineDeployment's MachineSet, no Machines (replicas 0)
    const [ms] = await list(`${CAPI}/machinesets`);
    for (const w of ['worker-2', 'worker-3']) await handOver(w, ms!);
    await patch(MD, { spec: { replicas: 2 } });
    await r.pass();
    expect((await list(`${CAPI}/machines`)).map((m) => m.metadata.name).sort()).toEqual([
      'worker-2',
      'worker-3',
    ]);
  }, 180_000);

  afterAll(async () => {
    await lab?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("ferry's guard: with no control-plane Machine, ferry drains the old worker itself; every pod is evicted", async () => {
    const pods = await drainablePods('worker-2');
    expect(pods.length).toBeGreaterThan(0);
    const cp = await list(`${CAPI}/machines`, { labelSelector: 'cluster.x-k8s.io/control-plane' });
    const d = workerRemoval({ kubeadm: true, activeControlPlaneMachines: cp.length });
    if (d.kind === 'ferry-drains') {
      const admin = new KubeAdmin(req);
      await admin.setUnschedulable('worker-2', true);
      await drainNodes(admin, {
        nodes: ['worker-2'],
        concurrency: 1,
        // Below the test's own timeout: a drain that hangs says what held it.
        timeoutMs: 60_000,
        signal: new AbortController().signal,
        evictBarePods: true,
        record: () => {},
      });
      await lab.deprovisionMachine('worker-2');
    } else {
      // Left to Cluster API: the MachineDeployment gives the worker up.
      await patch(`${CAPI}/machines/worker-2`, {
        metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } },
      });
      await patch(MD, { spec: { replicas: 1 } });
      await r.pass();
    }
    const out = evicted();
    expect(pods.filter((p) => !out.has(p))).toEqual([]);
    expect(r.events.filter((e) => e.kind === 'machine-deleted')).toEqual([]);
  }, 120_000);

  it('naive: Cluster API removes the worker Machine — no drain, the node powered off with its pods, its Node left', async () => {
    const pods = await drainablePods('worker-3');
    expect(pods.length).toBeGreaterThan(0);
    await patch(`${CAPI}/machines/worker-3`, {
      metadata: { annotations: { 'cluster.x-k8s.io/delete-machine': 'yes' } },
    });
    await patch(MD, { spec: { replicas: 1 } });
    await r.pass();
    expect(r.events.filter((e) => e.kind === 'machine-deleted')).toEqual([
      {
        kind: 'machine-deleted',
        namespace: NS,
        machine: 'worker-3',
        node: 'worker-3',
        drained: false,
        nodeDeleted: false,
        skipped: expect.stringMatching(/no active control-plane Machine/),
      },
    ]);
    expect(lab.provisioner.node('worker-3')?.state).toBe('decommissioned');
    const out = evicted();
    expect(pods.filter((p) => out.has(p))).toEqual([]);
    expect(await drainablePods('worker-3')).toEqual(pods);
    expect((await req.request('GET', '/api/v1/nodes/worker-3')) as KubeObject).toMatchObject({
      metadata: { name: 'worker-3' },
    });
    expect((await list(`${CAPI}/machines`)).map((m) => m.metadata.name)).not.toContain('worker-3');
  });
});
