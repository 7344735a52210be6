/**
 * H5 on the lab (loopback 127.0.159.1): right after an adoption the TalosControlPlane has no
 * Machines, so no status.version, and the MachineSet preflight holds new worker Machines. The
 * skip annotation adoption puts on each MachineDeployment lets it scale; without it (the same
 * MachineDeployment, annotation removed) the scale-up is held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../../adapters/capi/adopt-apply.js';
import type { KubeRequester } from '../../adapters/kube/request.js';
import { labKitObjects } from '../../capi/testing-kit.js';
import { SKIP_PREFLIGHT_ANNOTATION } from '../../capi/view.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { installCapiCrds, labKube } from '../../mgmt/testing-fleet.js';
import { type LabApiFixture, startLabApi } from '../apiserver/testing.js';
import { reconcileMachineDeployment } from './machineset.js';

const MD = (ns: string) => `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}/machinedeployments/lab-workers`;
const MERGE = 'application/merge-patch+json';
let lab: LabApiFixture;
let req: KubeRequester;

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.159.1' });
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  req = kube.req;
});
afterAll(async () => {
  await lab?.stop();
});

async function adoptAndScale(ns: string, dropSkip: boolean) {
  await adopt(req, labKitObjects(ns), { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() });
  if (dropSkip)
    await req.request('PATCH', MD(ns), {
      body: { metadata: { annotations: { [SKIP_PREFLIGHT_ANNOTATION]: null } } },
      contentType: MERGE,
    });
  await req.request('PATCH', MD(ns), { body: { spec: { replicas: 1 } }, contentType: MERGE });
  return reconcileMachineDeployment(req, ns, 'lab-workers');
}

describe('H5: MachineSet preflight after adoption', () => {
  it('the skip annotation adoption sets lets the MachineDeployment scale', async () => {
    expect(await adoptAndScale('h5', false)).toEqual({ kind: 'scaled', created: ['lab-workers-0'] });
  });
  it('without it the new Machine is held while the control plane has no version', async () => {
    expect(await adoptAndScale('h5-naive', true)).toMatchObject({
      kind: 'held',
      why: expect.stringMatching(/ControlPlaneIsProvisioning/),
    });
  });
});
