/**
 * H3 on the lab (loopback 127.0.159.2; the lab API server is both the management and the workload
 * cluster): lowering the TalosControlPlane's replicas makes the lab's CACPPT delete the oldest
 * control plane's Node with its pods, no eviction. ferry's tcpScale refuses any scale-down, so the
 * count only grows and the old node and its pods stay until ferry drains it itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import type { KubeRequester } from '../../adapters/kube/request.js';
import { tcpScale } from '../../capi/tcp-scale.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { PAUSED_ANNOTATION } from '../../capi/view.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { installCapiCrds, labKube } from '../../mgmt/testing-fleet.js';
import { type LabApiFixture, startLabApi } from '../apiserver/testing.js';
import { reconcileScaleDown } from './scale-down.js';

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const MERGE = 'application/merge-patch+json';
const TCP = (ns: string) =>
  `/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/${ns}/taloscontrolplanes/lab-control-plane`;
let lab: LabApiFixture;
let req: KubeRequester;

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.159.2' });
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  req = kube.req;
});
afterAll(async () => {
  await lab?.stop();
});

/** Adopted cluster with two control-plane Machines: the kubeadm one's node `old` (oldest) and a new Talos one. */
async function twoControlPlanes(ns: string) {
  await adopt(req, labKitObjects(ns), { kubeadmMembersRemain: false, crds: CrdValidator.fromSchemas() });
  const old = `${ns}-old`;
  for (const [i, node] of [old, `${ns}-new`].entries()) {
    await req.request('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: node } },
    });
    const name = `lab-control-plane-${i}`;
    await req.request('POST', `${CAPI}/namespaces/${ns}/machines`, {
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name,
          namespace: ns,
          labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
        },
        spec: {
          clusterName: 'lab',
          bootstrap: { dataSecretName: name },
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxMachine', name },
        },
      },
    });
    await req.request('PATCH', `${CAPI}/namespaces/${ns}/machines/${name}/status`, {
      body: { status: { nodeRef: { name: node } } },
      contentType: MERGE,
    });
  }
  await req.request('POST', '/api/v1/namespaces/default/pods', {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${ns}-web`, namespace: 'default' },
      spec: { nodeName: old, containers: [{ name: 'web', image: 'nginx' }] },
    },
  });
  return old;
}

const setReplicas = (ns: string, replicas: number) =>
  req.request('PATCH', TCP(ns), {
    body: { metadata: { annotations: { [PAUSED_ANNOTATION]: null } }, spec: { replicas } },
    contentType: MERGE,
  });
const exists = (path: string) =>
  req.request('GET', path).then(
    () => true,
    (e: { status?: number }) => (e.status === 404 ? false : Promise.reject(e)),
  );

describe('H3: a control-plane scale-down deletes the Node without draining', () => {
  it('naive: replicas lowered, the old node and its pod are gone without eviction', async () => {
    const old = await twoControlPlanes('h3-naive');
    await setReplicas('h3-naive', 1);
    expect(await reconcileScaleDown(req, req, 'h3-naive', 'lab-control-plane')).toMatchObject({
      kind: 'deleted',
      node: old,
      pods: ['default/h3-naive-web'],
    });
    expect(await exists(`/api/v1/nodes/${old}`)).toBe(false);
  });

  it("ferry's order: tcpScale refuses the scale-down; the count only grows and the old node keeps its pods", async () => {
    const old = await twoControlPlanes('h3');
    expect(tcpScale(2, 1)).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/delete a Node without draining it/),
    });
    const up = tcpScale(1, 2);
    expect(up).toEqual({ kind: 'scale', from: 1, to: 2 });
    if (up.kind === 'scale') await setReplicas('h3', up.to);
    expect(await reconcileScaleDown(req, req, 'h3', 'lab-control-plane')).toEqual({ kind: 'nothing-to-do' });
    expect(await exists(`/api/v1/nodes/${old}`)).toBe(true);
    expect(await exists('/api/v1/namespaces/default/pods/h3-web')).toBe(true);
  });
});
