import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { createCA, type Issued, issueCertificate } from '../../pki/forge.js';
import { createKubeReader } from './reader.js';
import {
  closedPort,
  type FakeKubeApi,
  kubeconfigYaml,
  startBlackhole,
  startFakeKubeApi,
} from './testing-fake-api.js';

let dir: string;
let ca: Issued;
let admin: Issued;
let api: FakeKubeApi;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-kube-reader-'));
  ca = await createCA({ commonName: 'kubernetes' });
  const serving = await issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    dnsNames: ['kubernetes', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1', '10.96.0.1'],
    usage: 'server',
  });
  admin = await issueCertificate({
    issuer: ca,
    commonName: 'kubernetes-admin',
    organization: ['kubeadm:cluster-admins'],
    usage: 'client',
  });
  api = await startFakeKubeApi({
    certPem: serving.certPem,
    keyPem: serving.keyPem,
    clientCaPem: ca.certPem,
    vars: { CP1_PORT: '1', CLOSED_PORT: '2' },
  });
});

afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfigFor(server: string, caPem = ca.certPem): string {
  const file = join(dir, `kc-${Math.random().toString(16).slice(2)}.yaml`);
  writeFileSync(file, kubeconfigYaml({ server, caPem, certPem: admin.certPem, keyPem: admin.keyPem }), {
    mode: 0o600,
  });
  return file;
}

describe('client-node kube reader over HTTPS with client-certificate auth', () => {
  it('reads /version and fills apiVersion/kind into list items', async () => {
    const kube = createKubeReader({ kubeconfig: kubeconfigFor(api.url) });
    expect(kube.context).toBe('kubernetes-admin@kubernetes');
    expect((await kube.version()).gitVersion).toBe('v1.32.4');
    const nodes = await kube.list('nodes');
    expect(nodes.map((n) => `${n.apiVersion} ${n.kind} ${n.metadata.name}`)).toEqual([
      'v1 Node cp1',
      'v1 Node cp2',
      'v1 Node w1',
    ]);
    const pdbs = await kube.list('poddisruptionbudgets');
    expect(pdbs[0]).toMatchObject({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' });
    // raw JSON: timestamps stay strings (client-node's typed models would make Dates)
    expect(typeof nodes[0]!.metadata.creationTimestamp).toBe('string');
  });

  it('pages with limit/continue and starts over when the continue token expires', async () => {
    const kube = createKubeReader({ kubeconfig: kubeconfigFor(api.url) });
    const before = api.requests.length;
    const pods = await kube.list('pods', { pageSize: 5 });
    const names = pods.map((p) => p.metadata.name);
    expect(names).toHaveLength(8);
    expect(new Set(names).size).toBe(8);
    const podRequests = api.requests.slice(before).filter((r) => r.startsWith('/api/v1/pods'));
    // page 1, expired continue (410), page 1 again, page 2
    expect(podRequests).toHaveLength(4);
    expect(podRequests[0]).toBe('/api/v1/pods?limit=5');
    expect(podRequests[1]).toMatch(/^\/api\/v1\/pods\?limit=5&continue=eyJ2/);
    expect(podRequests[2]).toBe('/api/v1/pods?limit=5');
    expect(podRequests[3]).toBe(podRequests[1]);
  });

  it('get answers undefined on 404 and the object otherwise', async () => {
    const kube = createKubeReader({ kubeconfig: kubeconfigFor(api.url) });
    expect(await kube.get('configmaps', 'kube-system', 'cilium-config')).toBeUndefined();
    const cm = await kube.get('configmaps', 'kube-system', 'kubeadm-config');
    expect(cm?.kind).toBe('ConfigMap');
    expect(String(cm?.data?.ClusterConfiguration)).toContain('kubeadm.k8s.io/v1beta4');
  });

  it('a server whose certificate the kubeconfig CA does not trust is bad input', async () => {
    const other = await createCA({ commonName: 'someone-else' });
    const kube = createKubeReader({ kubeconfig: kubeconfigFor(api.url, other.certPem) });
    const err = await kube.version().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).kind).toBe('input');
    expect((err as FerryError).message).toContain(`127.0.0.1:${api.port}`);
  });

  it('a closed port fails at once, naming the address', async () => {
    const port = await closedPort();
    const kube = createKubeReader({ kubeconfig: kubeconfigFor(`https://127.0.0.1:${port}`) });
    const t0 = Date.now();
    const err = (await kube.version().catch((e: unknown) => e)) as FerryError;
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(FerryError);
    expect(err.kind).toBe('unreachable');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toContain('connection refused');
  });

  it('a server that accepts and never answers times out, naming the address', async () => {
    const hole = await startBlackhole();
    try {
      const kube = createKubeReader({
        kubeconfig: kubeconfigFor(`https://127.0.0.1:${hole.port}`),
        connectTimeoutMs: 1_000,
      });
      const t0 = Date.now();
      const err = (await kube.version().catch((e: unknown) => e)) as FerryError;
      const elapsed = Date.now() - t0;
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(2_500);
      expect(err.kind).toBe('unreachable');
      expect(err.message).toContain(`127.0.0.1:${hole.port}`);
      expect(err.message).toMatch(/no response within 1 s/);
    } finally {
      await hole.close();
    }
  });
});
