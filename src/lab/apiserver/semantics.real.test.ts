/**
 * Conformance of the REST semantics ferry relies on, through @kubernetes/client-node's typed
 * APIs on a MemoryStore: selectors, pagination and expired continue tokens, optimistic
 * concurrency, the three patch types, validation, generation, scale, discovery, authentication
 * and the instance's health under faults.
 */
import { request } from 'node:https';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Pod,
  VersionApi,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCert } from './credentials.js';
import { MemoryStore } from './memory-store.js';
import { clientKubeConfig, failure, type LabApiFixture, labCA, startLabApi } from './testing.js';

let lab: LabApiFixture;
let core: CoreV1Api;
let apps: AppsV1Api;
const NS = 'sem';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

beforeAll(async () => {
  lab = await startLabApi({ name: 'sem-1' });
  core = lab.kc.makeApiClient(CoreV1Api);
  apps = lab.kc.makeApiClient(AppsV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
});
afterAll(async () => {
  await lab?.stop();
});

const pod = (name: string, labels: Record<string, string>, nodeName?: string): V1Pod => ({
  metadata: { name, labels },
  spec: { ...(nodeName && { nodeName }), containers: [{ name: 'c', image: 'busybox:1.36' }] },
});

const names = (items: { metadata?: { name?: string } }[]) => items.map((i) => i.metadata?.name).sort();

describe('selectors', () => {
  beforeAll(async () => {
    await core.createNamespacedPod({ namespace: NS, body: pod('a', { app: 'web', tier: 'front' }, 'n1') });
    await core.createNamespacedPod({ namespace: NS, body: pod('b', { app: 'web', tier: 'back' }, 'n2') });
    await core.createNamespacedPod({ namespace: NS, body: pod('c', { app: 'db' }, 'n1') });
    await core.patchNamespacedPodStatus(
      { namespace: NS, name: 'c', body: { status: { phase: 'Running' } } },
      merge,
    );
  });

  it('filters by label selector operators', async () => {
    const list = async (labelSelector: string) =>
      names((await core.listNamespacedPod({ namespace: NS, labelSelector })).items);
    expect(await list('app=web')).toEqual(['a', 'b']);
    expect(await list('app!=web')).toEqual(['c']);
    expect(await list('tier in (front,back)')).toEqual(['a', 'b']);
    expect(await list('tier notin (front)')).toEqual(['b', 'c']);
    expect(await list('tier')).toEqual(['a', 'b']);
    expect(await list('!tier')).toEqual(['c']);
    expect(await list('app=web,tier=back')).toEqual(['b']);
  });

  it('filters by field selector, across namespaces too', async () => {
    const list = async (fieldSelector: string) =>
      names((await core.listNamespacedPod({ namespace: NS, fieldSelector })).items);
    expect(await list('spec.nodeName=n1')).toEqual(['a', 'c']);
    expect(await list('spec.nodeName=n1,status.phase=Running')).toEqual(['c']);
    expect(await list('metadata.name!=a')).toEqual(['b', 'c']);
    const all = await core.listPodForAllNamespaces({
      fieldSelector: `metadata.namespace=${NS},spec.nodeName=n2`,
    });
    expect(names(all.items)).toEqual(['b']);
  });

  it('rejects an unknown field and a malformed label selector with 400', async () => {
    const f = await failure(core.listNamespacedPod({ namespace: NS, fieldSelector: 'spec.hostname=x' }));
    expect(f).toMatchObject({
      code: 400,
      status: { reason: 'BadRequest', message: 'field label not supported: spec.hostname' },
    });
    const l = await failure(core.listNamespacedPod({ namespace: NS, labelSelector: 'app in (web' }));
    expect(l.code).toBe(400);
  });
});

describe('pagination', () => {
  it('pages with limit/continue over one consistent revision, then 410 once compacted', async () => {
    const ns = 'pages';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    for (let i = 0; i < 7; i++)
      await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `cm-${i}` } } });
    const first = await core.listNamespacedConfigMap({ namespace: ns, limit: 3 });
    expect(names(first.items)).toEqual(['cm-0', 'cm-1', 'cm-2']);
    expect(first.metadata?.remainingItemCount).toBe(4);
    const token = first.metadata?._continue;
    expect(token).toBeTruthy();
    // Changes after the first page do not show in the continuation.
    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'cm-5' });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cm-9' } } });
    const second = await core.listNamespacedConfigMap({ namespace: ns, limit: 3, _continue: token });
    expect(names(second.items)).toEqual(['cm-3', 'cm-4', 'cm-5']);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const third = await core.listNamespacedConfigMap({
      namespace: ns,
      limit: 3,
      _continue: second.metadata?._continue,
    });
    expect(names(third.items)).toEqual(['cm-6']);
    expect(third.metadata?._continue).toBeUndefined();

    await lab.store.compact(await lab.store.revision());
    const gone = await failure(core.listNamespacedConfigMap({ namespace: ns, limit: 3, _continue: token }));
    expect(gone.code).toBe(410);
    expect(gone.status.reason).toBe('Expired');
    expect(gone.status.metadata.continue).toBeTruthy();
    const restarted = await core.listNamespacedConfigMap({
      namespace: ns,
      limit: 3,
      _continue: gone.status.metadata.continue,
    });
    expect(names(restarted.items)).toEqual(['cm-3', 'cm-4', 'cm-6']);

    const bogus = await failure(core.listNamespacedConfigMap({ namespace: ns, _continue: 'not-a-token' }));
    expect(bogus.code).toBe(400);
  });
});

describe('compaction', () => {
  it('compacts history one interval behind, so an old continue token expires on its own', async () => {
    const own = await startLabApi({ compactionIntervalMs: 100 });
    try {
      const c = own.kc.makeApiClient(CoreV1Api);
      for (const n of ['a', 'b', 'c'])
        await c.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: n } } });
      const first = await c.listNamespacedConfigMap({ namespace: 'default', limit: 1 });
      await c.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'd' } } });
      const deadline = Date.now() + 3_000;
      let code = 200;
      while (code === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        code = await c
          .listNamespacedConfigMap({ namespace: 'default', limit: 1, _continue: first.metadata?._continue })
          .then(
            () => 200,
            (err: { code: number }) => err.code,
          );
      }
      expect(code).toBe(410);
    } finally {
      await own.stop();
    }
  });
});

describe('updates', () => {
  it('conflicts on a stale resourceVersion, updates unconditionally without one, and skips no-op writes', async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'upd' }, data: { v: '1' } },
    });
    const v2 = await core.replaceNamespacedConfigMap({
      namespace: NS,
      name: 'upd',
      body: { ...cm, data: { v: '2' } },
    });
    const stale = await failure(
      core.replaceNamespacedConfigMap({ namespace: NS, name: 'upd', body: { ...cm, data: { v: '3' } } }),
    );
    expect(stale).toMatchObject({
      code: 409,
      status: {
        reason: 'Conflict',
        message:
          'Operation cannot be fulfilled on configmaps "upd": the object has been modified; please apply your changes to the latest version and try again',
        details: { name: 'upd', kind: 'configmaps' },
      },
    });
    const body: V1ConfigMap = { metadata: { name: 'upd' }, data: { v: '4' } };
    const v4 = await core.replaceNamespacedConfigMap({ namespace: NS, name: 'upd', body });
    expect(v4.data).toEqual({ v: '4' });
    expect(v4.metadata?.uid).toBe(cm.metadata?.uid);
    const same = await core.replaceNamespacedConfigMap({ namespace: NS, name: 'upd', body: v4 });
    expect(same.metadata?.resourceVersion).toBe(v4.metadata?.resourceVersion);
    expect(Number(v4.metadata?.resourceVersion)).toBeGreaterThan(Number(v2.metadata?.resourceVersion));
    const mismatch = await failure(core.replaceNamespacedConfigMap({ namespace: NS, name: 'other', body }));
    expect(mismatch.code).toBe(400);
  });

  it('keeps status on the main resource and only status on the status subresource', async () => {
    await core.createNamespacedPod({ namespace: NS, body: pod('st', { app: 'st' }, 'n1') });
    const p1 = await core.patchNamespacedPod(
      {
        namespace: NS,
        name: 'st',
        body: { metadata: { labels: { more: 'x' } }, status: { phase: 'Failed' } },
      },
      merge,
    );
    expect(p1.status?.phase).toBe('Pending');
    expect(p1.metadata?.labels?.more).toBe('x');
    const p2 = await core.patchNamespacedPodStatus(
      {
        namespace: NS,
        name: 'st',
        body: { metadata: { labels: { ignored: 'x' } }, status: { phase: 'Running' } },
      },
      merge,
    );
    expect(p2.status?.phase).toBe('Running');
    expect(p2.metadata?.labels?.ignored).toBeUndefined();
  });
});

describe('patch types', () => {
  beforeAll(async () => {
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: 'web', labels: { a: '1', b: '2' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] },
                { name: 'side', image: 'side:1' },
              ],
            },
          },
        },
      },
    });
  });

  it('merge patch: sets and deletes (null) keys, bumps generation only for spec changes', async () => {
    const before = await apps.readNamespacedDeployment({ namespace: NS, name: 'web' });
    const d = await apps.patchNamespacedDeployment(
      { namespace: NS, name: 'web', body: { metadata: { labels: { a: null, c: '3' } } } },
      merge,
    );
    expect(d.metadata?.labels).toEqual({ b: '2', c: '3' });
    expect(d.metadata?.generation).toBe(before.metadata?.generation);
    const scaled = await apps.patchNamespacedDeployment(
      { namespace: NS, name: 'web', body: { spec: { replicas: 3 } } },
      merge,
    );
    expect(scaled.metadata?.generation).toBe((before.metadata?.generation ?? 0) + 1);
  });

  it('strategic merge patch: merges containers and env by name', async () => {
    const d = await apps.patchNamespacedDeployment(
      {
        namespace: NS,
        name: 'web',
        body: {
          spec: {
            template: {
              spec: { containers: [{ name: 'app', image: 'app:2', env: [{ name: 'B', value: '2' }] }] },
            },
          },
        },
      },
      strategic,
    );
    const containers = d.spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['app', 'app:2'],
      ['side', 'side:1'],
    ]);
    expect(containers[0]?.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('JSON patch: applies operations in order; a failed test is 422 and changes nothing', async () => {
    const d = await apps.patchNamespacedDeployment(
      {
        namespace: NS,
        name: 'web',
        body: [
          { op: 'test', path: '/spec/replicas', value: 3 },
          { op: 'replace', path: '/spec/replicas', value: 4 },
          { op: 'add', path: '/metadata/annotations', value: { note: 'json' } },
        ],
      },
      jsonPatch,
    );
    expect(d.spec?.replicas).toBe(4);
    expect(d.metadata?.annotations).toEqual({ note: 'json' });
    const f = await failure(
      apps.patchNamespacedDeployment(
        {
          namespace: NS,
          name: 'web',
          body: [
            { op: 'replace', path: '/spec/replicas', value: 9 },
            { op: 'test', path: '/spec/replicas', value: 1 },
          ],
        },
        jsonPatch,
      ),
    );
    expect(f.code).toBe(422);
    expect((await apps.readNamespacedDeployment({ namespace: NS, name: 'web' })).spec?.replicas).toBe(4);
  });

  it('a patch carrying a stale resourceVersion conflicts', async () => {
    const f = await failure(
      apps.patchNamespacedDeployment(
        { namespace: NS, name: 'web', body: { metadata: { resourceVersion: '1' }, spec: { replicas: 1 } } },
        merge,
      ),
    );
    expect(f.code).toBe(409);
  });

  it('scale subresource reads and writes spec.replicas', async () => {
    const s = await apps.readNamespacedDeploymentScale({ namespace: NS, name: 'web' });
    expect(s).toMatchObject({ kind: 'Scale', spec: { replicas: 4 }, status: { selector: 'app=web' } });
    const s2 = await apps.patchNamespacedDeploymentScale(
      { namespace: NS, name: 'web', body: { spec: { replicas: 1 } } },
      merge,
    );
    expect(s2.spec?.replicas).toBe(1);
    expect((await apps.readNamespacedDeployment({ namespace: NS, name: 'web' })).spec?.replicas).toBe(1);
    const bad = await failure(
      apps.replaceNamespacedDeploymentScale({
        namespace: NS,
        name: 'web',
        body: { metadata: { name: 'web' }, spec: { replicas: -1 } },
      }),
    );
    expect(bad.code).toBe(422);
  });
});

describe('validation', () => {
  const ds = (labels: Record<string, string>) => ({
    metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });

  it('names: RBAC objects take path segments (system:…), other kinds DNS-1123 subdomains', async () => {
    const rbac = lab.kc.makeApiClient(RbacAuthorizationV1Api);
    const crb = await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'system:public-info-viewer' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'system:public-info-viewer',
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
      },
    });
    expect(crb.metadata?.name).toBe('system:public-info-viewer');
    const bad = await failure(rbac.createClusterRole({ body: { metadata: { name: 'a/b' }, rules: [] } }));
    expect(bad.code).toBe(422);
    const cm = await failure(
      core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'a:b' } } }),
    );
    expect(cm.code).toBe(422);
  });

  it('DaemonSet spec.selector is immutable', async () => {
    await apps.createNamespacedDaemonSet({ namespace: NS, body: ds({ app: 'agent' }) });
    const f = await failure(
      apps.replaceNamespacedDaemonSet({ namespace: NS, name: 'agent', body: ds({ app: 'agent2' }) }),
    );
    expect(f.code).toBe(422);
    expect(f.status.reason).toBe('Invalid');
    expect(f.status.message).toMatch(
      /^DaemonSet\.apps "agent" is invalid: spec\.selector: Invalid value: .*: field is immutable$/,
    );
    expect(f.status.details?.causes).toEqual([
      expect.objectContaining({ field: 'spec.selector', reason: 'FieldValueInvalid' }),
    ]);
  });

  it('a workload whose selector does not match its template is invalid', async () => {
    const body = { ...ds({ app: 'x' }), metadata: { name: 'mismatch' } };
    body.spec.template.metadata.labels = { app: 'y' };
    const f = await failure(apps.createNamespacedDeployment({ namespace: NS, body }));
    expect(f.code).toBe(422);
    expect(f.status.message).toContain('spec.template.metadata.labels');
  });

  it('a pod may change its image but not its other spec fields', async () => {
    await core.createNamespacedPod({ namespace: NS, body: pod('imm', { app: 'imm' }, 'n1') });
    const ok = await core.patchNamespacedPod(
      { namespace: NS, name: 'imm', body: { spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] } } },
      strategic,
    );
    expect(ok.spec?.containers[0]?.image).toBe('busybox:1.37');
    // A hand-written PUT gets the same defaults as the create did, so it is not a spec change.
    const cur = await core.readNamespacedPod({ namespace: NS, name: 'imm' });
    const put = await core.replaceNamespacedPod({
      namespace: NS,
      name: 'imm',
      body: {
        metadata: { name: 'imm', labels: { app: 'imm' } },
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'busybox:1.38' }],
          tolerations: cur.spec?.tolerations,
          serviceAccountName: 'default',
          serviceAccount: 'default',
          priority: 0,
        },
      },
    });
    expect(put.spec?.containers[0]?.image).toBe('busybox:1.38');
    expect(put.spec?.dnsPolicy).toBe('ClusterFirst');
    const f = await failure(
      core.patchNamespacedPod({ namespace: NS, name: 'imm', body: { spec: { nodeName: 'n2' } } }, merge),
    );
    expect(f.code).toBe(422);
    expect(f.status.message).toContain('spec: Forbidden: pod updates may not change fields');
  });
});

describe('delete', () => {
  it('deletecollection removes what the selector matches', async () => {
    for (const n of ['dc-1', 'dc-2', 'dc-3']) {
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: n, labels: { group: n === 'dc-3' ? 'b' : 'a' } } },
      });
    }
    await core.deleteCollectionNamespacedConfigMap({ namespace: NS, labelSelector: 'group=a' });
    const left = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: 'group' });
    expect(names(left.items)).toEqual(['dc-3']);
  });

  it('an object with finalizers stays until they are removed', async () => {
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } },
    });
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'fin' });
    const held = await core.readNamespacedConfigMap({ namespace: NS, name: 'fin' });
    expect(held.metadata?.deletionTimestamp).toBeDefined();
    await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'fin', body: { metadata: { finalizers: null } } },
      merge,
    );
    expect((await failure(core.readNamespacedConfigMap({ namespace: NS, name: 'fin' }))).code).toBe(404);
  });

  it('deleting a namespace deletes what is in it', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'x' } } });
    await core.deleteNamespace({ name: 'doomed' });
    expect((await failure(core.readNamespace({ name: 'doomed' }))).code).toBe(404);
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    expect((await core.listNamespacedConfigMap({ namespace: 'doomed' })).items).toEqual([]);
  });
});

/** GET over HTTPS with an optional client certificate; returns status and body text. */
function get(
  url: string,
  caPem: string,
  client?: { certPem: string; keyPem: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca: caPem, agent: false, ...(client && { cert: client.certPem, key: client.keyPem }) },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('discovery, version and authentication', () => {
  it('serves /version and the discovery documents', async () => {
    const v = await lab.kc.makeApiClient(VersionApi).getCode();
    expect(v).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.4' });
    const { status, body } = await get(
      `${lab.server.url}/apis/policy/v1`,
      lab.ca.certPem,
      await issueClientCert(lab.ca, 'u', ['g']),
    );
    expect(status).toBe(200);
    const doc = JSON.parse(body) as { resources: { name: string; kind: string }[] };
    expect(doc.resources.map((r) => r.name)).toEqual(['poddisruptionbudgets', 'poddisruptionbudgets/status']);
    const pods = JSON.parse(
      (await get(`${lab.server.url}/api/v1`, lab.ca.certPem, await issueClientCert(lab.ca, 'u'))).body,
    ) as {
      resources: { name: string; kind: string; group?: string }[];
    };
    expect(pods.resources).toContainEqual(
      expect.objectContaining({ name: 'pods/eviction', group: 'policy', kind: 'Eviction' }),
    );
  });

  it('lets anonymous clients read health and version only; rejects certificates from another CA', async () => {
    expect(await get(`${lab.server.url}/readyz`, lab.ca.certPem)).toEqual({ status: 200, body: 'ok' });
    expect((await get(`${lab.server.url}/version`, lab.ca.certPem)).status).toBe(200);
    const denied = await get(`${lab.server.url}/api/v1/namespaces`, lab.ca.certPem);
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.body)).toMatchObject({
      reason: 'Forbidden',
      message: expect.stringContaining('system:anonymous'),
    });
    const otherCa = await labCA();
    const stranger = await get(
      `${lab.server.url}/api/v1/namespaces`,
      lab.ca.certPem,
      await issueClientCert(otherCa, 'kubernetes-admin'),
    );
    expect(stranger.status).toBe(401);
  });
});

describe('faults', () => {
  it('setDown fails /readyz with 500 and the API with 503, then recovers', async () => {
    const own = await startLabApi({ name: 'fault' });
    try {
      const c = own.kc.makeApiClient(CoreV1Api);
      own.server.setDown(true);
      expect((await get(`${own.server.url}/readyz`, own.ca.certPem)).status).toBe(500);
      expect((await failure(c.listNamespace())).code).toBe(503);
      own.server.setDown(true, 'refuse');
      await expect(get(`${own.server.url}/readyz`, own.ca.certPem)).rejects.toThrow();
      own.server.setDown(false);
      expect((await get(`${own.server.url}/readyz`, own.ca.certPem)).status).toBe(200);
      expect((await c.listNamespace()).items.length).toBe(4);
    } finally {
      await own.stop();
    }
  });

  it('an unavailable store fails /readyz and answers 500 to API calls, while /livez stays up', async () => {
    const store = new MemoryStore();
    const own = await startLabApi({ store });
    try {
      const { kc } = await clientKubeConfig(own.server.url, own.ca);
      store.setUnavailable('etcdserver: server stopped');
      const ready = await get(`${own.server.url}/readyz?verbose`, own.ca.certPem);
      expect(ready.status).toBe(500);
      expect(ready.body).toContain('[-]etcd failed');
      expect((await get(`${own.server.url}/livez`, own.ca.certPem)).status).toBe(200);
      const f = await failure(kc.makeApiClient(CoreV1Api).listNamespace());
      expect(f).toMatchObject({ code: 500, status: { reason: 'InternalError' } });
      expect(f.status.message).toContain('etcdserver: server stopped');
    } finally {
      await own.stop();
    }
  });
});
