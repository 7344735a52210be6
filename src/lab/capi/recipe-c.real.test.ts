/**
 * Adoption recipe (c) on a real lab (examples/lab-cluster, real etcd; subnet 127.0.188.x belongs to
 * this file): ferry's capi provisioner adds three Talos control planes in a row while the
 * TalosControlPlane stays paused — it creates each Machine itself and the lab's Machine and
 * infrastructure controllers boot it — and every kubeadm etcd member is still there after each
 * step, with no etcd audit at all; the Machines are valid against the CRDs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { MgmtApi } from '../../adapters/capi/mgmt-api.js';
import { EtcdAdmin } from '../../adapters/etcd/admin.js';
import { KubeAdmin } from '../../adapters/kube/admin.js';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { CapiProvisioner } from '../../adapters/provisioners/capi.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { capiNamesOf } from '../../kit/capi-names.js';
import type { ActionContext, ProvisionRequest } from '../../ports/run.js';
import { loadSnapshot } from '../../snapshot/load.js';
import { LabCluster } from '../cluster.js';
import { missingReason } from '../etcd/binaries.js';
import { skipFor } from '../testing-binaries.js';

const SUBNET = 188;
const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));
const KUBEADM = ['cp-1', 'cp-2', 'cp-3'];
const NS = 'recipe';

let lab: LabCluster;
let dir: string;
let req: KubeRequester;

const etcd = () => new EtcdAdmin({ endpoints: lab.etcd.endpoints(), tls: lab.etcd.clientTls() });
async function memberNames(): Promise<string[]> {
  const admin = etcd();
  try {
    return (await admin.observe()).members.map((m) => m.name).sort();
  } finally {
    admin.close();
  }
}

const ctx = (): ActionContext => ({
  stepId: 't',
  timeoutMs: 90_000,
  signal: new AbortController().signal,
  log: () => undefined,
});
const request = (replaces: string, claimed: string[]): ProvisionRequest => ({
  replaces,
  name: null,
  address: null,
  role: 'controlplane',
  talosVersion: 'v1.12.0',
  machineConfig: null,
  endpoint: null,
  claimed,
});

describe.skipIf(skipFor(missing))('adoption recipe (c) through the lab Cluster API', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-capi-c-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, canary: false });
    req = createRequester(loadKubeconfig(lab.kubeconfigPath));
  }, 120_000);

  afterAll(async () => {
    await lab?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('three control planes with the TalosControlPlane paused keep every kubeadm member', async () => {
    const crds = CrdValidator.fromSchemas();
    const kit = labKitObjects(NS);
    const r = await lab.capiReconciler({ namespace: NS, intervalMs: 100 });
    await adopt(req, kit, { kubeadmMembersRemain: true, crds });
    const names = capiNamesOf(
      kit.filter((o) => o.kind !== 'Secret').map((value, i) => ({ value, line: i + 1 })),
      'capi/cluster.yaml',
    );
    const api = MgmtApi.fromKit(req, names, kit);
    const admin = etcd();
    const provisioner = new CapiProvisioner({
      api,
      workload: new KubeAdmin(req),
      etcd: admin,
      decommissioner: {
        kind: 'none',
        provision: () => Promise.reject(new Error('no')),
        decommission: () => Promise.resolve(),
      },
      crds,
      templates: kit.filter((x) => x.kind === 'ProxmoxMachineTemplate'),
      kitDir: 'kit',
      pollMs: 100,
    });
    r.start();
    const talos: string[] = [];
    try {
      for (const node of KUBEADM) {
        const got = await provisioner.provision(request(node, [...KUBEADM, ...talos]), ctx());
        talos.push(got.name);
        await lab.provisioner.waitJoined(got.name, 60_000);
        expect(await memberNames()).toEqual([...KUBEADM, ...talos].sort());
        const tcp = (await api.controlPlane())!;
        expect(tcp.paused).toBe(true);
        expect(tcp.replicas).toBe(talos.length);
      }
    } finally {
      await r.stop();
      admin.close();
    }
    // One more pass of the reconciler with all three Machines Running: still paused, no audit.
    await r.pass();
    expect(r.events.filter((e) => e.kind === 'etcd-audit')).toEqual([]);
    expect(await memberNames()).toEqual([...KUBEADM, ...talos].sort());
    const ms = await api.machines({ controlPlane: true });
    expect(ms.map((m) => m.metadata.name).sort()).toEqual([...talos].sort());
    for (const m of ms) expect(crds.validate(m)).toEqual([]);
  }, 300_000);
});
