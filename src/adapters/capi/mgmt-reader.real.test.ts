/**
 * readMgmt against the lab API server serving the repository's Cluster API CRDs (loopback subnet
 * 127.0.150.x, this engineer's range): every object of every Cluster API CRD at its storage
 * version, the Secrets of the Clusters' namespaces without values, and the CRD versions; the
 * capi.* rules then read what it collected.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bootstrapSplitBrain } from '../../audit/rules/capi.js';
import { makeContext } from '../../audit/testing.js';
import { labCluster } from '../../facts/testing-builders.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../../lab/apiserver/testing.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../kube/request.js';
import { readMgmt, readMgmtFromKubeconfig } from './mgmt-reader.js';

const SPECS = new URL('../../../schemas/capi/', import.meta.url);
let lab: LabApiFixture;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-mgmt-reader-'));
  lab = await startLabApi({ host: '127.0.150.1' });
  const ext = lab.kc.makeApiClient(ApiextensionsV1Api);
  for (const f of [
    'cluster.x-k8s.io_clusters.yaml',
    'controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml',
    'clusterctl.cluster.x-k8s.io_providers.yaml',
  ]) {
    const body = parse(await readFile(new URL(f, SPECS), 'utf8')) as V1CustomResourceDefinition;
    await ext.createCustomResourceDefinition({ body });
  }
  const core = lab.kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: 'lab' } } });
  await core.createNamespace({ body: { metadata: { name: 'other' } } });
  const custom = lab.kc.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({
    group: 'cluster.x-k8s.io',
    version: 'v1beta2',
    namespace: 'lab',
    plural: 'clusters',
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'lab', namespace: 'lab' },
    },
  });
  await custom.createNamespacedCustomObject({
    group: 'controlplane.cluster.x-k8s.io',
    version: 'v1alpha3',
    namespace: 'lab',
    plural: 'taloscontrolplanes',
    body: {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosControlPlane',
      metadata: {
        name: 'lab-control-plane',
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
      },
      spec: {
        replicas: 0,
        version: 'v1.32.4',
        infrastructureTemplate: { kind: 'ProxmoxMachineTemplate', name: 'lab-control-plane' },
        controlPlaneConfig: { controlplane: { generateType: 'controlplane' } },
      },
    },
  });
  await core.createNamespacedSecret({
    namespace: 'lab',
    body: {
      metadata: { name: 'lab-talos' },
      data: { bundle: Buffer.from('ca-key-material').toString('base64') },
    },
  });
  await core.createNamespacedSecret({
    namespace: 'other',
    body: { metadata: { name: 'unrelated' }, data: { x: Buffer.from('y').toString('base64') } },
  });
  await writeAdminKubeconfig(lab, join(dir, 'mgmt.conf'));
});
afterAll(async () => {
  await lab?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('readMgmt on the lab API server', () => {
  it('collects the Cluster API objects, the Clusters’ Secrets without values, and the CRD versions', async () => {
    const m = await readMgmtFromKubeconfig(join(dir, 'mgmt.conf'));
    const kinds = m.objects.map(
      (o) => `${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`,
    );
    expect(kinds).toEqual(
      expect.arrayContaining([
        'cluster.x-k8s.io/v1beta2 Cluster lab/lab',
        'controlplane.cluster.x-k8s.io/v1alpha3 TalosControlPlane lab/lab-control-plane',
        'v1 Secret lab/lab-talos',
      ]),
    );
    // Only the namespaces holding Clusters.
    expect(kinds.some((k) => k.includes('unrelated'))).toBe(false);
    const secret = m.objects.find((o) => o.metadata.name === 'lab-talos')!;
    expect(secret['data']).toEqual({ bundle: '' });
    expect(JSON.stringify(m)).not.toContain(Buffer.from('ca-key-material').toString('base64'));
    expect(m.crds.map((c) => c.name).sort()).toEqual([
      'clusters.cluster.x-k8s.io',
      'providers.clusterctl.cluster.x-k8s.io',
      'taloscontrolplanes.controlplane.cluster.x-k8s.io',
    ]);
    expect(m.crds.find((c) => c.kind === 'Cluster')!.versions.find((v) => v.storage)!.name).toBe('v1beta2');

    // The audit reads what was collected: the TalosControlPlane was never marked bootstrapped.
    const s = labCluster();
    s.mgmt = m;
    s.manifest.parts.push('mgmt');
    const out = bootstrapSplitBrain.check(makeContext(s, { provisioner: 'capi' }));
    expect(Array.isArray(out) && out.map((f) => f.message).join()).toMatch(
      /lab-control-plane has status\.bootstrapped unset/,
    );
  });

  it('ferry snapshot --from DIR --mgmt-kubeconfig K writes the mgmt part, and audit reads it back', async () => {
    const { makeFilesCluster } = await import('../../snapshot/testing-files-cluster.js');
    const { memoryIo } = await import('../../cli/io.js');
    const { runCli } = await import('../../cli/run-cli.js');
    const { readSavedSnapshot } = await import('../../snapshot/store.js');
    const cluster = await makeFilesCluster();
    const files = cluster.dir;
    const io = memoryIo({ cwd: dir });
    const code = await runCli(
      ['snapshot', '--from', files, '--mgmt-kubeconfig', join(dir, 'mgmt.conf'), '-o', join(dir, 'snap')],
      io,
    );
    expect(code, io.err).toBe(0);
    expect(io.out).toMatch(/management cluster \d+ objects/);
    const back = await readSavedSnapshot(join(dir, 'snap'));
    expect(back.manifest.parts).toContain('mgmt');
    expect(back.mgmt!.objects.some((o) => o.kind === 'TalosControlPlane')).toBe(true);
    const bad = memoryIo({ cwd: dir });
    expect(
      await runCli(['snapshot', '--from', files, '--mgmt-context', 'x', '-o', join(dir, 'snap2')], bad),
    ).toBe(2);
    await cluster.cleanup();
  });

  it('lists in pages: a list over the page size comes back complete, no page larger than the size', async () => {
    const custom = lab.kc.makeApiClient(CustomObjectsApi);
    for (let i = 0; i < 5; i++)
      await custom.createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        namespace: 'lab',
        plural: 'clusters',
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name: `paged-${i}`, namespace: 'lab' },
        },
      });
    const loaded = loadKubeconfig(join(dir, 'mgmt.conf'));
    const inner = createRequester(loaded);
    const pages: { path: string; limit: unknown; items: number }[] = [];
    const t: KubeRequester = {
      address: inner.address,
      server: inner.server,
      request: async (method, path, opts) => {
        const body = (await inner.request(method, path, opts)) as { items?: unknown[] };
        pages.push({ path, limit: opts?.query?.['limit'], items: body.items?.length ?? 0 });
        return body;
      },
    };
    const m = await readMgmt(t, loaded.server, { pageSize: 2 });
    const clusters = m.objects.filter((o) => o.kind === 'Cluster').map((o) => o.metadata.name);
    expect(clusters.sort()).toEqual(['lab', 'paged-0', 'paged-1', 'paged-2', 'paged-3', 'paged-4']);
    const clusterPages = pages.filter((p) => p.path.endsWith('/clusters'));
    expect(clusterPages.length).toBe(3);
    expect(pages.every((p) => p.limit === 2 && p.items <= 2)).toBe(true);
    // The same objects as one unpaged read.
    const whole = await readMgmtFromKubeconfig(join(dir, 'mgmt.conf'));
    const ids = (x: typeof m) =>
      x.objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort();
    expect(ids(m)).toEqual(ids(whole));
  });

  it('a kubeconfig that is not there is named by its flag', async () => {
    await expect(readMgmtFromKubeconfig(join(dir, 'missing.conf'))).rejects.toThrow(
      /mgmt-kubeconfig|missing\.conf/,
    );
  });
});
