/**
 * H1 in the lab: a real 3-member etcd (the kubeadm members, subnet 127.0.152.x) and the lab API
 * server with the Cluster API CRDs (127.0.153.1). A Talos control-plane Machine with a Node
 * appears. In ferry's order (adopt: TalosControlPlane paused while kubeadm members remain) the
 * lab's etcd audit removes nothing; in the naive order (TalosControlPlane unpaused from the start)
 * it removes the kubeadm members — what a field report describes.
 */
import { readFile } from 'node:fs/promises';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { EtcdAdmin } from '../../adapters/etcd/admin.js';
import type { LoadedKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { type LabApiFixture, startLabApi } from '../apiserver/testing.js';
import { missingReason } from '../etcd/binaries.js';
import { EtcdLabCluster } from '../etcd/cluster.js';
import { reconcileEtcdAudit } from './etcd-audit.js';

const SPECS = new URL('../../../schemas/capi/', import.meta.url);
const missing = await missingReason('3.4');
let lab: LabApiFixture;
let etcd: EtcdLabCluster | undefined;
let req: KubeRequester;

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.153.1' });
  const ext = lab.kc.makeApiClient(ApiextensionsV1Api);
  for (const f of [
    'cluster.x-k8s.io_clusters.yaml',
    'cluster.x-k8s.io_machines.yaml',
    'cluster.x-k8s.io_machinedeployments.yaml',
    'controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml',
    'bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml',
    'infrastructure.cluster.x-k8s.io_proxmoxclusters.yaml',
    'infrastructure.cluster.x-k8s.io_proxmoxmachinetemplates.yaml',
  ]) {
    const body = parse(await readFile(new URL(f, SPECS), 'utf8')) as V1CustomResourceDefinition;
    await ext.createCustomResourceDefinition({ body });
  }
  const loaded: LoadedKubeconfig = {
    kc: lab.kc,
    file: 'lab',
    context: lab.kc.getCurrentContext(),
    server: lab.server.url,
  };
  req = createRequester(loaded);
  if (!missing)
    etcd = await EtcdLabCluster.start({
      subnet: 152,
      members: [{ name: 'cp-1' }, { name: 'cp-2' }, { name: 'cp-3' }],
    });
});
afterAll(async () => {
  await etcd?.dispose();
  await lab?.stop();
});

/** A Talos control-plane Machine whose Node exists (named after its infrastructure machine, H1). */
async function talosMachine(name: string): Promise<void> {
  const path = '/apis/cluster.x-k8s.io/v1beta2/namespaces/lab/machines';
  await req.request('POST', path, {
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name,
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
      },
      spec: {
        clusterName: 'lab',
        bootstrap: { dataSecretName: `${name}-bootstrap` },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxMachine', name },
      },
    },
  });
  await req.request('PATCH', `${path}/${name}/status`, {
    body: { status: { nodeRef: { name } } },
    contentType: 'application/merge-patch+json',
  });
}

it('ferry’s order keeps the kubeadm members; the naive order (TCP unpaused) loses them', async ({ skip }) => {
  if (missing || !etcd) skip(missing ?? 'no etcd');
  const admin = new EtcdAdmin({ endpoints: etcd!.endpoints().slice(0, 1), tls: etcd!.clientTls() });
  try {
    const names = async () => (await admin.observe()).members.map((m) => m.name).sort();
    expect(await names()).toEqual(['cp-1', 'cp-2', 'cp-3']);

    // ferry's order: adopt leaves the TalosControlPlane paused while kubeadm members remain.
    await adopt(req, labKitObjects(), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    await talosMachine('lab-control-plane-k7x2p');
    expect(await reconcileEtcdAudit(req, admin, 'lab', 'lab-control-plane')).toEqual({ kind: 'paused' });
    expect(await names()).toEqual(['cp-1', 'cp-2', 'cp-3']);

    // The naive order: the TalosControlPlane is not paused.
    await req.request(
      'PATCH',
      '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/lab/taloscontrolplanes/lab-control-plane',
      {
        body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } },
        contentType: 'application/merge-patch+json',
      },
    );
    const out = await reconcileEtcdAudit(req, admin, 'lab', 'lab-control-plane');
    expect(out.kind).toBe('audited');
    if (out.kind !== 'audited') return;
    // Every kubeadm member is a target; etcd refuses only to remove its last one.
    expect([...out.removed, ...out.failed].sort()).toEqual(['cp-1', 'cp-2', 'cp-3']);
    expect(out.removed.length).toBeGreaterThanOrEqual(2);
    expect((await names()).length).toBeLessThanOrEqual(1);
  } finally {
    admin.close();
  }
});
