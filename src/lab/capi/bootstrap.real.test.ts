/**
 * H2 in the lab (API server on 127.0.154.1 with the Cluster API CRDs): a Talos control plane that
 * waits to join the kubeadm etcd has no etcd data. With the TalosControlPlane not marked
 * bootstrapped, the lab's CACPPT bootstraps it — a second etcd cluster; after ferry's adoption
 * (status.bootstrapped set before any Machine) it never does. The Talos API is a recording stand-in.
 */
import { readFile } from 'node:fs/promises';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { type LabApiFixture, startLabApi } from '../apiserver/testing.js';
import { reconcileBootstrap, type TalosBootstrapPort } from './bootstrap.js';

const SPECS = new URL('../../../schemas/capi/', import.meta.url);
let lab: LabApiFixture;
let req: KubeRequester;
const TCP = '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces';

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.154.1' });
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
  req = createRequester({
    kc: lab.kc,
    file: 'lab',
    context: lab.kc.getCurrentContext(),
    server: lab.server.url,
  });
});
afterAll(async () => {
  await lab?.stop();
});

/** Talos API stand-in: no machine has etcd data yet (it is still waiting to join). */
function talos(): TalosBootstrapPort & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    hasEtcdData: async () => false,
    bootstrap: async (a) => {
      calls.push(a);
    },
  };
}

async function scaleWithMachine(ns: string): Promise<void> {
  const patch = { contentType: 'application/merge-patch+json' };
  await req.request('PATCH', `${TCP}/${ns}/taloscontrolplanes/lab-control-plane`, {
    ...patch,
    body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } }, spec: { replicas: 1 } },
  });
  const path = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machines`;
  await req.request('POST', path, {
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: 'lab-control-plane-q4m8z',
        namespace: ns,
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
      },
      spec: {
        clusterName: 'lab',
        bootstrap: { dataSecretName: 'b' },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxMachine', name: 'x' },
      },
    },
  });
  await req.request('PATCH', `${path}/lab-control-plane-q4m8z/status`, {
    ...patch,
    body: { status: { addresses: [{ type: 'InternalIP', address: '10.20.0.101' }] } },
  });
}

it('the naive order bootstraps a second etcd; after ferry’s adoption nothing is bootstrapped', async () => {
  const crds = CrdValidator.fromSchemas();
  // ferry: adopt marks the TCP bootstrapped before any Machine exists.
  await adopt(req, labKitObjects('ferry'), { kubeadmMembersRemain: true, crds });
  await scaleWithMachine('ferry');
  const t1 = talos();
  expect(await reconcileBootstrap(req, t1, 'ferry', 'lab-control-plane')).toEqual({
    kind: 'already-bootstrapped',
  });
  expect(t1.calls).toEqual([]);

  // Naive: the kit's objects applied as they are, without the status patch.
  for (const o of labKitObjects('naive').filter((x) => x.kind !== 'Secret')) {
    const [group, version] = o.apiVersion.split('/');
    const plural = { Cluster: 'clusters', TalosControlPlane: 'taloscontrolplanes' }[o.kind];
    if (!plural) continue;
    if (o.kind === 'Cluster')
      await req.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'naive' } } });
    await req.request('POST', `/apis/${group}/${version}/namespaces/naive/${plural}`, { body: o });
  }
  await scaleWithMachine('naive');
  const t2 = talos();
  expect(await reconcileBootstrap(req, t2, 'naive', 'lab-control-plane')).toEqual({
    kind: 'bootstrapped',
    address: '10.20.0.101',
  });
  expect(t2.calls).toEqual(['10.20.0.101']);
});
