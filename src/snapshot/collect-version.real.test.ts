/**
 * A live snapshot records what the API server says about itself: `ferry snapshot --kubeconfig`
 * against a lab API server answering GET /version with v1.36.2, then `ferry facts` on the result.
 * The cluster holds no kube-apiserver mirror pods, as when ferry is pointed at a cluster whose
 * control planes it cannot see: GET /version is then the only running source of the version.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { readSavedSnapshot } from './store.js';

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;
let core: CoreV1Api;

beforeAll(async () => {
  lab = await startLabApi({ kubernetesVersion: 'v1.36.2' });
  dir = await mkdtemp(join(tmpdir(), 'ferry-snapshot-version-'));
  kubeconfig = join(dir, 'admin.conf');
  await writeAdminKubeconfig(lab, kubeconfig);
  core = lab.kc.makeApiClient(CoreV1Api);
  // One kubelet not yet upgraded: its version is the Node's own status.
  for (const [name, kubelet] of [
    ['cp-1', 'v1.36.2'],
    ['worker-1', 'v1.35.4'],
  ] as const) {
    await core.createNode({ body: { metadata: { name } } });
    await core.patchNodeStatus(
      { name, body: { status: { nodeInfo: { kubeletVersion: kubelet } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

/** The lines of one fact in `ferry facts` table output. */
function factLines(table: string, key: string): string[] {
  const lines = table.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  ${key} `) || l === `  ${key}`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('      '));
  return lines.slice(start, end < 0 ? undefined : end);
}

describe('a live snapshot records the API server’s GET /version', () => {
  it('and facts take the Kubernetes version from it, citing GET /version', async () => {
    const snap = join(dir, 'snap');
    const taken = await cli('snapshot', '--kubeconfig', kubeconfig, '-o', snap);
    expect(taken.err).not.toMatch(/^error/m);
    expect(taken.code).toBe(0);
    const saved = await readSavedSnapshot(snap);
    expect(saved.manifest.parts).toContain('server-version');
    expect(saved.serverVersion?.info).toMatchObject({
      major: '1',
      minor: '36',
      gitVersion: 'v1.36.2',
      emulationMinor: '36',
      minCompatibilityMinor: '35',
    });

    const facts = await cli('facts', snap);
    expect(facts.code).toBe(0);
    expect(factLines(facts.out, 'cluster.kubernetesVersion')).toEqual([
      '  cluster.kubernetesVersion  v1.36.2',
      `      ← GET /version gitVersion (${lab.server.url})`,
    ]);
    const json = JSON.parse((await cli('facts', snap, '-o', 'json')).out) as {
      facts: { key: string; value: unknown; provenance: unknown[] }[];
      target: { kubernetesVersion?: string };
    };
    const version = json.facts.find((f) => f.key === 'cluster.kubernetesVersion');
    expect(version?.provenance).toEqual([
      { kind: 'api', server: lab.server.url, path: '/version', field: 'gitVersion' },
    ]);
    // The target defaults to the cluster's version, now known.
    expect(json.target.kubernetesVersion).toBe('v1.36.2');
    expect(json.facts.find((f) => f.key === 'nodes.kubeletVersions')?.value).toEqual([
      { version: 'v1.35.4', nodes: 1 },
      { version: 'v1.36.2', nodes: 1 },
    ]);
  });

  it('and when kubeadm-config says otherwise, facts show the disagreement', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'kubeadm-config' },
        data: {
          ClusterConfiguration:
            'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: lab\nkubernetesVersion: v1.35.4\n',
        },
      },
    });
    const snap = join(dir, 'snap-kubeadm');
    expect((await cli('snapshot', '--kubeconfig', kubeconfig, '-o', snap)).code).toBe(0);
    const facts = await cli('facts', snap);
    expect(facts.code).toBe(0);
    const lines = factLines(facts.out, 'cluster.kubernetesVersion');
    expect(lines[0]).toBe('  cluster.kubernetesVersion  v1.36.2  CONFLICT');
    expect(lines[1]).toMatch(/^ {6}believed: v1\.36\.2 — ferry believes GET \/version/);
    expect(lines.slice(2)).toEqual([
      `      candidate v1.36.2  ← GET /version gitVersion (${lab.server.url})`,
      '      candidate v1.35.4  ← ConfigMap kube-system/kubeadm-config data.ClusterConfiguration.kubernetesVersion',
    ]);
  });
});
