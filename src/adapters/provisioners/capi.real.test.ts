/**
 * The capi provisioner against a lab API server serving the Cluster API CRDs (127.0.165.1), with a
 * test-side stand-in for the controllers (adapters/capi/testing-mgmt.ts, its etcd audit on): each
 * control plane is a Machine ferry makes itself while the TalosControlPlane stays paused (three in
 * a row keep every kubeadm member; the Machines are CRD-valid and shaped as CACPPT's; the hand-over
 * unpause then removes nothing); a TalosControlPlane found unpaused is a stop (the audit shows
 * what it costs); a worker comes from its pool's MachineDeployment; a Machine held in Provisioned
 * without a providerID stops at the CCM gate; a Machine left by an earlier attempt is taken.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { installLabCapiCrds } from '../../lab/capi/crds.js';
import type { ActionContext, ProvisionerPort, ProvisionRequest } from '../../ports/run.js';
import { adopt } from '../capi/adopt-apply.js';
import { standInControllers, startTestMgmt, TestEtcd, type TestMgmt } from '../capi/testing-mgmt.js';
import { KubeAdmin } from '../kube/admin.js';
import { CapiProvisioner } from './capi.js';

let m: TestMgmt;
const crds = CrdValidator.fromSchemas();

beforeAll(async () => {
  m = await startTestMgmt('127.0.165.1');
  // The infrastructure machine kind ferry now creates (the lab's ProxmoxMachine CRD).
  await installLabCapiCrds(m.req);
  await adopt(m.req, m.kit, { kubeadmMembersRemain: true, crds });
});
afterAll(async () => {
  await m?.stop();
});

const ctx = (timeoutMs = 20_000): ActionContext & { lines: string[] } => {
  const lines: string[] = [];
  return { stepId: 't', timeoutMs, signal: new AbortController().signal, log: (l) => lines.push(l), lines };
};

const decommissions: string[] = [];
const delegate: ProvisionerPort = {
  kind: 'test',
  provision: async () => {
    throw new Error('not for provisioning');
  },
  decommission: async (r) => void decommissions.push(r.node),
};

function provisioner(etcd: TestEtcd, o: { providerIdGraceMs?: number } = {}) {
  return new CapiProvisioner({
    api: m.api,
    workload: new KubeAdmin(m.req),
    etcd,
    decommissioner: delegate,
    crds,
    templates: m.kit.filter((x) => x.kind === 'ProxmoxMachineTemplate'),
    kitDir: 'kit',
    pollMs: 20,
    ...o,
  });
}

const req = (replaces: string, role: 'controlplane' | 'worker', claimed: string[]): ProvisionRequest => ({
  replaces,
  name: null,
  address: null,
  role,
  talosVersion: 'v1.12.0',
  machineConfig: null,
  endpoint: null,
  claimed,
});

const KUBEADM = ['cp-1', 'cp-2', 'cp-3'];
const tcpPaused = async () => (await m.api.controlPlane())?.paused;

describe('capi provisioner', () => {
  it('the 1st control plane: the TalosControlPlane kept paused, replicas raised, the Machine made by ferry, its Node', async () => {
    const etcd = new TestEtcd(KUBEADM);
    const ctl = standInControllers(m, { etcd, audit: true });
    try {
      const c = ctx();
      const r = await provisioner(etcd).provision(req('cp-1', 'controlplane', KUBEADM), c);
      expect(r.name).toMatch(/^lab-control-plane-[a-z0-9]{5}$/);
      expect(r.address).toMatch(/^10\.20\.0\./);
      expect((await m.api.controlPlane())?.replicas).toBe(1);
      expect(await tcpPaused()).toBe(true);
      expect(c.lines.join('\n')).toMatch(
        /kept paused: replicas 0 → 1[\s\S]*created with the TalosControlPlane paused/,
      );
      expect(c.lines.join('\n')).not.toMatch(/unpaused/);
      // A second request for the same node finds its Machine: no second scale step.
      const again = await provisioner(etcd).provision(req('cp-1', 'controlplane', KUBEADM), ctx());
      expect(again.name).toBe(r.name);
      expect((await m.api.controlPlane())?.replicas).toBe(1);
    } finally {
      await ctl.stop();
    }
  });

  it('the 2nd and 3rd control planes: kubeadm members all kept, Machines as CACPPT makes them; the hand-over unpause removes nothing', async () => {
    const first = (await m.api.machines({ controlPlane: true })).map((x) => x.metadata.name);
    const etcd = new TestEtcd([...KUBEADM, ...first]);
    const ctl = standInControllers(m, { etcd, audit: true });
    try {
      for (const [i, node] of ['cp-2', 'cp-3'].entries()) {
        const names = (await m.api.machines({ controlPlane: true })).map((x) => x.metadata.name);
        const r = await provisioner(etcd).provision(req(node, 'controlplane', [...KUBEADM, ...names]), ctx());
        expect(names).not.toContain(r.name);
        expect(await tcpPaused()).toBe(true);
        expect((await m.api.controlPlane())?.replicas).toBe(i + 2);
        expect(etcd.members.map((x) => x.name).sort()).toEqual([...KUBEADM, ...names, r.name].sort());
      }
      expect(ctl.log.join('\n')).not.toMatch(/audit removed/);

      const tcp = (await m.api.controlPlaneObject())!;
      const ms = await m.api.machines({ controlPlane: true });
      expect(ms).toHaveLength(3);
      for (const x of ms) {
        expect(crds.validate(x)).toEqual([]);
        expect(x.metadata.labels).toMatchObject({
          'cluster.x-k8s.io/cluster-name': m.api.names.cluster,
          'cluster.x-k8s.io/control-plane': '',
        });
        expect(x.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: 'TalosControlPlane', uid: tcp.metadata.uid, controller: true }),
        ]);
        const name = x.metadata.name;
        expect(x.spec).toMatchObject({
          version: tcp.spec?.['version'],
          bootstrap: { configRef: { kind: 'TalosConfig', name } },
          infrastructureRef: { kind: 'ProxmoxMachine', name },
        });
        const tc = (await m.api.getObject('bootstrap.cluster.x-k8s.io/v1alpha3', 'TalosConfig', name))!;
        expect(crds.validate(tc)).toEqual([]);
        expect(tc.spec).toEqual((tcp.spec!['controlPlaneConfig'] as { controlplane: unknown }).controlplane);
        const tplRef = tcp.spec?.['infrastructureTemplate'] as { apiVersion: string; name: string };
        const tpl = (await m.api.getObject(tplRef.apiVersion, 'ProxmoxMachineTemplate', tplRef.name))!;
        const pm = (await m.api.getObject(tplRef.apiVersion, 'ProxmoxMachine', name))!;
        expect(pm.spec).toEqual((tpl.spec!['template'] as { spec: unknown }).spec);
      }

      // ferry's etcd swaps leave only Talos members; replicas already match: unpausing scales nothing, removes nothing.
      etcd.members = etcd.members.filter((x) => !KUBEADM.includes(x.name));
      const kept = etcd.members.map((x) => x.name);
      await m.api.unpauseControlPlane();
      try {
        const n = ctl.log.length;
        for (let i = 0; i < 200 && ctl.log.length === n; i++) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await m.api.pauseControlPlane();
      }
      expect(etcd.members.map((x) => x.name)).toEqual(kept);
      expect(await m.api.machines({ controlPlane: true })).toHaveLength(3);
    } finally {
      await ctl.stop();
    }
  });

  it('a TalosControlPlane found unpaused is a stop naming the members its audit would remove (and the audit does remove them)', async () => {
    const names = (await m.api.machines({ controlPlane: true })).map((x) => x.metadata.name);
    const etcd = new TestEtcd([...KUBEADM, ...names]);
    const ctl = standInControllers(m, { etcd, audit: true, intervalMs: 5_000 });
    const replicas = (await m.api.controlPlane())?.replicas;
    try {
      await m.api.unpauseControlPlane();
      const err = await provisioner(etcd)
        .provision(req('cp-9', 'controlplane', [...KUBEADM, ...names]), ctx())
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).kind).toBe('gate');
      expect((err as FerryError).message).toMatch(/is not paused[\s\S]*cp-1, cp-2, cp-3/);
      expect((err as FerryError).remediation).toMatch(/cluster\.x-k8s\.io\/paused=true/);
      expect((await m.api.controlPlane())?.replicas).toBe(replicas);
      expect(await m.api.machines({ controlPlane: true })).toHaveLength(names.length);
    } finally {
      await ctl.stop();
    }
    // What that window costs: one pass of the stand-in's audit takes every kubeadm member.
    const audit = standInControllers(m, { etcd, audit: true });
    try {
      for (let i = 0; i < 200 && etcd.members.length > names.length; i++)
        await new Promise((r) => setTimeout(r, 20));
    } finally {
      await m.api.pauseControlPlane();
      await audit.stop();
    }
    expect(etcd.members.map((x) => x.name).sort()).toEqual([...names].sort());
    expect(audit.log.join('\n')).toMatch(/audit removed cp-1[\s\S]*audit removed cp-3/);
  });

  it("a worker: its pool's MachineDeployment scaled up by one", async () => {
    const etcd = new TestEtcd([]);
    const ctl = standInControllers(m, { etcd });
    try {
      const md = m.api.names.machineDeployments.find((d) => d.replaces.includes('worker-1'))!;
      const before = (await m.api.machineDeploymentReplicas(md.name)) ?? 0;
      const r = await provisioner(etcd).provision(req('worker-1', 'worker', ['worker-1']), ctx());
      expect(r.name.startsWith(md.name)).toBe(true);
      expect(await m.api.machineDeploymentReplicas(md.name)).toBe(before + 1);
      await expect(provisioner(etcd).provision(req('worker-9', 'worker', []), ctx())).rejects.toThrow(
        /no MachineDeployment whose ferry.dev\/replaces names worker-9/,
      );
      await provisioner(etcd).decommission({ node: 'worker-1', address: null, role: 'worker' }, ctx());
      expect(decommissions).toEqual(['worker-1']);
    } finally {
      await ctl.stop();
    }
  });

  it('a worker batch: one patch for both, a resumed request scales nothing more, each detection its own Machine and Node', async () => {
    const etcd = new TestEtcd([]);
    const md = m.api.names.machineDeployments.find((d) => d.replaces.includes('worker-1'))!;
    const replaces = md.replaces;
    md.replaces = [...replaces, 'worker-2'];
    const ctl = standInControllers(m, { etcd });
    try {
      // Earlier replacements' Machines are claimed by the Nodes they got.
      const earlier = (await m.api.machines({ machineDeployment: md.name })).map((x) => x.metadata.name);
      const claimed = ['worker-1', 'worker-2', ...earlier];
      const batch = [req('worker-1', 'worker', claimed), req('worker-2', 'worker', claimed)];
      const before = (await m.api.machineDeploymentReplicas(md.name)) ?? 0;
      const c = ctx();
      await provisioner(etcd).requestBatch(batch, c);
      expect(await m.api.machineDeploymentReplicas(md.name)).toBe(earlier.length + 2);
      expect(c.lines).toEqual([
        `MachineDeployment ${md.name}: replicas ${before} → ${earlier.length + 2} (worker-1, worker-2)`,
      ]);
      // SIGKILLed here, resumed: a new process asks again; the replicas already cover the batch.
      const resumed = provisioner(etcd);
      await resumed.requestBatch(batch, ctx());
      expect(await m.api.machineDeploymentReplicas(md.name)).toBe(earlier.length + 2);
      const found = await Promise.all(batch.map((r) => resumed.detect(r, ctx())));
      expect(new Set(found.map((f) => f.name)).size).toBe(2);
      for (const f of found) {
        expect(earlier).not.toContain(f.name);
        expect(f.address).toMatch(/^10\.20\.0\./);
      }
      const machines = await m.api.machines({ machineDeployment: md.name });
      expect(machines).toHaveLength(earlier.length + 2);
    } finally {
      md.replaces = replaces;
      await ctl.stop();
    }
  });

  it('a Machine held in Provisioned without a providerID stops at the CCM gate', async () => {
    const etcd = new TestEtcd([]);
    const md = m.api.names.machineDeployments[0]!.name;
    const earlier = (await m.api.machines({ machineDeployment: md })).map((x) => x.metadata.name);
    const ctl = standInControllers(m, { etcd, mode: 'stuck-provisioned' });
    try {
      const err = await provisioner(etcd, { providerIdGraceMs: 300 })
        .provision(req('worker-1', 'worker', ['worker-1', ...earlier]), ctx())
        .catch((e: unknown) => e);
      expect((err as FerryError).kind).toBe('gate');
      expect((err as FerryError).message).toMatch(/Provisioned without a providerID/);
      expect((err as FerryError).remediation).toMatch(/CCM|cloud/i);
    } finally {
      await ctl.stop();
    }
  });
});
