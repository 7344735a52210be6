/**
 * ferry's own kube adapter (src/adapters/kube) against the lab API server, through a kubeconfig
 * file written by writeKubeconfig: the lab must serve every resource kind ferry reads.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createKubeReader } from '../../adapters/kube/reader.js';
import { createRequester } from '../../adapters/kube/request.js';
import { isKubeApiError } from '../../ports/kube.js';
import { RESOURCE_TYPES, type ResourceKind } from '../../ports/kube-kinds.js';
import { COLLECTION_LISTS } from '../../snapshot/reads.js';
import { installLabGitopsCrds } from '../gitops/crds.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from './testing.js';

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  lab = await startLabApi();
  dir = await mkdtemp(join(tmpdir(), 'ferry-lab-api-'));
  kubeconfig = join(dir, 'admin.conf');
  await writeAdminKubeconfig(lab, kubeconfig);
  const core = lab.kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < 5; i++) {
    await core.createNamespacedPod({
      namespace: 'kube-system',
      body: {
        metadata: { name: `p${i}`, labels: { tier: 'control-plane' } },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
    });
  }
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('ferry kube adapter against the lab API server', () => {
  it('reads through a 0600 kubeconfig: version, paged lists with type meta, 404 as undefined', async () => {
    expect((await stat(kubeconfig)).mode & 0o777).toBe(0o600);
    const reader = createKubeReader({ kubeconfig });
    expect((await reader.version()).gitVersion).toBe('v1.32.4');
    const pages: number[] = [];
    const pods = await reader.list('pods', {
      namespace: 'kube-system',
      pageSize: 2,
      onPage: (n) => pages.push(n),
    });
    expect(pods.map((p) => p.metadata.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect(pages).toEqual([2, 4, 5]);
    expect(pods[0]).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
    const selected = await reader.list('pods', {
      labelSelector: 'tier=control-plane',
      fieldSelector: 'metadata.name=p3',
    });
    expect(selected.map((p) => p.metadata.name)).toEqual(['p3']);
    expect(await reader.get('configmaps', 'kube-system', 'kubeadm-config')).toBeUndefined();
    expect((await reader.get('namespaces', undefined, 'kube-system'))?.metadata.name).toBe('kube-system');
  });

  it('answers GET /version field for field as kube-apiserver, with the version it was given', async () => {
    const v136 = await startLabApi({ kubernetesVersion: 'v1.36.2' });
    try {
      const file = join(dir, 'v136.conf');
      await writeAdminKubeconfig(v136, file);
      const v = await createKubeReader({ kubeconfig: file }).version();
      expect(v).toEqual({
        major: '1',
        minor: '36',
        emulationMajor: '1',
        emulationMinor: '36',
        minCompatibilityMajor: '1',
        minCompatibilityMinor: '35',
        gitVersion: 'v1.36.2',
        gitCommit: expect.stringMatching(/^[0-9a-f]{40}$/),
        gitTreeState: 'clean',
        buildDate: expect.any(String),
        goVersion: expect.stringMatching(/^go1\./),
        compiler: 'gc',
        platform: 'linux/amd64',
      });
    } finally {
      await v136.stop();
    }
  });

  it('serves every resource kind the adapter lists; a CRD-served kind only once its CRD is installed', async () => {
    const reader = createKubeReader({ kubeconfig });
    const optional = new Set(COLLECTION_LISTS.filter((l) => l.optionalCrd).map((l) => l.kind));
    expect(optional.size).toBeGreaterThan(0);
    const kinds = Object.keys(RESOURCE_TYPES) as ResourceKind[];
    for (const kind of kinds) {
      const listed = reader.list(kind);
      if (!optional.has(kind)) {
        await expect(listed, kind).resolves.toBeInstanceOf(Array);
        continue;
      }
      // A cluster without the controller: 404, which collection reads as "none here".
      const err = await listed.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isKubeApiError(err, 404), kind).toBe(true);
    }
    await installLabGitopsCrds(createRequester(loadKubeconfig(kubeconfig)));
    for (const kind of kinds) await expect(reader.list(kind), kind).resolves.toEqual(expect.any(Array));
  });
});
