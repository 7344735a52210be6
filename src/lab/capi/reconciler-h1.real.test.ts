/**
 * H1 through the lab's one Cluster API reconciler, on a real lab (examples/lab-cluster, real etcd;
 * subnet 127.0.162.x belongs to this file). ferry's order — unpause the TalosControlPlane for the
 * one scale step, re-pause as soon as its Machine exists — adds a Talos control plane and keeps
 * every kubeadm etcd member. The naive order (TalosControlPlane unpaused from the start) loses the
 * kubeadm members as soon as the new Machine has its Node: the failure a field report describes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { EtcdAdmin } from '../../adapters/etcd/admin.js';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { PAUSED_ANNOTATION } from '../../capi/view.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { KubeObject } from '../../snapshot/model.js';
import { LabCluster } from '../cluster.js';
import { missingReason } from '../etcd/binaries.js';
import { skipFor } from '../testing-binaries.js';
import type { LabCapiReconciler } from './reconciler.js';

const SUBNET = 162;
const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));
const TCP = (ns: string) =>
  `/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/${ns}/taloscontrolplanes/lab-control-plane`;
const MERGE = 'application/merge-patch+json';
const KUBEADM = ['cp-1', 'cp-2', 'cp-3'];

let lab: LabCluster;
let dir: string;
let req: KubeRequester;

const patch = (path: string, body: unknown) => req.request('PATCH', path, { body, contentType: MERGE });
const cpMachines = async (ns: string) =>
  (
    (await req.request('GET', `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines`)) as {
      items: KubeObject[];
    }
  ).items;
/** The member list as etcd itself has it, from the first member that answers. */
async function memberNames(): Promise<string[]> {
  for (const endpoint of lab.etcd.endpoints()) {
    const admin = new EtcdAdmin({ endpoints: [endpoint], tls: lab.etcd.clientTls() });
    try {
      return (await admin.observe()).members.map((m) => m.name).sort();
    } catch {
      // a removed member: ask the next
    } finally {
      admin.close();
    }
  }
  throw new Error('no etcd member answered');
}

async function passUntil(r: LabCapiReconciler, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    await r.pass();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(skipFor(missing))('H1 through the lab Cluster API reconciler', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-lab-capi-h1-'));
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet: SUBNET, canary: false });
    req = createRequester(loadKubeconfig(lab.kubeconfigPath));
  }, 120_000);

  afterAll(async () => {
    await lab?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("ferry's order keeps the kubeadm members; the naive order loses them once the Machine has its Node", async () => {
    const crds = CrdValidator.fromSchemas();
    // ferry: one scale step unpaused, re-paused as soon as the Machine exists.
    const ferry = await lab.capiReconciler({ namespace: 'ferry' });
    await adopt(req, labKitObjects('ferry'), { kubeadmMembersRemain: true, crds });
    await patch(TCP('ferry'), {
      metadata: { annotations: { [PAUSED_ANNOTATION]: null } },
      spec: { replicas: 1 },
    });
    await ferry.pass();
    await patch(TCP('ferry'), { metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } } });
    await passUntil(
      ferry,
      'the nodeRef',
      async () => (await cpMachines('ferry'))[0]?.status?.nodeRef !== undefined,
    );
    const talos = (await cpMachines('ferry'))[0]!.metadata.name;
    await lab.provisioner.waitJoined(talos, 60_000);
    for (let i = 0; i < 3; i++) await ferry.pass();
    expect(await memberNames()).toEqual([...KUBEADM, talos].sort());
    expect(ferry.events.filter((e) => e.kind === 'etcd-audit')).toEqual([]);

    // Naive: the TalosControlPlane unpaused from the start.
    const naive = await lab.capiReconciler({ namespace: 'naive' });
    await adopt(req, labKitObjects('naive'), { kubeadmMembersRemain: true, crds });
    await patch(TCP('naive'), {
      metadata: { annotations: { [PAUSED_ANNOTATION]: null } },
      spec: { replicas: 1 },
    });
    await passUntil(naive, 'the etcd audit', async () => naive.events.some((e) => e.kind === 'etcd-audit'));
    const audit = naive.events.find((e) => e.kind === 'etcd-audit');
    if (audit?.kind !== 'etcd-audit') throw new Error('no audit');
    const targets = [...audit.removed, ...audit.failed];
    // Every kubeadm member is a target (etcd refuses only to remove its last voter); so is the
    // Talos member ferry added, which no Machine of this control plane owns.
    expect(targets).toEqual(expect.arrayContaining([...KUBEADM, talos]));
    expect(audit.removed.filter((m) => KUBEADM.includes(m)).length).toBeGreaterThan(0);
    expect((await memberNames()).filter((m) => KUBEADM.includes(m)).length).toBeLessThan(KUBEADM.length);
  });
});
