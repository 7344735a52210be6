/**
 * Adding a control-plane Machine on a lab API server serving the Cluster API CRDs (127.0.196.1):
 * a create that fails part-way takes back what it made, so a retry (a new name) leaves no
 * infrastructure machine without a Machine behind.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { installLabCapiCrds } from '../../lab/capi/crds.js';
import type { KubeRequester } from '../kube/request.js';
import { adopt } from './adopt-apply.js';
import { addControlPlaneMachine } from './cp-create.js';
import { MgmtApi } from './mgmt-api.js';
import { startTestMgmt, type TestMgmt } from './testing-mgmt.js';

let m: TestMgmt;
const crds = CrdValidator.fromSchemas();

beforeAll(async () => {
  m = await startTestMgmt('127.0.196.1');
  await installLabCapiCrds(m.req);
  await adopt(m.req, m.kit, { kubeadmMembersRemain: true, crds });
});
afterAll(async () => {
  await m?.stop();
});

/** The names of the objects of a kind in the cluster's namespace. */
async function names(plural: string, group: string): Promise<string[]> {
  const list = (await m.req.request('GET', `/apis/${group}/namespaces/lab/${plural}`)) as {
    items: { metadata: { name: string } }[];
  };
  return list.items.map((i) => i.metadata.name);
}

it('deletes the infrastructure machine it made when the TalosConfig cannot be created, says so, and a second attempt makes the three objects', async () => {
  const infraGroup = 'infrastructure.cluster.x-k8s.io/v1alpha1';
  const before = await names('proxmoxmachines', infraGroup);
  let fail = true;
  const failing: KubeRequester = {
    address: m.req.address,
    server: m.req.server,
    request: async (method, path, opts) => {
      if (fail && method === 'POST' && path.endsWith('/talosconfigs'))
        throw Object.assign(new Error('admission webhook "vtalosconfig" denied the request'), {
          status: 500,
        });
      return m.req.request(method, path, opts);
    },
  };
  const api = MgmtApi.fromKit(failing, m.api.names, m.kit);
  const err = await addControlPlaneMachine(api, crds, {
    target: 1,
    log: () => {},
    retry: 'run ferry run --resume',
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FerryError);
  expect((err as FerryError).message).toMatch(/failed at TalosConfig\/\S+: admission webhook/);
  expect((err as FerryError).message).toMatch(/deleted again: ProxmoxMachine\//);
  // The replica bump is taken back too: at 1 with no Machine, an unpause would make CACPPT create one.
  expect((err as FerryError).message).toMatch(/replicas set back to 0/);
  expect((err as FerryError).remediation).toMatch(/then run ferry run --resume$/);
  const tcp = await m.api.controlPlaneObject();
  expect(tcp?.spec?.['replicas'] ?? 0).toBe(0);
  expect(await names('proxmoxmachines', infraGroup)).toEqual(before);

  fail = false;
  const name = await addControlPlaneMachine(api, crds, {
    target: 1,
    log: () => {},
    retry: 'run ferry run --resume',
  });
  expect(await names('proxmoxmachines', infraGroup)).toEqual([...before, name].sort());
  expect(await names('machines', 'cluster.x-k8s.io/v1beta2')).toContain(name);
});
