/**
 * Hazards H11 and H14 (capi.md §1) on the lab API server serving the Cluster API CRDs (loopback
 * 127.0.158.1): after adoption, a Machine stuck in Provisioned without a providerID stops at the
 * gate that names the kit's CCM; the `<cluster>-talos` Secret is in clusterctl move's scope only
 * thanks to the ownerRef adoption gives it (applied as the kit files are, it is left behind).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../adapters/capi/adopt-apply.js';
import type { KubeRequester } from '../adapters/kube/request.js';
import { CrdValidator } from '../generate/schema/crd.js';
import { type LabApiFixture, startLabApi } from '../lab/apiserver/testing.js';
import { installCapiCrds, labKube } from '../mgmt/testing-fleet.js';
import type { KubeObject } from '../snapshot/model.js';
import { clusterctlMoves } from './move-scope.js';
import { providerIdGate } from './providerid-gate.js';
import { labKitObjects } from './testing-kit.js';

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const MERGE = 'application/merge-patch+json';
let lab: LabApiFixture;
let req: KubeRequester;

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.158.1' });
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  req = kube.req;
});
afterAll(async () => {
  await lab?.stop();
});

// List items carry no kind on a real API server; the list's kind names it.
const list = async (path: string) => {
  const l = (await req.request('GET', path)) as { kind: string; items: KubeObject[] };
  return l.items.map((o) => ({ ...o, kind: l.kind.replace(/List$/, '') }));
};

async function scope(ns: string) {
  const objects = [
    ...(await list(`${CAPI}/namespaces/${ns}/clusters`)),
    ...(await list(`/api/v1/namespaces/${ns}/secrets`)),
  ];
  const moved = (name: string) =>
    clusterctlMoves(objects.find((o) => o.kind === 'Secret' && o.metadata.name === name)!, objects);
  return { talos: moved('lab-talos'), ca: moved('lab-ca') };
}

describe('H14: the talos Secret and clusterctl move', () => {
  it('applied as the kit files are, move leaves lab-talos behind; after adopt it is moved', async () => {
    // Naive: the kit's objects created as they are, no ownerRef step.
    await req.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'naive' } },
    });
    for (const o of labKitObjects('naive').filter((x) => x.kind === 'Secret' || x.kind === 'Cluster')) {
      const path =
        o.kind === 'Secret' ? '/api/v1/namespaces/naive/secrets' : `${CAPI}/namespaces/naive/clusters`;
      await req.request('POST', path, { body: o });
    }
    expect(await scope('naive')).toEqual({ talos: false, ca: true });

    await adopt(req, labKitObjects('h14'), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    expect(await scope('h14')).toEqual({ talos: true, ca: true });
  });
});

describe('H11: a Machine Provisioned without providerID', () => {
  it('stops at the gate naming the CCM fix, and passes once the Node has its providerID', async () => {
    const kit = labKitObjects('h11');
    await adopt(req, kit, { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
    const machine = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: 'lab-workers-x1',
        namespace: 'h11',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
      },
      spec: {
        clusterName: 'lab',
        bootstrap: { dataSecretName: 'lab-workers-x1' },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'ProxmoxMachine',
          name: 'lab-workers-x1',
        },
      },
    };
    const path = `${CAPI}/namespaces/h11/machines/lab-workers-x1`;
    await req.request('POST', `${CAPI}/namespaces/h11/machines`, { body: machine });
    // What the lab's Machine looks like when the infrastructure is up but no Node carries the id.
    await req.request('PATCH', `${path}/status`, {
      body: { status: { phase: 'Provisioned' } },
      contentType: MERGE,
    });

    const templates = await list(
      '/apis/infrastructure.cluster.x-k8s.io/v1alpha1/namespaces/h11/proxmoxmachinetemplates',
    );
    expect(templates.length).toBeGreaterThan(0);
    const gate = () =>
      list(`${CAPI}/namespaces/h11/machines`).then((machines) =>
        providerIdGate({ machines, templates, ccmRunning: false, kitDir: 'kit' }),
      );
    const stopped = await gate();
    expect(stopped).toMatchObject({ kind: 'stop', machines: ['h11/lab-workers-x1'] });
    if (stopped.kind !== 'stop') return;
    expect(stopped.reason).toMatch(/no cloud-controller-manager runs/);
    expect(stopped.reason).not.toMatch(/providerIDInjection/); // the kit's templates inject it
    expect(stopped.remediation).toMatch(/helm upgrade --install .* -f kit\/capi\/talos-ccm-values\.yaml/);

    // Not observed is said, not assumed; a template without injection is named.
    const off = templates.map((t) => ({ ...t, spec: { template: { spec: {} } } }));
    const unseen = providerIdGate({
      machines: await list(`${CAPI}/namespaces/h11/machines`),
      templates: off,
      ccmRunning: null,
      kitDir: 'kit',
    });
    expect(unseen.kind === 'stop' && unseen.reason).toMatch(
      /could not see whether .*providerIDInjection is not true/,
    );

    // The CCM set the id; CAPI moves the Machine on.
    await req.request('PATCH', path, {
      body: { spec: { providerID: 'proxmox://4c4c4544-0001' } },
      contentType: MERGE,
    });
    await req.request('PATCH', `${path}/status`, {
      body: { status: { phase: 'Running' } },
      contentType: MERGE,
    });
    expect(await gate()).toEqual({ kind: 'pass' });
  });
});
