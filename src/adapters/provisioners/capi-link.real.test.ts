/**
 * A Machine's Node link through the lab's Cluster API (its reconciler, behaving as core Cluster
 * API does: docs/knowledge/capi.md §4.9) on a lab API server (127.0.173.1, this file's): after an
 * adoption as ferry made it before it wrote the `<cluster>-kubeconfig` Secret and the
 * TalosControlPlane's initialized status, a worker's Machine boots but never gets its nodeRef, and
 * the capi provisioner's wait stops naming both causes and re-running adoption as the fix; the
 * status written on the paused TalosControlPlane alone changes nothing (the Cluster ignores a
 * paused object's events); adoption run again writes the Secret and touches the Cluster, and the
 * same request, resumed, gets its Node.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterControlPlaneInitialized, nodeRefName } from '../../capi/view.js';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { installLabCapiCrds } from '../../lab/capi/crds.js';
import { LabCapiReconciler, type LabMachinePort } from '../../lab/capi/reconciler.js';
import type { ActionContext, ProvisionRequest } from '../../ports/run.js';
import { adopt } from '../capi/adopt-apply.js';
import { startTestMgmt, type TestMgmt } from '../capi/testing-mgmt.js';
import { KubeAdmin } from '../kube/admin.js';
import { CapiProvisioner } from './capi.js';

const crds = CrdValidator.fromSchemas();
const MERGE = 'application/merge-patch+json';
const TCP =
  '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/lab/taloscontrolplanes/lab-control-plane';
const KUBECONFIG_SECRET = '/api/v1/namespaces/lab/secrets/lab-kubeconfig';

let m: TestMgmt;
let lab: LabCapiReconciler;

/** The infrastructure: each VM registers its Node (the lab API server is the workload cluster too). */
const vms: LabMachinePort = {
  async provisionMachine({ name, labels }) {
    const address = '10.20.0.50';
    await m.req.request('POST', '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels },
        status: { addresses: [{ type: 'InternalIP', address }] },
      },
    });
    return { name, address };
  },
  deprovisionMachine: async () => undefined,
};

beforeAll(async () => {
  m = await startTestMgmt('127.0.173.1');
  await installLabCapiCrds(m.req);
  lab = new LabCapiReconciler({ api: m.req, machines: vms, namespace: 'lab', intervalMs: 50 });
});
afterAll(async () => {
  await lab?.stop();
  await m?.stop();
});

const ctx = (): ActionContext => ({
  stepId: 't',
  timeoutMs: 30_000,
  signal: new AbortController().signal,
  log: () => undefined,
});
const worker1: ProvisionRequest = {
  replaces: 'worker-1',
  name: null,
  address: null,
  role: 'worker',
  talosVersion: 'v1.12.0',
  machineConfig: null,
  endpoint: null,
  claimed: ['worker-1'],
};
const provisioner = () =>
  new CapiProvisioner({
    api: m.api,
    workload: new KubeAdmin(m.req),
    etcd: { observe: () => Promise.reject(new Error('no etcd for workers')) },
    decommissioner: {
      kind: 'none',
      provision: () => Promise.reject(new Error('no')),
      decommission: () => Promise.resolve(),
    },
    crds,
    templates: m.kit.filter((x) => x.kind === 'ProxmoxMachineTemplate'),
    kitDir: 'kit',
    pollMs: 50,
    linkGraceMs: 1_500,
  });
const workers = async () => {
  const md = m.api.names.machineDeployments.find((d) => d.replaces.includes('worker-1'))!;
  return m.api.machines({ machineDeployment: md.name });
};
const initialized = async () => clusterControlPlaneInitialized(await m.api.clusterObject());

describe("a Machine's Node under the lab's Cluster API", () => {
  it('the old adoption: no nodeRef, the wait names why; the status on the paused TalosControlPlane alone is not seen; adoption again links it', async () => {
    await adopt(m.req, m.kit, { kubeadmMembersRemain: true, crds });
    // What adoption left before it wrote what the paused provider would.
    await m.req.request('DELETE', KUBECONFIG_SECRET);
    await m.req.request('PATCH', `${TCP}/status`, {
      body: { status: { initialized: null, ready: null } },
      contentType: MERGE,
    });
    lab.start();

    const err = await provisioner()
      .provision(worker1, ctx())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).kind).toBe('gate');
    expect((err as FerryError).message).toMatch(/Secret lab\/lab-kubeconfig does not exist/);
    expect((err as FerryError).message).toMatch(/Cluster lab\/lab is not ControlPlaneInitialized/);
    expect((err as FerryError).remediation).toMatch(/ferry capi adopt kit --mgmt-kubeconfig/);
    const [machine] = await workers();
    expect(machine?.status?.['phase']).toBe('Provisioned');
    expect(nodeRefName(machine!)).toBeUndefined();
    expect(lab.events).toContainEqual(
      expect.objectContaining({
        kind: 'node-link-blocked',
        machine: machine!.metadata.name,
        why: expect.stringMatching(/Secret "lab-kubeconfig" not found/),
      }),
    );

    // The status alone, on the paused TalosControlPlane: the Cluster does not see it.
    await m.req.request('PATCH', `${TCP}/status`, {
      body: { status: { initialized: true, ready: true } },
      contentType: MERGE,
    });
    const passes = lab.passes;
    while (lab.passes < passes + 5) await sleep(50);
    expect(await initialized()).toBe(false);

    // Adoption again: the Secret, the touch; the resumed request takes the same Machine.
    const again = await adopt(m.req, m.kit, { kubeadmMembersRemain: true, crds });
    expect(again.applied.join('\n')).toMatch(/Secret lab\/lab-kubeconfig[\s\S]*asked to reconcile/);
    const r = await provisioner().provision(worker1, ctx());
    expect(r).toEqual({ name: machine!.metadata.name, address: '10.20.0.50' });
    expect(await initialized()).toBe(true);
    expect(lab.events.map((e) => e.kind)).toContain('control-plane-initialized');
    expect(await workers()).toHaveLength(1);
  });
});
