/**
 * CustomResourceDefinitions and custom resources through @kubernetes/client-node, with the real
 * Cluster API and Talos provider CRDs the repository carries (schemas/capi): discovery, CRUD on every served
 * version, the status and scale subresources, and cleanup when the CRD goes.
 */
import { readFile } from 'node:fs/promises';
import {
  ApiextensionsV1Api,
  ApisApi,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { failure, type LabApiFixture, startLabApi } from './testing.js';

const SPECS = new URL('../../../schemas/capi/', import.meta.url);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

let lab: LabApiFixture;
let ext: ApiextensionsV1Api;
let custom: CustomObjectsApi;

async function crdFile(name: string): Promise<V1CustomResourceDefinition> {
  return parse(await readFile(new URL(name, SPECS), 'utf8')) as V1CustomResourceDefinition;
}

beforeAll(async () => {
  lab = await startLabApi();
  ext = lab.kc.makeApiClient(ApiextensionsV1Api);
  custom = lab.kc.makeApiClient(CustomObjectsApi);
  for (const f of [
    'cluster.x-k8s.io_machinedeployments.yaml',
    'cluster.x-k8s.io_machines.yaml',
    'controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml',
  ]) {
    await ext.createCustomResourceDefinition({ body: await crdFile(f) });
  }
});
afterAll(async () => {
  await lab?.stop();
});

const md = (name: string, replicas: number) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'MachineDeployment',
  metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'lab' } },
  spec: { clusterName: 'lab', replicas, template: { spec: { clusterName: 'lab' } } },
  status: { replicas: 99 },
});

const ref = {
  group: 'cluster.x-k8s.io',
  version: 'v1beta2',
  namespace: 'default',
  plural: 'machinedeployments',
};

describe('CRDs', () => {
  it('are established and served in discovery with the preferred version first', async () => {
    const crd = await ext.readCustomResourceDefinition({ name: 'machinedeployments.cluster.x-k8s.io' });
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(crd.status?.acceptedNames).toMatchObject({
      kind: 'MachineDeployment',
      plural: 'machinedeployments',
      listKind: 'MachineDeploymentList',
    });
    expect(crd.status?.storedVersions).toEqual(['v1beta2']);
    const groups = await lab.kc.makeApiClient(ApisApi).getAPIVersions();
    const capi = groups.groups.find((g) => g.name === 'cluster.x-k8s.io');
    expect(capi?.versions.map((v) => v.version)).toEqual(['v1beta2', 'v1beta1']);
    expect(capi?.preferredVersion?.groupVersion).toBe('cluster.x-k8s.io/v1beta2');
    const machines = await custom.listClusterCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta2',
      plural: 'machines',
    });
    expect(machines).toMatchObject({ kind: 'MachineList', items: [] });
  });

  it('refuses a CRD whose name is not plural.group', async () => {
    const crd = await crdFile('cluster.x-k8s.io_clusters.yaml');
    crd.metadata = { name: 'wrong.example.com' };
    const f = await failure(ext.createCustomResourceDefinition({ body: crd }));
    expect(f.code).toBe(422);
    expect(f.status.message).toContain('must be spec.names.plural+"."+spec.group');
  });
});

describe('custom resources', () => {
  it('CRUD on the storage version, read back through another served version', async () => {
    const created = (await custom.createNamespacedCustomObject({
      ...ref,
      body: md('workers', 2),
    })) as ReturnType<typeof md> & {
      metadata: { uid: string; generation: number; resourceVersion: string };
    };
    expect(created.metadata).toMatchObject({ uid: expect.any(String), generation: 1 });
    // With the status subresource, create ignores status.
    expect(created.status).toBeUndefined();

    const old = (await custom.getNamespacedCustomObject({ ...ref, version: 'v1beta1', name: 'workers' })) as {
      apiVersion: string;
    };
    expect(old.apiVersion).toBe('cluster.x-k8s.io/v1beta1');

    const list = (await custom.listNamespacedCustomObject({
      ...ref,
      labelSelector: 'cluster.x-k8s.io/cluster-name=lab',
    })) as {
      kind: string;
      items: { kind: string; metadata: { name: string } }[];
    };
    expect(list.kind).toBe('MachineDeploymentList');
    expect(list.items.map((i) => [i.kind, i.metadata.name])).toEqual([['MachineDeployment', 'workers']]);

    const patched = (await custom.patchNamespacedCustomObject(
      { ...ref, name: 'workers', body: { spec: { replicas: 3 } } },
      merge,
    )) as {
      metadata: { generation: number };
      spec: { replicas: number };
    };
    expect(patched.spec.replicas).toBe(3);
    expect(patched.metadata.generation).toBe(2);

    const smp = await failure(
      custom.patchNamespacedCustomObject(
        { ...ref, name: 'workers', body: { spec: { replicas: 4 } } },
        strategic,
      ),
    );
    expect(smp.code).toBe(415);

    const stale = await failure(
      custom.replaceNamespacedCustomObject({ ...ref, name: 'workers', body: created }),
    );
    expect(stale.code).toBe(409);

    await custom.deleteNamespacedCustomObject({ ...ref, name: 'workers' });
    expect((await failure(custom.getNamespacedCustomObject({ ...ref, name: 'workers' }))).code).toBe(404);
  });

  it('status subresource: only status changes there, and the main endpoint keeps status', async () => {
    await custom.createNamespacedCustomObject({ ...ref, body: md('st', 1) });
    const s = (await custom.patchNamespacedCustomObjectStatus(
      {
        ...ref,
        name: 'st',
        body: {
          spec: { replicas: 7 },
          status: { replicas: 1, readyReplicas: 1, selector: 'cluster.x-k8s.io/deployment-name=st' },
        },
      },
      merge,
    )) as { spec: { replicas: number }; status: { readyReplicas: number }; metadata: { generation: number } };
    expect(s.status.readyReplicas).toBe(1);
    expect(s.spec.replicas).toBe(1);
    expect(s.metadata.generation).toBe(1);
    const m = (await custom.patchNamespacedCustomObject(
      { ...ref, name: 'st', body: { status: { readyReplicas: 0 } } },
      merge,
    )) as {
      status: { readyReplicas: number };
    };
    expect(m.status.readyReplicas).toBe(1);
  });

  it('scale subresource maps to the CRD scale paths', async () => {
    await custom.createNamespacedCustomObject({ ...ref, body: md('sc', 2) });
    await custom.patchNamespacedCustomObjectStatus(
      { ...ref, name: 'sc', body: { status: { replicas: 2, selector: 'app=sc' } } },
      merge,
    );
    const scale = await custom.getNamespacedCustomObjectScale({ ...ref, name: 'sc' });
    expect(scale).toMatchObject({
      kind: 'Scale',
      spec: { replicas: 2 },
      status: { replicas: 2, selector: 'app=sc' },
    });
    await custom.patchNamespacedCustomObjectScale(
      { ...ref, name: 'sc', body: { spec: { replicas: 5 } } },
      merge,
    );
    const obj = (await custom.getNamespacedCustomObject({ ...ref, name: 'sc' })) as {
      spec: { replicas: number };
    };
    expect(obj.spec.replicas).toBe(5);
  });

  it('TalosControlPlane (v1alpha3) round-trips its spec', async () => {
    const tcp = {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosControlPlane',
      metadata: { name: 'cp', namespace: 'default' },
      spec: {
        replicas: 3,
        version: 'v1.32.4',
        controlPlaneConfig: { controlplane: { generateType: 'controlplane' } },
      },
    };
    const t = {
      group: 'controlplane.cluster.x-k8s.io',
      version: 'v1alpha3',
      namespace: 'default',
      plural: 'taloscontrolplanes',
    };
    await custom.createNamespacedCustomObject({ ...t, body: tcp });
    const got = (await custom.getNamespacedCustomObject({ ...t, name: 'cp' })) as typeof tcp;
    expect(got.spec).toEqual(tcp.spec);
  });

  it('a cluster-scoped CRD serves cluster-scoped objects; deleting a CRD deletes its objects', async () => {
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Cluster',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    const w = { group: 'example.com', version: 'v1', plural: 'widgets' };
    await custom.createClusterCustomObject({
      ...w,
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, spec: { size: 1 } },
    });
    expect(
      ((await custom.getClusterCustomObject({ ...w, name: 'w1' })) as { spec: { size: number } }).spec.size,
    ).toBe(1);
    await ext.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    expect((await failure(custom.getClusterCustomObject({ ...w, name: 'w1' }))).code).toBe(404);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Cluster',
          names: { plural: 'widgets', kind: 'Widget' },
          versions: [{ name: 'v1', served: true, storage: true }],
        },
      },
    });
    expect(((await custom.listClusterCustomObject(w)) as { items: unknown[] }).items).toEqual([]);
  });
});
