import { describe, expect, it } from 'vitest';
import { buildIndex } from './snapshot-index.js';
import { makeSnapshot, obj } from './testing.js';

function pod(
  name: string,
  ns: string,
  node: string,
  labels: Record<string, string>,
  owner?: { kind: string; name: string; uid: string },
) {
  return obj('Pod', name, {
    namespace: ns,
    metadata: {
      name,
      namespace: ns,
      uid: `pod-${name}`,
      labels,
      ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', ...owner, controller: true }] } : {}),
    },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }] },
  });
}

describe('SnapshotIndex', () => {
  const deploy = obj('Deployment', 'web', {
    namespace: 'shop',
    metadata: { name: 'web', namespace: 'shop', uid: 'd-1' },
    spec: { replicas: 2, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } },
  });
  const rs = obj('ReplicaSet', 'web-5d4f', {
    namespace: 'shop',
    metadata: {
      name: 'web-5d4f',
      namespace: 'shop',
      uid: 'rs-1',
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-1', controller: true },
      ],
    },
    spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } } },
  });
  const cron = obj('CronJob', 'backup', {
    namespace: 'ops',
    metadata: { name: 'backup', namespace: 'ops', uid: 'cj-1' },
    spec: {
      jobTemplate: {
        spec: { template: { metadata: { labels: { job: 'backup' } }, spec: { containers: [] } } },
      },
    },
  });
  // A Job whose owner reference has no uid match: found by kind/namespace/name (hand-written dumps).
  const job = obj('Job', 'backup-29000', {
    namespace: 'ops',
    metadata: {
      name: 'backup-29000',
      namespace: 'ops',
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'CronJob', name: 'backup', uid: '', controller: true },
      ],
    },
    spec: { template: { spec: { containers: [] } } },
  });
  const p1 = pod(
    'web-5d4f-a',
    'shop',
    'worker-1',
    { app: 'web' },
    { kind: 'ReplicaSet', name: 'web-5d4f', uid: 'rs-1' },
  );
  const p2 = pod(
    'web-5d4f-b',
    'shop',
    'worker-2',
    { app: 'web' },
    { kind: 'ReplicaSet', name: 'web-5d4f', uid: 'rs-1' },
  );
  const bare = pod('debug', 'shop', 'worker-1', { app: 'debug' });
  const jobPod = pod(
    'backup-29000-x',
    'ops',
    'worker-2',
    { job: 'backup' },
    { kind: 'Job', name: 'backup-29000', uid: 'nope' },
  );
  const pdb = obj('PodDisruptionBudget', 'web', {
    namespace: 'shop',
    spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
  });
  const index = buildIndex(
    makeSnapshot({
      resources: {
        deployments: [deploy],
        replicasets: [rs],
        cronjobs: [cron],
        jobs: [job],
        pods: [p1, p2, bare, jobPod],
        poddisruptionbudgets: [pdb],
        nodes: [obj('Node', 'worker-1'), obj('Node', 'worker-2')],
        services: [obj('Service', 'web', { namespace: 'shop' })],
        configmaps: [obj('ConfigMap', 'kubeadm-config', { namespace: 'kube-system' })],
      },
    }),
  );

  it('groups pods by node, namespace and owner', () => {
    expect(index.podsByNode.get('worker-1')?.map((p) => p.metadata.name)).toEqual(['web-5d4f-a', 'debug']);
    expect(index.podsByNamespace.get('shop')).toHaveLength(3);
    expect(index.podsByOwnerUid.get('rs-1')).toHaveLength(2);
    expect(index.nodesByName.has('worker-2')).toBe(true);
    expect(index.servicesByNamespace.get('shop')).toHaveLength(1);
    expect(index.configMaps.has('kube-system/kubeadm-config')).toBe(true);
  });

  it('follows owner chains to the top controller', () => {
    expect(index.controllerOf(p1)?.metadata.name).toBe('web-5d4f');
    expect(index.topControllerOf(p1)?.metadata.name).toBe('web');
    expect(index.topControllerOf(jobPod)?.kind).toBe('CronJob');
    expect(index.controllerOf(bare)).toBeUndefined();
  });

  it('resolves PDB selectors both ways', () => {
    const [b] = index.pdbsByNamespace.get('shop')!;
    expect(index.podsSelectedBy(b!).map((p) => p.metadata.name)).toEqual(['web-5d4f-a', 'web-5d4f-b']);
    expect(index.pdbsForPod(p2)).toHaveLength(1);
    expect(index.pdbsForPod(bare)).toHaveLength(0);
  });

  it('finds PDBs with empty, expression-only and missing selectors', () => {
    const all = obj('PodDisruptionBudget', 'all', { namespace: 'shop', spec: { selector: {} } });
    const expr = obj('PodDisruptionBudget', 'expr', {
      namespace: 'shop',
      spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'debug'] }] } },
    });
    const none = obj('PodDisruptionBudget', 'none', { namespace: 'shop', spec: {} });
    const two = obj('PodDisruptionBudget', 'two', {
      namespace: 'shop',
      spec: { selector: { matchLabels: { app: 'debug', tier: 'x' } } },
    });
    const idx = buildIndex(
      makeSnapshot({ resources: { pods: [p1, bare], poddisruptionbudgets: [pdb, all, expr, none, two] } }),
    );
    const names = (p: typeof p1) =>
      idx
        .pdbsForPod(p)
        .map((b) => b.pdb.metadata.name)
        .sort();
    expect(names(p1)).toEqual(['all', 'expr', 'web']);
    expect(names(bare)).toEqual(['all', 'expr']);
    const selected = (name: string) =>
      idx
        .podsSelectedBy(idx.pdbsByNamespace.get('shop')!.find((b) => b.pdb.metadata.name === name)!)
        .map((p) => p.metadata.name);
    expect(selected('all')).toEqual(['web-5d4f-a', 'debug']);
    expect(selected('expr')).toEqual(['web-5d4f-a', 'debug']);
    expect(selected('none')).toEqual([]);
    expect(selected('two')).toEqual([]);
    expect(selected('web')).toEqual(['web-5d4f-a']);
  });

  it('lists every pod template once', () => {
    const w = index.workloads().map((x) => `${x.kind}/${x.object.metadata.name}@${x.specPath}`);
    expect(w.sort()).toEqual([
      'CronJob/backup@spec.jobTemplate.spec.template.spec',
      'Deployment/web@spec.template.spec',
      'Pod/debug@spec',
    ]);
    expect(index.workloads()).toBe(index.workloads());
  });
});
