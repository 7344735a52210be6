import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { providerIdGate } from '../../capi/providerid-gate.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { PAUSED_ANNOTATION } from '../../capi/view.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { KubeObject } from '../../snapshot/model.js';
import { LabCluster } from '../cluster.js';
import { missingReason } from '../etcd/binaries.js';
import { skipFor } from '../testing-binaries.js';
import type { LabCapiReconciler } from './reconciler.js';

const SUBNET = 160;
const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const INFRA = '/apis/infrastructure.cluster.x-k8s.io/v1alpha2';
const BOOT = '/apis/bootstrap.cluster.x-k8s.io/v1alpha3';
const TCP = (ns: string) =>
  `/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/${ns}/taloscontrolplanes/lab-control-plane`;
const MD = (ns: string) => `${CAPI}/namespaces/${ns}/machinedeployments/lab-workers`;
const MERGE = 'application/merge-patch+json';

let lab: LabCluster;
let dir: string;
let req: KubeRequester;
let crds: CrdValidator;

const get = (path: string) => req.request('GET', path) as Promise<KubeObject>;
const list = async (path: string, labelSelector?: string) =>
  (
    (await req.request('GET', path, labelSelector ? { query: { labelSelector } } : {})) as {
      items: KubeObject[];
    }
  ).items;
const patch = (path: string, body: unknown) => req.request('PATCH', path, { body, contentType: MERGE });
const machines = (ns: string, extra = '') =>
  list(`${CAPI}/namespaces/${ns}/machines`, `cluster.x-k8s.io/cluster-name=lab${extra}`);

/** Passes until `done` holds (at most 60 s). */
async function passUntil(r: LabCapiReconciler, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    await r.pass();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The reconciler's own objects as the server holds them, checked against the CRDs. */
function crdErrors(objs: KubeObject[]): string[] {
  return objs.flatMap((o) => crds.validate(o).map((e) => `${e.document} ${e.path}: ${e.message}`));
}

describe.skipIf(skipFor(missing))('the lab Cluster API reconciler', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-capi-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, canary: false });
    req = createRequester(loadKubeconfig(lab.kubeconfigPath));
    crds = CrdValidator.fromSchemas();
  }, 120_000);

  afterAll(async () => {
    await lab?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('a paused TalosControlPlane makes nothing; unpaused, 0→1 makes a Machine and a Talos control plane named like it', async () => {
    const r = await lab.capiReconciler({ namespace: 'capi' });
    await adopt(req, labKitObjects('capi'), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    // Paused (as adoption leaves it): replicas raised, nothing happens.
    await patch(TCP('capi'), { spec: { replicas: 1 } });
    await r.pass();
    await r.pass();
    expect(await machines('capi')).toEqual([]);
    expect((await get(TCP('capi'))).status?.replicas).toBeUndefined();

    // ferry's step: unpause for one scale step, re-pause once the Machine exists (the kubeadm
    // members remain, and the audit of an unpaused control plane would remove them).
    await patch(TCP('capi'), { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
    await r.pass();
    await patch(TCP('capi'), { metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } } });
    const [m] = await machines('capi', ',cluster.x-k8s.io/control-plane');
    expect(m?.metadata.name).toMatch(/^lab-control-plane-[a-z0-9]{5}$/);
    const name = m!.metadata.name;
    expect(m!.metadata.ownerReferences).toMatchObject([
      { kind: 'TalosControlPlane', name: 'lab-control-plane' },
    ]);
    expect((await get(TCP('capi'))).status).toMatchObject({ replicas: 1, version: 'v1.32.4' });
    expect(lab.provisioner.node(name)).toMatchObject({ role: 'control-plane', flavor: 'talos' });

    await passUntil(
      r,
      'the nodeRef',
      async () => (await get(`${CAPI}/namespaces/capi/machines/${name}`)).status?.nodeRef !== undefined,
    );
    const running = await get(`${CAPI}/namespaces/capi/machines/${name}`);
    expect(running.status).toMatchObject({ nodeRef: { name }, phase: 'Running' });
    expect(running.spec.providerID).toBe(`proxmox://${running.metadata.uid}`);
    expect((await get(`/api/v1/nodes/${name}`)).spec.providerID).toBe(running.spec.providerID);
    const infra = await get(`${INFRA}/namespaces/capi/proxmoxmachines/${name}`);
    expect(infra.spec).toMatchObject({
      sourceNode: 'pve1',
      templateID: 9000,
      providerID: running.spec.providerID,
    });
    const tc = await get(`${BOOT}/namespaces/capi/talosconfigs/${name}`);
    expect(tc.spec).toEqual((await get(TCP('capi'))).spec.controlPlaneConfig.controlplane);
    expect(crdErrors([running, infra, tc, await get(TCP('capi'))])).toEqual([]);
    // The Talos member joined under the Machine's name; the kubeadm members are all still there.
    await lab.provisioner.waitJoined(name, 60_000);
    expect(
      lab.etcd
        .members()
        .map((x) => x.name)
        .sort(),
    ).toEqual(['cp-1', 'cp-2', 'cp-3', name].sort());
    expect(r.events.filter((e) => e.kind === 'error' || e.kind === 'etcd-audit')).toEqual([]);
  });

  it('a MachineDeployment 0→2 makes a MachineSet, two Machines and Talos workers with the pool labels and taints', async () => {
    const r = await lab.capiReconciler({ namespace: 'capi' });
    const tct = `${BOOT}/namespaces/capi/talosconfigtemplates/lab-workers`;
    const pool =
      'machine:\n  nodeLabels:\n    lab.example/pool: blue\n  nodeTaints:\n    dedicated: blue:NoSchedule\n';
    await patch(tct, { spec: { template: { spec: { strategicPatches: [pool] } } } });
    await patch(MD('capi'), { spec: { replicas: 2 } });
    const workers = () => machines('capi', ',cluster.x-k8s.io/deployment-name=lab-workers');
    await passUntil(r, 'two workers with nodeRefs', async () => {
      const ms = await workers();
      return ms.length === 2 && ms.every((m) => m.status?.nodeRef);
    });
    const [set, ...more] = await list(`${CAPI}/namespaces/capi/machinesets`);
    expect(more).toEqual([]);
    expect(set!.metadata.ownerReferences).toMatchObject([{ kind: 'MachineDeployment', name: 'lab-workers' }]);
    const ms = await workers();
    for (const m of ms) {
      expect(m.metadata.name).toMatch(new RegExp(`^${set!.metadata.name}-[a-z0-9]{5}$`));
      expect(m.metadata.labels?.['cluster.x-k8s.io/set-name']).toBe(set!.metadata.name);
      expect(lab.provisioner.node(m.metadata.name)).toMatchObject({ role: 'worker', flavor: 'talos' });
      const node = await get(`/api/v1/nodes/${m.metadata.name}`);
      expect(node.metadata.labels?.['lab.example/pool']).toBe('blue');
      expect(node.spec.taints).toContainEqual({ key: 'dedicated', value: 'blue', effect: 'NoSchedule' });
      expect(m.status.phase).toBe('Running');
    }
    await r.pass();
    expect((await get(MD('capi'))).status).toMatchObject({ replicas: 2, readyReplicas: 2, phase: 'Running' });
    const infra = await Promise.all(
      ms.map((m) => get(`${INFRA}/namespaces/capi/proxmoxmachines/${m.metadata.name}`)),
    );
    const configs = await Promise.all(
      ms.map((m) => get(`${BOOT}/namespaces/capi/talosconfigs/${m.metadata.name}`)),
    );
    expect(crdErrors([set!, ...(await workers()), ...infra, ...configs, await get(MD('capi'))])).toEqual([]);

    // A control-plane Machine exists now: scaling down drains the worker and deletes its Node
    // (without one, Cluster API skips both: h4.test.ts).
    await patch(MD('capi'), { spec: { replicas: 1 } });
    await passUntil(r, 'the worker deleted', async () => r.events.some((e) => e.kind === 'machine-deleted'));
    const gone = r.events.find((e) => e.kind === 'machine-deleted');
    expect(gone).toMatchObject({ drained: true, nodeDeleted: true });
    expect(gone).not.toHaveProperty('skipped');
    const victim = gone?.kind === 'machine-deleted' ? gone.machine : '';
    expect(lab.provisioner.node(victim)?.state).toBe('decommissioned');
    await expect(get(`/api/v1/nodes/${victim}`)).rejects.toMatchObject({ status: 404 });
    expect((await workers()).map((m) => m.metadata.name)).not.toContain(victim);
    expect(r.events.filter((e) => e.kind === 'error')).toEqual([]);
  });

  it('without a cloud controller manager a new Machine stays Provisioned without a providerID', async () => {
    const r = await lab.capiReconciler({ namespace: 'noccm', ccm: false });
    await adopt(req, labKitObjects('noccm'), {
      kubeadmMembersRemain: true,
      crds: CrdValidator.fromSchemas(),
    });
    await patch(MD('noccm'), { spec: { replicas: 1 } });
    let name = '';
    await passUntil(r, 'the worker Node', async () => {
      const [m] = await machines('noccm');
      name = m?.metadata.name ?? '';
      return m !== undefined && (await get(`/api/v1/nodes/${name}`).catch(() => undefined)) !== undefined;
    });
    for (let i = 0; i < 3; i++) await r.pass();
    const m = await get(`${CAPI}/namespaces/noccm/machines/${name}`);
    expect(m.status.phase).toBe('Provisioned');
    expect(m.status.nodeRef).toBeUndefined();
    expect(m.spec.providerID).toBeUndefined();
    expect((await get(`/api/v1/nodes/${name}`)).spec.providerID).toBeUndefined();
    // ferry's gate sees exactly this Machine as stuck.
    expect(providerIdGate({ machines: [m], templates: [], ccmRunning: false, kitDir: 'kit' })).toMatchObject({
      kind: 'stop',
      machines: [`noccm/${name}`],
    });
  });

  it('the lab option runs the loop on its own, and dispose stops it', async () => {
    const r = await lab.startCapi({ namespace: 'loop', intervalMs: 100 });
    expect(lab.info().capi).toEqual({ mgmtKubeconfig: lab.kubeconfigPath, ccm: true });
    await adopt(req, labKitObjects('loop'), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    await patch(MD('loop'), { spec: { replicas: 1 } });
    const deadline = Date.now() + 60_000;
    let phase: unknown;
    while (Date.now() < deadline && phase !== 'Running') {
      phase = (await machines('loop'))[0]?.status?.phase;
      await sleep(100);
    }
    expect(phase).toBe('Running');
    expect(r.running).toBe(true);
    await lab.dispose();
    expect(r.running).toBe(false);
    const after = r.passes;
    await sleep(400);
    expect(r.passes).toBe(after);
  });
});
