import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, kubeconfigYaml, startBlackhole } from '../adapters/kube/testing-fake-api.js';
import {
  type FakeCluster,
  RECORDED_TOKEN_SECRET,
  startFakeCluster,
} from '../adapters/kube/testing-fake-cluster.js';
import { writeKubeadmPki } from '../pki/kubeadm-layout.js';
import { loadSnapshot } from '../snapshot/load.js';
import { makeFilesCluster } from '../snapshot/testing-files-cluster.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

let cluster: FakeCluster;
beforeAll(async () => {
  cluster = await startFakeCluster();
});
afterAll(async () => cluster?.close());

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

function kubeconfigTo(server: string): string {
  const file = join(cluster.dir, `kc-${server.replace(/\W+/g, '_')}.yaml`);
  // credentials do not matter: nothing will answer
  writeFileSync(
    file,
    kubeconfigYaml({
      server,
      caPem: cluster.ca.certPem,
      certPem: cluster.ca.certPem,
      keyPem: cluster.ca.keyPem,
    }),
  );
  return file;
}

describe('ferry snapshot (live)', () => {
  it('writes a snapshot with a PKI inventory, without secrets, and prints a one-line summary', async () => {
    const pki = join(cluster.dir, 'pki');
    await writeKubeadmPki(pki, {
      apiserver: {
        nodeName: 'cp1',
        advertiseAddress: '10.0.0.11',
        dnsNames: ['kubernetes'],
        ipAddresses: ['10.96.0.1'],
      },
      etcdMembers: [{ name: 'cp1', ip: '10.0.0.11' }],
    });
    const out = join(cluster.dir, 'snap');
    const io = memoryIo({ cwd: cluster.dir });
    const code = await runCli(
      ['snapshot', '--kubeconfig', cluster.kubeconfig, '-o', 'snap', '--pki', 'pki'],
      io,
    );
    expect(io.err).not.toMatch(/^error/m);
    expect(code).toBe(0);
    const lines = io.out.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^snapshot of ${cluster.api.url} \\(context kubernetes-admin@kubernetes\\) written to ${out}: 3 nodes, 8 pods, 5 static pods, 2 served certificates, \\d+ PKI certificates; 1 warning \\(above\\)$`,
      ),
    );
    // not a terminal: one line per list (the recorded pods list expires once and starts over),
    // the GitOps CRDs this server does not serve, then the warning about cp2's unreachable apiserver
    const err = io.err.trim().split('\n');
    expect(err).toHaveLength(23);
    expect(err.filter((l) => !/^listed [a-z]+( in kube-system)?: \d+ in \d+\.\d s$/.test(l))).toEqual([
      'pods: the continue token expired (HTTP 410 Gone) after 5 objects; listing again from the start (restart 1 of 3)',
      'applications.argoproj.io: none (not served here: its controller is not installed)',
      'kustomizations.kustomize.toolkit.fluxcd.io: none (not served here: its controller is not installed)',
      'helmreleases.helm.toolkit.fluxcd.io: none (not served here: its controller is not installed)',
      expect.stringMatching(/^warning: served certificate of 127\.0\.0\.1:\d+ \(control-plane cp2\)/),
    ]);
    expect(err).toContainEqual(expect.stringMatching(/^listed pods: 8 in \d+\.\d s$/));

    const files = filesUnder(out);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(text, f).not.toContain(RECORDED_TOKEN_SECRET);
      expect(text, f).not.toContain(Buffer.from(RECORDED_TOKEN_SECRET).toString('base64'));
      expect(text, f).not.toContain('managedFields');
      expect(text, f).not.toContain('PRIVATE KEY');
      expect(statSync(f).mode & 0o077, f).toBe(0);
    }
    const back = await loadSnapshot(out);
    expect(back.resources.bootstrapTokens.map((t) => t.id)).toEqual(['abcdef']);
    expect(
      back.servedCertificates
        .filter((c) => c.certificate)
        .map((c) => c.role)
        .sort(),
    ).toEqual(['control-plane', 'endpoint']);
    expect(back.pki?.certificates.some((c) => c.path === 'ca.crt')).toBe(true);
    expect(back.manifest.parts).toContain('pki');
  });

  it('shows progress on stderr only on a terminal', async () => {
    const io = memoryIo({ cwd: cluster.dir, isTTY: true });
    expect(await runCli(['snapshot', '--kubeconfig', cluster.kubeconfig, '-o', 'snap-tty'], io)).toBe(0);
    expect(io.err).toContain('\r\x1b[K');
    expect(io.out).not.toContain('\r');
  });

  it('a context that does not exist: exit 2, the contexts listed, nothing written', async () => {
    const io = memoryIo({ cwd: cluster.dir });
    const code = await runCli(
      ['snapshot', '--kubeconfig', cluster.kubeconfig, '--context', 'prod', '-o', 'never'],
      io,
    );
    expect(code).toBe(2);
    expect(io.err).toContain('context "prod" does not exist');
    expect(io.err).toContain('kubernetes-admin@kubernetes, staging-admin');
    expect(io.err).toMatch(/fix: pass --context with one of/);
    expect(existsSync(join(cluster.dir, 'never'))).toBe(false);
  });

  it('an API server on a closed port: exit 2 within seconds, naming the address', async () => {
    const port = await closedPort();
    const io = memoryIo({ cwd: cluster.dir });
    const t0 = Date.now();
    const code = await runCli(
      ['snapshot', '--kubeconfig', kubeconfigTo(`https://127.0.0.1:${port}`), '-o', 'never'],
      io,
    );
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(code).toBe(2);
    expect(io.err).toContain(
      `cannot reach the Kubernetes API server at 127.0.0.1:${port}: connection refused`,
    );
    expect(existsSync(join(cluster.dir, 'never'))).toBe(false);
  });

  it('an API server that accepts and never answers: exit 2 within ~5 s, naming the address', async () => {
    const hole = await startBlackhole();
    try {
      const io = memoryIo({ cwd: cluster.dir });
      const t0 = Date.now();
      const code = await runCli(
        ['snapshot', '--kubeconfig', kubeconfigTo(`https://127.0.0.1:${hole.port}`), '-o', 'never'],
        io,
      );
      const elapsed = Date.now() - t0;
      expect(elapsed).toBeLessThan(10_000);
      expect(code).toBe(2);
      expect(io.err).toContain(`the Kubernetes API server at 127.0.0.1:${hole.port} did not answer`);
      expect(existsSync(join(cluster.dir, 'never'))).toBe(false);
    } finally {
      await hole.close();
    }
  });

  it('refuses an existing output directory before contacting the cluster', async () => {
    const before = cluster.api.requests.length;
    const io = memoryIo({ cwd: cluster.dir });
    // cluster.dir exists: it holds the kubeconfig
    expect(await runCli(['snapshot', '--kubeconfig', cluster.kubeconfig, '-o', cluster.dir], io)).toBe(2);
    expect(io.err).toContain('already exists');
    expect(cluster.api.requests.length).toBe(before);
  });

  it.each([
    [['--kubeconfig', 'x'], /missing -o DIR/],
    [
      ['--kubeconfig', 'x', '-o', 'o', '--etcd-endpoints', 'https://10.0.0.11:2379'],
      /missing --etcd-cacert, --etcd-cert, --etcd-key/,
    ],
    [['--from', 'x', '--kubeconfig', 'y', '-o', 'o'], /--from cannot be combined with --kubeconfig/],
    [['-o', 'o'], /missing --kubeconfig/],
    [['--from', 'x', '-o', 'o', '--allow-partial'], /--allow-partial applies to a live cluster only/],
    [['--print-clusterrole', '-o', 'o'], /--print-clusterrole cannot be combined with --output/],
  ])('usage error for %j', async (args, message) => {
    const io = memoryIo({ cwd: cluster.dir });
    expect(await runCli(['snapshot', ...args], io)).toBe(2);
    expect(io.err).toMatch(message);
  });
});

describe('ferry snapshot --print-clusterrole', () => {
  it('prints the RBAC for what the collection reads, unbound, and contacts nothing', async () => {
    const io = memoryIo({ cwd: cluster.dir });
    const before = cluster.api.requests.length;
    expect(await runCli(['snapshot', '--print-clusterrole'], io)).toBe(0);
    expect(io.out).toMatch(/^# What ferry's live collection/);
    expect(io.out).toContain('kind: ClusterRole\n');
    expect(io.out).toContain('kubectl create clusterrolebinding ferry-snapshot');
    expect(io.out).not.toContain('kind: ClusterRoleBinding');
    expect(cluster.api.requests.length).toBe(before);
  });
});

describe('ferry snapshot --from', () => {
  it('assembles a files directory and saves it', async () => {
    const files = await makeFilesCluster({ pki: false });
    try {
      const io = memoryIo({ cwd: files.tmp });
      const code = await runCli(['snapshot', '--from', files.dir, '-o', 'saved'], io);
      expect(io.err).not.toMatch(/^error/m);
      expect(code).toBe(0);
      expect(io.out).toMatch(
        new RegExp(`^snapshot of files ${files.dir} written to ${join(files.tmp, 'saved')}: `),
      );
      const back = await loadSnapshot(join(files.tmp, 'saved'));
      expect(back.manifest.source).toEqual({ kind: 'files', path: files.dir });
    } finally {
      await files.cleanup();
    }
  });
});
