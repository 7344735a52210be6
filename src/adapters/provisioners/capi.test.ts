/**
 * The capi provisioner against a lab API server serving the Cluster API CRDs (127.0.165.1; this
 * engineer's range 127.0.165–169), with a test-side stand-in for the controllers
 * (adapters/capi/testing-mgmt.ts): a control plane comes from one TalosControlPlane scale step
 * with the pause put back, a worker from its pool's MachineDeployment; a Machine held in
 * Provisioned without a providerID stops the run at the CCM gate; the 2nd control plane's unpause
 * is refused while kubeadm members remain (the stand-in's audit shows what it would cost); a Machine left by an earlier attempt is
 * taken, not scaled for again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../capi/adopt-apply.js';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import type { ActionContext, ProvisionerPort, ProvisionRequest } from '../../run/ports.js';
import { standInControllers, startTestMgmt, TestEtcd, type TestMgmt } from '../capi/testing-mgmt.js';
import { KubeAdmin } from '../kube/admin.js';
import { CapiProvisioner } from './capi.js';

let m: TestMgmt;
const crds = CrdValidator.fromSchemas();

beforeAll(async () => {
  m = await startTestMgmt('127.0.165.1');
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

const tcpPaused = async () => (await m.api.controlPlane())?.paused;

describe('capi provisioner', () => {
  it('a control plane: one scale step with the TalosControlPlane unpaused, paused again, the Node of the new Machine', async () => {
    const etcd = new TestEtcd(['cp-1', 'cp-2', 'cp-3']);
    const ctl = standInControllers(m, { etcd });
    try {
      const c = ctx();
      const r = await provisioner(etcd).provision(req('cp-1', 'controlplane', ['cp-1', 'cp-2', 'cp-3']), c);
      expect(r.name).toMatch(/^lab-control-plane-/);
      expect(r.address).toMatch(/^10\.20\.0\./);
      expect((await m.api.controlPlane())?.replicas).toBe(1);
      expect(await tcpPaused()).toBe(true);
      expect(c.lines.join('\n')).toMatch(/replicas 0 → 1[\s\S]*paused again[\s\S]*no etcd member lost/);
      // A second request for the same node finds its Machine: no second scale step.
      const again = await provisioner(etcd).provision(
        req('cp-1', 'controlplane', ['cp-1', 'cp-2', 'cp-3']),
        ctx(),
      );
      expect(again.name).toBe(r.name);
      expect((await m.api.controlPlane())?.replicas).toBe(1);
    } finally {
      await ctl.stop();
    }
  });

  it('the 2nd control plane: refused before anything is unpaused, as the audit would remove the kubeadm members', async () => {
    const etcd = new TestEtcd(['cp-1', 'cp-2', 'cp-3']);
    const first = (await m.api.machines({ controlPlane: true }))[0]!;
    etcd.add(first.metadata.name);
    const ctl = standInControllers(m, { etcd, audit: true });
    const replicas = (await m.api.controlPlane())?.replicas;
    try {
      const c = ctx();
      const err = await provisioner(etcd)
        .provision(req('cp-2', 'controlplane', ['cp-1', 'cp-2', 'cp-3', first.metadata.name]), c)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).kind).toBe('gate');
      expect((err as FerryError).message).toMatch(/refusing to unpause[\s\S]*cp-1, cp-2, cp-3/);
      expect(c.lines.join('\n')).not.toMatch(/unpaused/);
      expect(await tcpPaused()).toBe(true);
      expect((await m.api.controlPlane())?.replicas).toBe(replicas);
      expect(etcd.members.map((x) => x.name)).toEqual(['cp-1', 'cp-2', 'cp-3', first.metadata.name]);
      expect(ctl.log.join('\n')).not.toMatch(/audit removed/);

      // Without the guard: the same TalosControlPlane unpaused, and the audit takes the kubeadm members.
      await m.api.unpauseControlPlane();
      try {
        for (let i = 0; i < 200 && etcd.members.length > 1; i++) await new Promise((r) => setTimeout(r, 20));
      } finally {
        await m.api.pauseControlPlane();
      }
      expect(etcd.members.map((x) => x.name)).toEqual([first.metadata.name]);
      expect(ctl.log.join('\n')).toMatch(/audit removed cp-1[\s\S]*audit removed cp-3/);
    } finally {
      await ctl.stop();
    }
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
