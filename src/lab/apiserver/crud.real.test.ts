/**
 * Conformance through @kubernetes/client-node's generic KubernetesObjectApi (which finds each
 * resource by discovery): create, read, list, replace, stale replace, patch and delete for every
 * built-in resource of the lab API server, on a MemoryStore.
 */
import {
  CoreV1Api,
  type KubernetesObject,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_RESOURCES } from './resources.js';
import { failure, type LabApiFixture, startLabApi } from './testing.js';

let lab: LabApiFixture;
let api: KubernetesObjectApi;

beforeAll(async () => {
  lab = await startLabApi();
  api = KubernetesObjectApi.makeApiClient(lab.kc);
  await lab.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'crud' } } });
});
afterAll(async () => {
  await lab?.stop();
});

const template = {
  metadata: { labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
};
const selector = { matchLabels: { app: 'x' } };

/** The smallest valid body of each kind (CRDs have their own suite). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  Namespace: {},
  Node: { spec: { podCIDR: '10.244.1.0/24' } },
  Pod: { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } },
  Service: { spec: { ports: [{ port: 80 }], selector: { app: 'x' } } },
  Endpoints: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
  ConfigMap: { data: { k: 'v' } },
  Secret: { type: 'Opaque', stringData: { password: 'hunter2' } },
  ServiceAccount: {},
  PersistentVolume: {
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp' } },
  },
  PersistentVolumeClaim: {
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  },
  Deployment: { spec: { replicas: 2, selector, template } },
  ReplicaSet: { spec: { replicas: 2, selector, template } },
  StatefulSet: { spec: { replicas: 2, serviceName: 'x', selector, template } },
  DaemonSet: { spec: { selector, template } },
  Job: { spec: { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } },
  CronJob: { spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template } } } },
  PodDisruptionBudget: { spec: { minAvailable: 1, selector } },
  EndpointSlice: { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }] },
  Lease: { spec: { holderIdentity: 'me', leaseDurationSeconds: 40 } },
  Role: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
  RoleBinding: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' }, subjects: [] },
  ClusterRole: { rules: [{ nonResourceURLs: ['/readyz'], verbs: ['get'] }] },
  ClusterRoleBinding: {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
    subjects: [{ kind: 'Group', name: 'system:unauthenticated', apiGroup: 'rbac.authorization.k8s.io' }],
  },
  CSIDriver: { spec: { attachRequired: false } },
  StorageClass: { provisioner: 'rancher.io/local-path', reclaimPolicy: 'Delete' },
};

const rows = BUILTIN_RESOURCES.filter((d) => d.kind !== 'CustomResourceDefinition');

describe('every built-in resource', () => {
  it('has a sample here', () => {
    expect(rows.map((d) => d.kind).filter((k) => !(k in SAMPLES))).toEqual([]);
  });

  for (const d of rows) {
    it(`${d.kind}: create, read, list, replace, stale replace → 409, patch, delete → 404`, async () => {
      const apiVersion = d.group === '' ? d.version : `${d.group}/${d.version}`;
      const name = `sample-${d.plural}`;
      const metadata = { name, ...(d.namespaced && { namespace: 'crud' }) };
      const body = {
        apiVersion,
        kind: d.kind,
        metadata,
        ...structuredClone(SAMPLES[d.kind]),
      } as KubernetesObject;

      const created = await api.create(body);
      expect(created.metadata).toMatchObject({
        name,
        uid: expect.any(String),
        resourceVersion: expect.stringMatching(/^\d+$/),
      });
      expect(created.metadata?.creationTimestamp).toBeDefined();

      const read = await api.read({ apiVersion, kind: d.kind, metadata });
      expect(read.metadata?.uid).toBe(created.metadata?.uid);
      const list = await api.list(apiVersion, d.kind, d.namespaced ? 'crud' : undefined);
      expect(list.items.map((i) => i.metadata?.name)).toContain(name);

      const changed = {
        ...read,
        metadata: { ...read.metadata, labels: { ...read.metadata?.labels, touched: 'yes' } },
      };
      const replaced = await api.replace(changed);
      expect(replaced.metadata?.labels?.touched).toBe('yes');
      expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(
        Number(read.metadata?.resourceVersion),
      );

      const stale = await failure(api.replace(changed));
      expect(stale.code).toBe(409);
      expect(stale.status).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
      expect(stale.status.message).toContain('the object has been modified');

      const patched = await api.patch(
        { apiVersion, kind: d.kind, metadata: { ...metadata, labels: { patched: 'yes' } } },
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      );
      expect(patched.metadata?.labels).toMatchObject({ touched: 'yes', patched: 'yes' });

      await api.delete({ apiVersion, kind: d.kind, metadata });
      const gone = await failure(api.read({ apiVersion, kind: d.kind, metadata }));
      expect(gone.code).toBe(404);
      expect(gone.status.reason).toBe('NotFound');
    });
  }
});

describe('create semantics', () => {
  it('generates names, folds Secret stringData into data and drops a status sent with a Pod', async () => {
    const core = lab.kc.makeApiClient(CoreV1Api);
    const cm = await core.createNamespacedConfigMap({
      namespace: 'crud',
      body: { metadata: { generateName: 'gen-' } },
    });
    expect(cm.metadata?.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    const secret = await core.createNamespacedSecret({
      namespace: 'crud',
      body: { metadata: { name: 's' }, stringData: { a: 'b' } },
    });
    expect(secret.data).toEqual({ a: Buffer.from('b').toString('base64') });
    const pod = await core.createNamespacedPod({
      namespace: 'crud',
      body: {
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
        status: { phase: 'Running' },
      },
    });
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.status?.qosClass).toBe('BestEffort');
    expect(pod.spec?.terminationGracePeriodSeconds).toBe(30);
  });

  it('answers 409 AlreadyExists, 404 for a missing namespace and 422 for a missing or bad name', async () => {
    const core = lab.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'dup' } } });
    const dup = await failure(
      core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'dup' } } }),
    );
    expect(dup).toMatchObject({
      code: 409,
      status: { reason: 'AlreadyExists', message: 'configmaps "dup" already exists' },
    });
    const nons = await failure(
      core.createNamespacedConfigMap({ namespace: 'nope', body: { metadata: { name: 'x' } } }),
    );
    expect(nons).toMatchObject({ code: 404, status: { message: 'namespaces "nope" not found' } });
    const noname = await failure(
      core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: {} } }),
    );
    expect(noname.code).toBe(422);
    expect(noname.status).toMatchObject({
      reason: 'Invalid',
      message: 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
      details: { causes: [{ reason: 'FieldValueRequired', field: 'metadata.name' }] },
    });
    const bad = await failure(
      core.createNamespacedConfigMap({ namespace: 'crud', body: { metadata: { name: 'Bad_Name' } } }),
    );
    expect(bad.code).toBe(422);
    expect(bad.status.message).toContain('metadata.name: Invalid value: "Bad_Name"');
  });

  it('gives new Nodes the not-ready taint, as admission does', async () => {
    const core = lab.kc.makeApiClient(CoreV1Api);
    const node = await core.createNode({ body: { metadata: { name: 'fresh' } } });
    expect(node.spec?.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  });
});
