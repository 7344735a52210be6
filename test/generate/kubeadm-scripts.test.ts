/**
 * Runs the generated kubeadm-side scripts against a copy of a control-plane node's files
 * (FERRY_ROOT), with stand-ins for the commands that would touch a live node: curl (the apiserver
 * answers), sleep (no waiting), kubeadm (issues the certificate the test prepared) and pgrep (starts
 * a short-lived process whose command line is the manifest's, as kubelet would after a restart).
 */
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateKit } from '../../src/generate/kit.js';
import { issueCertificate, loadIssued } from '../../src/pki/forge.js';
import { ENCRYPTION_PATH, ENDPOINT, writeFixture } from '../../src/snapshot/testing-small-cluster.js';

const run = promisify(execFile);
const TOKEN = 'abcdef.0123456789abcdef';
const OLD_KEY = Buffer.alloc(32, 5).toString('base64');

let root: string;
let cluster: string;
let kit: string;
let stubs: string;
let node: string; // FERRY_ROOT: a copy of cp-1's files

const STUBS: Record<string, string> = {
  curl: 'exit 0',
  sleep: 'exit 0',
  kubeadm: [
    '[ "$1 $2 $3 $4" = "init phase certs apiserver" ] || exit 3',
    '[ "$5" = "--config" ] && [ -f "$6" ] || exit 4',
    'cp "$FERRY_TEST_CRT" "$FERRY_ROOT/etc/kubernetes/pki/apiserver.crt"',
    'cp "$FERRY_TEST_KEY" "$FERRY_ROOT/etc/kubernetes/pki/apiserver.key"',
  ].join('\n'),
  pgrep: [
    'M="$FERRY_ROOT/etc/kubernetes/manifests/kube-apiserver.yaml"',
    '[ -f "$M" ] || exit 1',
    // shellcheck disable=SC2046
    'set -- $(sed -n \'s/^[[:space:]]*- \\(--.*\\)$/\\1/p\' "$M")',
    '/bin/sh -c \'/bin/sleep 3; :\' kube-apiserver "$@" </dev/null >/dev/null 2>&1 &',
    'echo $!',
  ].join('\n'),
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-scripts-'));
  cluster = join(root, 'cluster');
  await writeFixture(cluster, { encryption: { provider: 'aescbc', keyName: 'key-2023', secret: OLD_KEY } });
  kit = join(root, 'kit');
  await generateKit({
    snapshotPath: cluster,
    pkiDir: join(cluster, 'pki'),
    outDir: kit,
    target: {},
    bootstrapToken: TOKEN,
  });
  stubs = join(root, 'stubs');
  await mkdir(stubs);
  for (const [name, body] of Object.entries(STUBS)) {
    await writeFile(join(stubs, name), `#!/bin/sh\n${body}\n`);
    await chmod(join(stubs, name), 0o755);
  }
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

beforeEach(async () => {
  node = join(root, `node-${Math.random().toString(36).slice(2)}`);
  const k8s = join(node, 'etc/kubernetes');
  await mkdir(join(k8s, 'manifests'), { recursive: true });
  await cp(join(cluster, 'manifests/cp-1/kube-apiserver.yaml'), join(k8s, 'manifests/kube-apiserver.yaml'));
  await cp(join(cluster, 'pki'), join(k8s, 'pki'), { recursive: true });
  await mkdir(join(node, ENCRYPTION_PATH, '..'), { recursive: true });
  await cp(join(cluster, 'encryption-config.yaml'), join(node, ENCRYPTION_PATH));
});

async function sh(script: string, args: string[], env: Record<string, string> = {}) {
  try {
    const r = await run('sh', [join(kit, 'kubeadm', script), ...args], {
      env: { ...process.env, PATH: `${stubs}:${process.env['PATH']}`, FERRY_ROOT: node, ...env },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout, err: err.stderr };
  }
}

const manifest = () => readFile(join(node, 'etc/kubernetes/manifests/kube-apiserver.yaml'), 'utf8');
const issuers = async () =>
  [...(await manifest()).matchAll(/- --service-account-issuer=(\S+)/g)].map((m) => m[1]);

describe('generated scripts', () => {
  it('are valid POSIX sh', async () => {
    const scripts = (await readdir(join(kit, 'kubeadm'))).filter((f) => f.endsWith('.sh')).sort();
    // The loop below proves nothing about scripts that were not written: name the ones this cluster needs.
    expect(scripts).toEqual([
      '10-apiserver-sans.sh',
      '15-kubeadm-config.sh',
      '20-sa-issuer.sh',
      '30-encryption-phase1.sh',
      '31-encryption-phase2.sh',
      '32-reencrypt.sh',
    ]);
    for (const f of scripts) {
      await expect(run('sh', ['-n', join(kit, 'kubeadm', f)])).resolves.toBeDefined();
    }
  });

  it('refuse an unknown node name', async () => {
    const r = await sh('20-sa-issuer.sh', ['apply', 'cp-9']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/one of cp-1, cp-2/);
  });
});

describe('20-sa-issuer.sh', () => {
  it('puts the Talos issuer first, is idempotent, verifies, and undoes to the original manifest', async () => {
    const original = await manifest();
    expect(await issuers()).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect((await sh('20-sa-issuer.sh', ['verify', 'cp-1'])).code).not.toBe(0);

    const a = await sh('20-sa-issuer.sh', ['apply', 'cp-1']);
    expect(a.err).toBe('');
    expect(a.code).toBe(0);
    expect(await issuers()).toEqual([ENDPOINT, 'https://kubernetes.default.svc.cluster.local']);
    expect(
      await readFile(join(node, 'etc/kubernetes/ferry-backup/kube-apiserver.yaml.before-issuer'), 'utf8'),
    ).toBe(original);

    const afterOnce = await manifest();
    const again = await sh('20-sa-issuer.sh', ['apply', 'cp-1']);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/already first/);
    expect(await manifest()).toBe(afterOnce);
    expect((await sh('20-sa-issuer.sh', ['verify', 'cp-1'])).code).toBe(0);

    expect((await sh('20-sa-issuer.sh', ['undo', 'cp-1'])).code).toBe(0);
    expect(await manifest()).toBe(original);
    expect((await sh('20-sa-issuer.sh', ['undo', 'cp-1'])).out).toMatch(/nothing to undo/);
  });

  it('adds the Talos issuer to an explicit --api-audiences and takes it out again', async () => {
    const file = join(node, 'etc/kubernetes/manifests/kube-apiserver.yaml');
    const withAudiences = (await manifest()).replace(
      '        - --secure-port=6443\n',
      '        - --secure-port=6443\n        - --api-audiences=https://kubernetes.default.svc.cluster.local,vault\n',
    );
    await writeFile(file, withAudiences);
    expect((await sh('20-sa-issuer.sh', ['apply', 'cp-2'])).code).toBe(0);
    expect(await manifest()).toContain(
      `- --api-audiences=${ENDPOINT},https://kubernetes.default.svc.cluster.local,vault\n`,
    );
    expect((await sh('20-sa-issuer.sh', ['undo', 'cp-2'])).code).toBe(0);
    expect(await manifest()).toBe(withAudiences);
  });
});

describe('10-apiserver-sans.sh', () => {
  it('re-issues with loopback SANs keeping the old ones, skips when done, and undoes', async () => {
    const pki = join(node, 'etc/kubernetes/pki');
    const oldCrt = await readFile(join(pki, 'apiserver.crt'), 'utf8');
    const ca = await loadIssued(
      await readFile(join(pki, 'ca.crt'), 'utf8'),
      await readFile(join(pki, 'ca.key'), 'utf8'),
    );
    const issue = async (withOld: boolean) => {
      const c = await issueCertificate({
        issuer: ca,
        commonName: 'kube-apiserver',
        usage: 'server',
        key: { algorithm: 'ECDSA' },
        dnsNames: [
          ...(withOld ? ['cp-1', 'kubernetes', 'kubernetes.default', 'api.demo.example'] : ['cp-1']),
          'localhost',
        ],
        ipAddresses: [...(withOld ? ['10.0.0.11', '10.96.0.1'] : ['10.0.0.11']), '127.0.0.1'],
      });
      const dir = await mkdtemp(join(root, 'issued-'));
      await writeFile(join(dir, 'crt'), c.certPem);
      await writeFile(join(dir, 'key'), c.keyPem);
      return { FERRY_TEST_CRT: join(dir, 'crt'), FERRY_TEST_KEY: join(dir, 'key') };
    };

    const before = await sh('10-apiserver-sans.sh', ['verify', 'cp-1']);
    expect(before.code).not.toBe(0);
    expect(before.err).toMatch(/lacks SAN 127\.0\.0\.1/);

    // A certificate that dropped SANs the old one had is refused before the apiserver serves it.
    const lossy = await sh('10-apiserver-sans.sh', ['apply', 'cp-1'], await issue(false));
    expect(lossy.code).not.toBe(0);
    expect(lossy.err).toMatch(
      /new certificate lacks SAN (kubernetes|api\.demo\.example|10\.96\.0\.1); the old one is back/,
    );
    expect(await readFile(join(pki, 'apiserver.crt'), 'utf8')).toBe(oldCrt);

    const good = await sh('10-apiserver-sans.sh', ['apply', 'cp-1'], await issue(true));
    expect(good.err).toBe('');
    expect(good.code).toBe(0);
    expect(good.out).toMatch(/valid for 127\.0\.0\.1 and localhost/);
    const newCrt = await readFile(join(pki, 'apiserver.crt'), 'utf8');
    expect(newCrt).not.toBe(oldCrt);
    expect(await manifest()).toContain('kube-apiserver'); // the manifest came back after the restart

    const again = await sh('10-apiserver-sans.sh', ['apply', 'cp-1']);
    expect(again.out).toMatch(/already has 127\.0\.0\.1 and localhost/);
    expect(await readFile(join(pki, 'apiserver.crt'), 'utf8')).toBe(newCrt);

    expect((await sh('10-apiserver-sans.sh', ['undo', 'cp-1'])).code).toBe(0);
    expect(await readFile(join(pki, 'apiserver.crt'), 'utf8')).toBe(oldCrt);
  });
});

describe('30/31-encryption-phase scripts', () => {
  it('install phase 1 then phase 2, are idempotent, and undo step by step to the original file', async () => {
    const target = join(node, ENCRYPTION_PATH);
    const original = await readFile(target, 'utf8');
    const phase1 = await readFile(join(kit, 'kubeadm/encryption/phase1.yaml'), 'utf8');
    const phase2 = await readFile(join(kit, 'kubeadm/encryption/phase2.yaml'), 'utf8');

    const a1 = await sh('30-encryption-phase1.sh', ['apply', 'cp-1']);
    expect(a1.err).toBe('');
    expect(a1.code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(phase1);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect((await sh('30-encryption-phase1.sh', ['apply', 'cp-1'])).out).toMatch(/already in place/);

    expect((await sh('31-encryption-phase2.sh', ['verify', 'cp-1'])).code).not.toBe(0);
    expect((await sh('31-encryption-phase2.sh', ['apply', 'cp-1'])).code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(phase2);

    expect((await sh('31-encryption-phase2.sh', ['undo', 'cp-1'])).code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(phase1);
    expect((await sh('30-encryption-phase1.sh', ['undo', 'cp-1'])).code).toBe(0);
    expect(await readFile(target, 'utf8')).toBe(original);
  });
});
