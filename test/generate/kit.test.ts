import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { readTalosSecretsBundle } from '../../src/generate/secrets/read.js';
import { createCA, issueCertificate } from '../../src/pki/forge.js';
import { writeKubeadmPki } from '../../src/pki/kubeadm-layout.js';
import { EXTERNAL_ETCD_DIR } from '../../src/snapshot/testing-external-etcd.js';
import {
  CILIUM_VERSION,
  DNS_SERVICE_IP,
  ENDPOINT,
  NODES,
  WORKERS,
  writeFixture,
} from '../../src/snapshot/testing-small-cluster.js';

const TOKEN = 'abcdef.0123456789abcdef';
const OLD_KEY = Buffer.alloc(32, 3).toString('base64');

let root: string;
let aescbc: string; // cluster with an aescbc key named key-2023 (rename needed)
let key2: string; // cluster with a secretbox key named key2 (importable)

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-kit-'));
  aescbc = join(root, 'aescbc');
  key2 = join(root, 'key2');
  await writeFixture(aescbc, { encryption: { provider: 'aescbc', keyName: 'key-2023', secret: OLD_KEY } });
  await writeFixture(key2, {
    encryption: { provider: 'secretbox', keyName: 'key2', secret: OLD_KEY },
    loopbackSans: true,
    singleNode: true,
    issuer: ENDPOINT,
    // Talos v1.14 runs etcd with 3.6-only flags: this cluster is ready for it.
    etcdVersion: '3.6.4',
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function generate(args: string[]) {
  const io = memoryIo({ cwd: root });
  const code = await runCli(['generate', ...args], io);
  return { code, out: io.out, err: io.err };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  }
  return out.sort();
}

describe('ferry generate: a cluster whose encryption key needs renaming', () => {
  let kit: string;
  let result: Awaited<ReturnType<typeof generate>>;
  beforeAll(async () => {
    kit = join(root, 'kit-aescbc');
    // The snapshot as a user types it, relative to the working directory (root): the encryption
    // config and ClusterConfiguration the snapshot names are read from there.
    result = await generate(['aescbc', '--pki', join(aescbc, 'pki'), '-o', kit, '--bootstrap-token', TOKEN]);
  });

  it('writes the kit and exits 0', () => {
    expect(result.err).not.toMatch(/^error/m);
    expect(result.code).toBe(0);
  });

  it('writes secrets.yaml 0600 with every CA and sa.key byte for byte', async () => {
    const file = join(kit, 'secrets.yaml');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    const b64 = (section: string, field: 'crt' | 'key') =>
      Buffer.from(
        new RegExp(`^ {4}${section}:\\n(?: {8}crt: (.*)\\n)? {8}key: (.*)$`, 'm').exec(text)?.[
          field === 'crt' ? 1 : 2
        ] ?? '',
        'base64',
      );
    const pki = join(aescbc, 'pki');
    for (const [section, base] of [
      ['k8s', 'ca'],
      ['etcd', 'etcd/ca'],
      ['k8saggregator', 'front-proxy-ca'],
    ] as const) {
      expect(b64(section, 'crt').equals(await readFile(join(pki, `${base}.crt`)))).toBe(true);
      expect(b64(section, 'key').equals(await readFile(join(pki, `${base}.key`)))).toBe(true);
    }
    expect(b64('k8sserviceaccount', 'key').equals(await readFile(join(pki, 'sa.key')))).toBe(true);
    const bundle = readTalosSecretsBundle(text);
    expect(bundle.secrets.bootstrapToken).toBe(TOKEN);
    // The write key is aescbc "key-2023": not Talos's name, so it is left out (rename plan instead).
    expect(bundle.secrets.aescbcEncryptionSecret).toBeUndefined();
    expect(bundle.secrets.secretboxEncryptionSecret).toBeUndefined();
    // Default target v1.13.9: URL-alphabet cluster.id (padded).
    expect(/^ {4}id: (.*)$/m.exec(text)?.[1]).toMatch(/^[A-Za-z0-9_-]{43}=$/);
  });

  it('writes the kubeadm-side steps with apply, verify and undo, in order', async () => {
    const steps = JSON.parse(await readFile(join(kit, 'kubeadm/steps.json'), 'utf8')) as {
      steps: { id: string; apply: string; verify: string; undo: string; nodes: string[]; after: string[] }[];
    };
    expect(steps.steps.map((s) => s.id)).toEqual([
      '10-apiserver-sans',
      '15-kubeadm-config',
      '20-sa-issuer',
      '30-encryption-phase1',
      '31-encryption-phase2',
      '32-reencrypt',
    ]);
    for (const s of steps.steps) {
      for (const cmd of [s.apply, s.verify, s.undo]) {
        const script = /kubeadm\/(\S+\.sh)/.exec(cmd)?.[1];
        expect(script && existsSync(join(kit, 'kubeadm', script))).toBe(true);
      }
    }
    expect(steps.steps[0]?.nodes).toEqual(['cp-1', 'cp-2']);
    expect(steps.steps.find((s) => s.id === '31-encryption-phase2')?.after).toEqual(['30-encryption-phase1']);
    const cc = await readFile(join(kit, 'kubeadm/cluster-configuration.yaml'), 'utf8');
    expect(cc).toMatch(
      /certSANs:\n {4}# [^\n]*apiserver\.san-loopback\)\n {4}- api\.demo\.example\n {4}- 127\.0\.0\.1\n {4}- localhost/,
    );
    const issuer = await readFile(join(kit, 'kubeadm/20-sa-issuer.sh'), 'utf8');
    expect(issuer).toContain(`ISSUER='${ENDPOINT}'`);
  });

  it('writes both encryption phases 0600, sharing one new key2, old key kept', async () => {
    const p1 = join(kit, 'kubeadm/encryption/phase1.yaml');
    const p2 = join(kit, 'kubeadm/encryption/phase2.yaml');
    expect((await stat(p1)).mode & 0o777).toBe(0o600);
    expect((await stat(p2)).mode & 0o777).toBe(0o600);
    const { parse } = await import('yaml');
    const providers = async (f: string) =>
      (
        parse(await readFile(f, 'utf8')) as {
          resources: { providers: Record<string, { keys?: { name: string; secret: string }[] }>[] }[];
        }
      ).resources[0]?.providers ?? [];
    const one = await providers(p1);
    const two = await providers(p2);
    expect(one.map((p) => Object.keys(p)[0])).toEqual(['aescbc', 'secretbox', 'identity']);
    expect(two.map((p) => Object.keys(p)[0])).toEqual(['secretbox', 'aescbc', 'identity']);
    expect(one[0]?.['aescbc']?.keys?.[0]).toEqual({ name: 'key-2023', secret: OLD_KEY });
    const newKey = one[1]?.['secretbox']?.keys?.[0];
    expect(newKey?.name).toBe('key2');
    expect(Buffer.from(newKey?.secret ?? '', 'base64').length).toBe(32);
    expect(two[0]?.['secretbox']?.keys?.[0]).toEqual(newKey);
  });

  it('records provenance for every file and lists the files in the README in order', async () => {
    const prov = JSON.parse(await readFile(join(kit, 'provenance.json'), 'utf8')) as {
      bootstrapTokenId: string | null;
      files: { path: string; secret: boolean; provenance: Record<string, { text: string }[]> }[];
    };
    // The token's id names its Secret (the plan deletes it in after-care); its secret part stays out.
    expect(prov.bootstrapTokenId).toBe(TOKEN.split('.')[0]);
    expect(JSON.stringify(prov)).not.toContain(TOKEN.split('.')[1]);
    const written = await listFiles(kit);
    expect(prov.files.map((f) => f.path).sort()).toEqual(
      written.filter((f) => f !== 'provenance.json' && f !== 'README.md'),
    );
    const secrets = prov.files.find((f) => f.path === 'secrets.yaml');
    expect(secrets?.secret).toBe(true);
    expect(secrets?.provenance['certs.k8s']?.[0]?.text).toBe(join(aescbc, 'pki', 'ca.crt'));
    const readme = await readFile(join(kit, 'README.md'), 'utf8');
    for (const f of written) expect(readme).toContain(`\`${f}\``);
    expect(readme.indexOf('`secrets.yaml`')).toBeLessThan(readme.indexOf('`tofu/secrets.tf`'));
  });

  it("derives the Talos patches and Cilium values from the cluster's nodes, CNI, kubelet and etcd", async () => {
    const { parseAllDocuments, parse } = await import('yaml');
    const files = await listFiles(kit);
    expect(files.filter((f) => /^(talos|cilium|capi)\//.test(f))).toEqual([
      'cilium/agents.sh',
      'cilium/values-migration.yaml',
      'cilium/values-talos.yaml',
      'talos/controlplane-patch.yaml',
      'talos/full/replacing-worker-1.yaml',
      'talos/full/talos-cp-1.yaml',
      'talos/full/talos-cp-2.yaml',
      'talos/machines.json',
      'talos/nodes/talos-cp-1.yaml',
      'talos/nodes/talos-cp-2.yaml',
      'talos/talosconfig',
      'talos/worker-patch.yaml',
    ]);
    const [cp] = parseAllDocuments(await readFile(join(kit, 'talos/controlplane-patch.yaml'), 'utf8')).map(
      (d) => d.toJS(),
    );
    expect(cp.cluster.network).toEqual({
      dnsDomain: 'cluster.local',
      podSubnets: ['10.244.0.0/16'],
      serviceSubnets: ['10.96.0.0/12'],
      cni: { name: 'none' },
    });
    // Cilium replaces kube-proxy (no DaemonSet): Talos must not start one.
    expect(cp.cluster.proxy).toEqual({ disabled: true });
    expect(cp.cluster.etcd.image).toMatch(/:v3\.5\.16$/);
    expect(cp.machine.kubelet.clusterDNS).toEqual([DNS_SERVICE_IP]);
    expect(cp.machine.kubelet.extraConfig).toEqual({ maxPods: 110 });
    // kubeadm's control-plane taint is on every control-plane Node.
    expect(cp.cluster.allowSchedulingOnControlPlanes).toBe(false);
    const taken = new Set([...NODES, ...WORKERS].map((n) => n.name));
    for (const n of NODES) {
      const docs = parseAllDocuments(await readFile(join(kit, `talos/nodes/talos-${n.name}.yaml`), 'utf8'));
      const hostname = docs.map((d) => d.toJS()).find((d) => d.kind === 'HostnameConfig')?.hostname;
      expect(hostname).toBe(`talos-${n.name}`);
      expect(taken.has(hostname)).toBe(false);
    }
    const migration = await readFile(join(kit, 'cilium/values-migration.yaml'), 'utf8');
    expect(migration).toContain(
      `helm upgrade cilium cilium/cilium -n kube-system --version ${CILIUM_VERSION} --reuse-values`,
    );
    expect(parse(migration)).toMatchObject({
      k8sServiceHost: 'api.demo.example',
      k8sServicePort: 6443,
      updateStrategy: { type: 'OnDelete' },
    });
    // After the migration: KubePrism, and the update strategy the agent DaemonSet had.
    expect(parse(await readFile(join(kit, 'cilium/values-talos.yaml'), 'utf8'))).toMatchObject({
      k8sServiceHost: 'localhost',
      k8sServicePort: 7445,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, maxSurge: 0 } },
    });
  });

  it('writes an OpenTofu import block for the bundle and health-probe RBAC for the health paths only', async () => {
    const tf = await readFile(join(kit, 'tofu/secrets.tf'), 'utf8');
    expect(tf).toMatch(/import \{\n {2}to = talos_machine_secrets\.this\n[\s\S]*id = "\.\.\/secrets\.yaml"/);
    expect(tf).toContain('prevent_destroy = true');
    const { parseAllDocuments } = await import('yaml');
    const docs = parseAllDocuments(await readFile(join(kit, 'rbac/health-probe.yaml'), 'utf8')).map((d) =>
      d.toJS(),
    );
    expect(docs.map((d) => d.kind)).toEqual([
      'ServiceAccount',
      'Secret',
      'ClusterRole',
      'ClusterRoleBinding',
    ]);
    expect(docs[2].rules).toEqual([
      { nonResourceURLs: ['/readyz', '/readyz/*', '/livez', '/livez/*', '/healthz'], verbs: ['get'] },
    ]);
    expect(docs[1].type).toBe('kubernetes.io/service-account-token');
  });

  it('leaks no private key or token secret outside the files marked secret, nor in its output', async () => {
    const text = await readFile(join(kit, 'secrets.yaml'), 'utf8');
    const bundle = readTalosSecretsBundle(text);
    const p1 = await readFile(join(kit, 'kubeadm/encryption/phase1.yaml'), 'utf8');
    const newKey = /name: key2\n\s+secret: (\S+)/.exec(p1)?.[1] ?? '';
    expect(newKey).not.toBe('');
    // The talosconfig's admin client key exists nowhere else either.
    const talosconfig = parseYaml(await readFile(join(kit, 'talos/talosconfig'), 'utf8')) as {
      contexts: Record<string, { key: string }>;
    };
    const clientKey = Buffer.from(talosconfig.contexts['demo']?.key ?? '', 'base64').toString('utf8');
    expect(clientKey).toMatch(/PRIVATE KEY/);
    const keyPems = [
      clientKey,
      bundle.certs.k8s.key,
      bundle.certs.etcd.key,
      bundle.certs.k8sAggregator.key,
      bundle.certs.k8sServiceAccount.key,
      bundle.certs.os.key,
    ];
    const forbidden = [
      'PRIVATE KEY',
      TOKEN.split('.')[1] ?? '',
      bundle.trustdInfo.token,
      bundle.trustdInfo.token.split('.')[1] ?? '',
      bundle.cluster.secret,
      OLD_KEY,
      newKey,
      // base64 of any private key PEM (how the bundle stores them), and its body lines
      ...keyPems.map((k) => Buffer.from(k).toString('base64').slice(0, 40)),
      ...keyPems.map((k) => k.split('\n')[1] ?? ''),
    ];
    const prov = JSON.parse(await readFile(join(kit, 'provenance.json'), 'utf8')) as {
      files: { path: string; secret: boolean }[];
    };
    const secretFiles = new Set(prov.files.filter((f) => f.secret).map((f) => f.path));
    expect([...secretFiles].sort()).toEqual([
      'kubeadm/encryption/phase1.yaml',
      'kubeadm/encryption/phase2.yaml',
      'secrets.yaml',
      'talos/full/replacing-worker-1.yaml',
      'talos/full/talos-cp-1.yaml',
      'talos/full/talos-cp-2.yaml',
      'talos/talosconfig',
    ]);
    const scanned: string[] = [];
    for (const f of await listFiles(kit)) {
      if (secretFiles.has(f)) {
        expect((await stat(join(kit, f))).mode & 0o077).toBe(0);
        continue;
      }
      const content = await readFile(join(kit, f), 'utf8');
      for (const s of forbidden)
        expect(content.includes(s), `${f} contains a secret (${s.slice(0, 8)}…)`).toBe(false);
      scanned.push(f);
    }
    expect(scanned.length).toBeGreaterThan(10);
    for (const s of forbidden) {
      expect(result.out.includes(s)).toBe(false);
      expect(result.err.includes(s)).toBe(false);
    }
  });
});

describe('ferry generate: a cluster already on Talos names', () => {
  it('imports the secretbox key2 and needs no kubeadm-side step at all', async () => {
    const kit = join(root, 'kit-key2');
    const r = await generate([
      key2,
      '--pki',
      join(key2, 'pki'),
      '-o',
      kit,
      '--bootstrap-token',
      TOKEN,
      '--talos-version',
      'v1.14',
    ]);
    // Only what Talos v1.14 does its own way is worth a warning; the kubeadm side has nothing to say.
    expect(r.err.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^warning: \(talos\) kube-apiserver --encryption-provider-config=\S+ is not carried: .*apiserver\.extra-arg-denied/,
      ),
      expect.stringMatching(/^warning: \(talos\) .*\(apiserver\.anonymous-auth-dependents\)$/),
    ]);
    expect(r.code).toBe(0);
    const text = await readFile(join(kit, 'secrets.yaml'), 'utf8');
    expect(readTalosSecretsBundle(text).secrets.secretboxEncryptionSecret).toBe(OLD_KEY);
    // v1.14: standard-alphabet cluster.id
    expect(/^ {4}id: (.*)$/m.exec(text)?.[1]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const files = await listFiles(kit);
    expect(files.filter((f) => f.startsWith('kubeadm/'))).toEqual([]);
    const readme = await readFile(join(kit, 'README.md'), 'utf8');
    expect(readme).toMatch(/already have 127\.0\.0\.1 and localhost|already has 127\.0\.0\.1 and localhost/);
    expect(readme).toContain(`already signs with ${ENDPOINT}`);
  });
});

describe('ferry generate: an untabled Talos patch', () => {
  it('writes the kit for it and says, on stderr and in the README, which tabled facts it assumed', async () => {
    const kit = join(root, 'kit-untabled');
    const r = await generate([
      key2,
      '--pki',
      join(key2, 'pki'),
      '-o',
      kit,
      '--bootstrap-token',
      TOKEN,
      '--talos-version',
      'v1.13.4',
    ]);
    expect(r.code).toBe(0);
    const note = 'Talos v1.13.4 is not tabled; assumed the facts of v1.13.0 (etcd 3.6.9';
    expect(r.err).toContain(`warning: (target) ${note}`);
    expect(r.out).toContain('for Talos v1.13.4');
    expect(await readFile(join(kit, 'README.md'), 'utf8')).toContain(note);
  });
});

describe('ferry generate: bad input writes nothing (exit 2)', () => {
  async function expectRefused(args: string[], kit: string, re: RegExp) {
    const r = await generate([...args, '-o', kit]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(re);
    expect(existsSync(kit)).toBe(false);
    const siblings = await readdir(root);
    expect(siblings.filter((s) => s.includes('ferry-tmp'))).toEqual([]);
    return r;
  }

  it('lists every missing input at once', async () => {
    const dir = join(root, 'no-enc-file');
    await cp(aescbc, dir, { recursive: true });
    await rm(join(dir, 'encryption-config.yaml'));
    const r = await expectRefused(
      [dir, '--pki', join(dir, 'pki')],
      join(root, 'k-missing'),
      /bootstrap token/,
    );
    expect(r.err).toMatch(/--encryption-config FILE/);
    expect(r.err).toMatch(/kubeadm token create --ttl 0/);
  });

  it('rejects a malformed bootstrap token without echoing it', async () => {
    const r = await expectRefused(
      [aescbc, '--pki', join(aescbc, 'pki'), '--bootstrap-token', 'abcdef.TOOSHORT'],
      join(root, 'k-token'),
      /not a bootstrap token/,
    );
    expect(r.err).not.toContain('TOOSHORT');
  });

  it('rejects an unknown Talos version', async () => {
    await expectRefused(
      [aescbc, '--pki', join(aescbc, 'pki'), '--bootstrap-token', TOKEN, '--talos-version', 'v1.7'],
      join(root, 'k-version'),
      /v1.7 line, which ferry does not know/,
    );
  });

  it('rejects a PKI without etcd/ca.key', async () => {
    const pki = join(root, 'pki-missing');
    await cp(join(aescbc, 'pki'), pki, { recursive: true });
    await rm(join(pki, 'etcd/ca.key'));
    await expectRefused(
      [aescbc, '--pki', pki, '--bootstrap-token', TOKEN],
      join(root, 'k-pki'),
      /lacks etcd\/ca\.key/,
    );
  });

  it('rejects an intermediate CA', async () => {
    const pki = join(root, 'pki-intermediate');
    await cp(join(aescbc, 'pki'), pki, { recursive: true });
    const corp = await createCA({ commonName: 'corp-root', key: { algorithm: 'ECDSA' } });
    const inter = await issueCertificate({
      issuer: corp,
      commonName: 'front-proxy-ca',
      usage: 'ca',
      key: { algorithm: 'ECDSA' },
    });
    await writeFile(join(pki, 'front-proxy-ca.crt'), inter.certPem);
    await writeFile(join(pki, 'front-proxy-ca.key'), inter.keyPem);
    await expectRefused(
      [aescbc, '--pki', pki, '--bootstrap-token', TOKEN],
      join(root, 'k-inter'),
      /intermediate CA/,
    );
  });

  it('rejects a key that does not match its certificate', async () => {
    const pki = join(root, 'pki-mismatch');
    await cp(join(aescbc, 'pki'), pki, { recursive: true });
    await cp(join(pki, 'etcd/ca.key'), join(pki, 'ca.key'));
    await expectRefused(
      [aescbc, '--pki', pki, '--bootstrap-token', TOKEN],
      join(root, 'k-mismatch'),
      /not the private key of/,
    );
  });

  it("rejects a PKI that is not the snapshot's cluster's", async () => {
    // key2's PKI is a complete, valid kubeadm PKI, just another cluster's.
    await expectRefused(
      [aescbc, '--pki', join(key2, 'pki'), '--bootstrap-token', TOKEN],
      join(root, 'k-otherpki'),
      /is not the ca\.crt of the snapshot's cluster/,
    );
  });

  it('rejects an encryption config that is not the one in the snapshot', async () => {
    const other = join(root, 'other-enc.yaml');
    const text = await readFile(join(aescbc, 'encryption-config.yaml'), 'utf8');
    await writeFile(other, text.replace(OLD_KEY, Buffer.alloc(32, 9).toString('base64')));
    await expectRefused(
      [aescbc, '--pki', join(aescbc, 'pki'), '--bootstrap-token', TOKEN, '--encryption-config', other],
      join(root, 'k-enc'),
      /differs from the EncryptionConfiguration in the snapshot/,
    );
  });
});

describe('ferry generate: an existing kit', () => {
  it('is kept without --force and replaced with it', async () => {
    const kit = join(root, 'kit-force');
    const args = [aescbc, '--pki', join(aescbc, 'pki'), '-o', kit, '--bootstrap-token', TOKEN];
    expect((await generate(args)).code).toBe(0);
    const before = await readFile(join(kit, 'secrets.yaml'), 'utf8');
    const again = await generate(args);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/already exists/);
    expect(await readFile(join(kit, 'secrets.yaml'), 'utf8')).toBe(before);
    const forced = await generate([...args, '--force']);
    expect(forced.code).toBe(0);
    const after = await readFile(join(kit, 'secrets.yaml'), 'utf8');
    expect(after).not.toBe(before); // new trustd token, cluster id, Talos API CA
    expect((await stat(join(kit, 'secrets.yaml'))).mode & 0o777).toBe(0o600);
  });
});

describe('ferry generate: a cluster whose etcd is external', () => {
  it('refuses with exit 2, naming the topology, and writes nothing', async () => {
    // The external-etcd fixture, with a kubeadm PKI beside it so that only the topology can refuse.
    const cluster = join(root, 'external');
    await cp(EXTERNAL_ETCD_DIR, cluster, { recursive: true });
    await writeKubeadmPki(join(cluster, 'pki'), {
      apiserver: {
        nodeName: 'cp-1',
        advertiseAddress: '10.0.0.11',
        dnsNames: ['kubernetes'],
        ipAddresses: [],
      },
      etcdMembers: [{ name: 'etcd-1', ip: '10.0.1.5' }],
      key: { algorithm: 'ECDSA' },
      serviceAccountKey: { algorithm: 'ECDSA' },
    });
    const kit = join(root, 'kit-external');
    const r = await generate([cluster, '--pki', join(cluster, 'pki'), '-o', kit, '--bootstrap-token', TOKEN]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/etcd topology is external \(the apiservers use https:\/\/10\.0\.1\.5:2379/);
    expect(r.err).toMatch(/would start an etcd cluster of its own; nothing was written/);
    expect(r.err).toMatch(/run ferry generate again/);
    expect(existsSync(kit)).toBe(false);
  });
});
