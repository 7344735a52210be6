/**
 * `ferry fleet audit` with a management cluster: its Cluster API Clusters (on a lab API server
 * serving the repository's CAPI CRDs, seeded as Cluster API leaves them) join the fleet and are
 * read live through their `<name>-kubeconfig` Secrets; one without a usable Secret, and a
 * management cluster that cannot be listed, are reported unreachable and never stop the others.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../adapters/kube/testing-fake-api.js';
import { type FakeCluster, startFakeCluster } from '../adapters/kube/testing-fake-cluster.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import type { MgmtKube } from '../mgmt/kube.js';
import { installCapiCrds, labKube, seedCluster } from '../mgmt/testing-fleet.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const HOST = '127.0.147.1';
const EXAMPLE = resolve('examples/lab-cluster');

let dir: string;
let mgmt: LabApiFixture;
let kube: MgmtKube;
let live: FakeCluster;

async function setKubeconfigSecret(namespace: string, cluster: string, value: string | undefined) {
  const name = `${cluster}-kubeconfig`;
  await kube.delete({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  if (value === undefined) return;
  await kube.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
    ...({
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(value).toString('base64') },
    } as object),
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-fleet-discover-'));
  mgmt = await startLabApi({ host: HOST });
  kube = labKube(mgmt.kc, mgmt.server.url);
  await installCapiCrds(kube);
  await writeAdminKubeconfig(mgmt, join(dir, 'mgmt.conf'));
  live = await startFakeCluster();
  // prod-eu-1: its Secret holds the live cluster's kubeconfig; pending: no Secret yet; lab-a, in
  // another namespace, shares its name with a cluster the file lists.
  await seedCluster(kube, 'prod-eu-1', 'fleet');
  await setKubeconfigSecret('fleet', 'prod-eu-1', await readFile(live.kubeconfig, 'utf8'));
  await seedCluster(kube, 'pending', 'staging');
  await setKubeconfigSecret('staging', 'pending', undefined);
  await seedCluster(kube, 'lab-a', 'other');
  const port = await closedPort();
  await writeFile(
    join(dir, 'gone.conf'),
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:${port}", insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`,
  );
  const fleet = (management: string[]) =>
    [
      'apiVersion: ferry.dev/v1alpha1',
      'kind: Fleet',
      'clusters:',
      `  - {name: lab-a, snapshot: ${EXAMPLE}, labels: {wave: "1"}}`,
      'management:',
      ...management,
      '',
    ].join('\n');
  await writeFile(
    join(dir, 'fleet.yaml'),
    fleet([
      '  - {name: mgmt-eu, kubeconfig: mgmt.conf, labels: {provider: capi, wave: "3"}}',
      '  - {name: gone, kubeconfig: gone.conf}',
    ]),
  );
  await writeFile(
    join(dir, 'namespaced.yaml'),
    fleet(['  - {name: mgmt-eu, kubeconfig: mgmt.conf, namespace: fleet}']),
  );
  await writeFile(
    join(dir, 'selected.yaml'),
    fleet([
      '  - {name: mgmt-eu, kubeconfig: mgmt.conf, selector: "cluster.x-k8s.io/cluster-name in (pending,lab-a)"}',
    ]),
  );
}, 120_000);

afterAll(async () => {
  await live?.close();
  await mgmt?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const run = async (...argv: string[]) => {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(['fleet', ...argv], io);
  return { code, out: io.out, err: io.err };
};

type Row = { name: string; verdict: string; labels: Record<string, string>; source: string; reason?: string };

describe('ferry fleet audit: clusters from a management cluster', () => {
  it('audits each Cluster live through its kubeconfig Secret, names clashes apart, and reports what it cannot read', async () => {
    const { code, out, err } = await run(
      'audit',
      'fleet.yaml',
      '-o',
      'json',
      '--out',
      'out',
      '--sort-by',
      'none',
    );
    expect(code).toBe(1);
    const rows = (JSON.parse(out) as { clusters: Row[] }).clusters;
    const by = new Map(rows.map((r) => [r.name, r]));
    expect([...by.keys()].sort()).toEqual(['gone', 'lab-a', 'other-lab-a', 'pending', 'prod-eu-1']);
    const prod = by.get('prod-eu-1')!;
    expect(prod.verdict).toMatch(/^(blocked|ready)$/);
    expect(prod.source).toBe('Cluster fleet/prod-eu-1 of management cluster mgmt-eu');
    // The entry's labels, the Cluster's own over them.
    expect(prod.labels).toEqual({
      provider: 'capi',
      wave: '3',
      'cluster.x-k8s.io/cluster-name': 'prod-eu-1',
    });
    expect(by.get('lab-a')!.verdict).toBe('blocked');
    expect(by.get('pending')!.verdict).toBe('unreachable');
    expect(by.get('pending')!.reason).toMatch(/^Secret staging\/pending-kubeconfig does not exist/);
    // The seeded Secret holds a kubeconfig with no cluster or context: named, not used.
    expect(by.get('other-lab-a')!.verdict).toBe('unreachable');
    expect(by.get('other-lab-a')!.reason).toMatch(/Secret other\/lab-a-kubeconfig/);
    expect(by.get('gone')!.verdict).toBe('unreachable');
    expect(by.get('gone')!.reason).toMatch(/^the Clusters of management cluster gone could not be listed/);
    expect(err).toContain('mgmt-eu: 3 Cluster(s) found');
    expect(err).toMatch(/gone: cannot list its Clusters: /);
    // The live member's snapshot is kept; its client key is in no file under OUT.
    const key = /client-key-data: (\S+)/.exec(await readFile(live.kubeconfig, 'utf8'))![1]!;
    const files = await readdir(join(dir, 'out'), { recursive: true, withFileTypes: true });
    expect(files.some((f) => f.isFile() && f.parentPath.includes('prod-eu-1/snapshot'))).toBe(true);
    for (const f of files.filter((x) => x.isFile()))
      expect(await readFile(join(f.parentPath, f.name), 'utf8')).not.toContain(key);
  });

  it('lists only the namespace, or only the Clusters the selector matches', async () => {
    const names = async (file: string) => {
      const { out } = await run('audit', file, '-o', 'json', '--out', `out-${file}`);
      return (JSON.parse(out) as { clusters: Row[] }).clusters.map((r) => r.name).sort();
    };
    expect(await names('namespaced.yaml')).toEqual(['lab-a', 'prod-eu-1']);
    expect(await names('selected.yaml')).toEqual(['lab-a', 'other-lab-a', 'pending']);
  });
});
