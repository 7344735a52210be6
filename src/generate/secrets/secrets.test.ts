import { X509Certificate } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { createCA, issueCertificate } from '../../pki/forge.js';
import { writeKubeadmPki } from '../../pki/kubeadm-layout.js';
import { TOKEN_PATTERN } from './bundle.js';
import { clusterIdEncoding, encodeClusterId } from './encoding.js';
import { decideEncryption, parseEncryptionConfigWithKeys } from './encryption.js';
import { buildBundleFromKubeadmPki } from './from-kubeadm.js';
import { readTalosSecretsBundle } from './read.js';
import { renderTalosSecretsBundle } from './render.js';
import { checkBootstrapToken } from './tokens.js';

// Upstream goldens (scripts/refresh-schemas.ts copies them; schemas/README.md names the source).
const SPECS = join(import.meta.dirname, 'fixtures');
const TOKEN = 'abcdef.0123456789abcdef';

let root: string;
let pki: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-secrets-'));
  pki = join(root, 'pki');
  await writeKubeadmPki(pki, {
    apiserver: { nodeName: 'cp-1', advertiseAddress: '10.0.0.11', dnsNames: [], ipAddresses: [] },
    etcdMembers: [{ name: 'cp-1', ip: '10.0.0.11' }],
    key: { algorithm: 'ECDSA' },
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function copyPki(name: string): Promise<string> {
  const dir = join(root, name);
  await cp(pki, dir, { recursive: true });
  return dir;
}

async function expectInputError(p: Promise<unknown>, re: RegExp): Promise<FerryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FerryError);
  const fe = err as FerryError;
  expect(fe.exitCode).toBe(2);
  expect(fe.message).toMatch(re);
  return fe;
}

describe('reader', () => {
  it('parses the talosctl example bundle and re-renders it byte for byte for v1.13 (URL cluster.id)', async () => {
    const text = await readFile(join(SPECS, 'secrets-bundle-example.yaml'), 'utf8');
    const bundle = readTalosSecretsBundle(text, { file: 'secrets-bundle-example.yaml' });
    expect(bundle.cluster.id.length).toBe(32);
    expect(bundle.secrets.secretboxEncryptionSecret).toBe('6zWBpno849HlD5jeuTmGToFYP+z8lgkJa0fhHobv7mE=');
    expect(bundle.certs.os.key).toContain('-----BEGIN ED25519 PRIVATE KEY-----');
    expect(renderTalosSecretsBundle(bundle, 'v1.13.9')).toBe(text);
    // v1.14 writes the same 32 bytes with the standard alphabet; nothing else changes.
    const v114 = renderTalosSecretsBundle(bundle, 'v1.14.0-rc.1');
    expect(v114).not.toBe(text);
    expect(v114.replace(/^ {4}id: .*$/m, '')).toBe(text.replace(/^ {4}id: .*$/m, ''));
    expect(v114).toContain('id: cgvhCbucls+WqkESDTRqykFgb4hROI4cBpgB0YJLLtM=');
  });

  it('parses the stability bundle (leading comment) and round-trips through render', async () => {
    const text = await readFile(join(SPECS, 'stability-secrets-bundle.yaml'), 'utf8');
    const bundle = readTalosSecretsBundle(text);
    expect(bundle.trustdInfo.token).toBe('d8cwfa.eyvpi0xwxyarbfid');
    const again = readTalosSecretsBundle(renderTalosSecretsBundle(bundle, 'v1.14'));
    expect(again).toEqual(bundle);
  });

  it('accepts 2-space indentation (CABPT writes with yaml.v2)', async () => {
    const text = await readFile(join(SPECS, 'secrets-bundle-example.yaml'), 'utf8');
    const twoSpace = text.replace(/^( +)/gm, (m) => ' '.repeat(m.length / 2));
    expect(readTalosSecretsBundle(twoSpace)).toEqual(readTalosSecretsBundle(text));
  });

  it('names the field and line of a bad value', async () => {
    const text = await readFile(join(SPECS, 'secrets-bundle-example.yaml'), 'utf8');
    const broken = text.replace('token: oamejv.9tk1nhuwnlc2nghf', 'token: NOT-A-TOKEN');
    let err: unknown;
    try {
      readTalosSecretsBundle(broken, { file: 'b.yaml' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).location).toMatchObject({
      file: 'b.yaml',
      field: 'trustdinfo.token',
      line: 8,
    });
    expect((err as FerryError).message).not.toContain('NOT-A-TOKEN');
  });

  it('rejects a bundle whose key does not match its certificate', async () => {
    const text = await readFile(join(SPECS, 'secrets-bundle-example.yaml'), 'utf8');
    const k8sKey = /^ {8}key: (.*)$/gm;
    const keys = [...text.matchAll(k8sKey)].map((m) => m[1] ?? '');
    // swap the etcd and k8s keys
    const swapped = text
      .replace(keys[0] ?? '', 'SWAP')
      .replace(keys[1] ?? '', keys[0] ?? '')
      .replace('SWAP', keys[1] ?? '');
    expect(() => readTalosSecretsBundle(swapped)).toThrow(/certs\.etcd\.key does not match/);
  });
});

describe('cluster.id encoding', () => {
  // 0xfb 0xff … encodes to "+/" in the standard and "-_" in the URL alphabet.
  const id = new Uint8Array(32).fill(0xfb);
  id[1] = 0xff;
  it('uses URLEncoding (padded) up to v1.13 and StdEncoding from v1.14', () => {
    for (const v of ['v1.10', '1.12.11', 'v1.13.9']) {
      expect(clusterIdEncoding(v)).toBe('url');
      const s = encodeClusterId(id, v);
      expect(s).toMatch(/^[A-Za-z0-9_-]+=$/);
      expect(s).toContain('-');
      expect(s).toContain('_');
    }
    for (const v of ['v1.14', 'v1.14.0-rc.1', 'v1.15.0']) {
      expect(clusterIdEncoding(v)).toBe('std');
      const s = encodeClusterId(id, v);
      expect(s).toBe(Buffer.from(id).toString('base64'));
      expect(s).toContain('+');
    }
  });
  it('rejects a malformed version', () => {
    expect(() => clusterIdEncoding('latest')).toThrow(/not a Talos version/);
  });
});

describe('bootstrap token', () => {
  it('accepts the kubeadm form and rejects anything else without echoing it', () => {
    expect(checkBootstrapToken(TOKEN)).toBe(TOKEN);
    for (const bad of [
      'ABCDEF.0123456789abcdef',
      'abcdef.0123456789abcde',
      'abcdef0123456789abcdef',
      'abcdef:0123456789abcdef',
    ]) {
      let err: unknown;
      try {
        checkBootstrapToken(bad);
      } catch (e) {
        err = e;
      }
      expect((err as FerryError).exitCode).toBe(2);
      expect((err as FerryError).message).not.toContain(bad);
    }
  });
});

describe('buildBundleFromKubeadmPki', () => {
  it('carries every CA and sa.key byte for byte and adds a Talos-shaped Ed25519 API CA', async () => {
    const built = await buildBundleFromKubeadmPki(pki, { bootstrapToken: TOKEN });
    const text = renderTalosSecretsBundle(built.bundle, 'v1.13');
    const back = readTalosSecretsBundle(text);
    const pairs = [
      ['k8s', 'ca'],
      ['etcd', 'etcd/ca'],
      ['k8sAggregator', 'front-proxy-ca'],
    ] as const;
    const raw = (field: string, sub: 'crt' | 'key') => {
      const m = new RegExp(`^ {4}${field.toLowerCase()}:\\n {8}crt: (.*)\\n {8}key: (.*)$`, 'm').exec(text);
      return Buffer.from((sub === 'crt' ? m?.[1] : m?.[2]) ?? '', 'base64');
    };
    for (const [field, file] of pairs) {
      const crtFile = await readFile(join(pki, `${file}.crt`));
      const keyFile = await readFile(join(pki, `${file}.key`));
      expect(raw(field, 'crt').equals(crtFile)).toBe(true);
      expect(raw(field, 'key').equals(keyFile)).toBe(true);
      expect(back.certs[field].crt).toBe(crtFile.toString('utf8'));
    }
    const saB64 = /^ {4}k8sserviceaccount:\n {8}key: (.*)$/m.exec(text)?.[1] ?? '';
    expect(Buffer.from(saB64, 'base64').equals(await readFile(join(pki, 'sa.key')))).toBe(true);

    const os = new X509Certificate(back.certs.os.crt);
    expect(os.publicKey.asymmetricKeyType).toBe('ed25519');
    expect(os.subject).toBe('O=talos');
    expect(os.ca).toBe(true);
    expect(os.verify(os.publicKey)).toBe(true);
    expect(back.certs.os.key.startsWith('-----BEGIN ED25519 PRIVATE KEY-----\n')).toBe(true);
    expect(built.bundle.trustdInfo.token).toMatch(TOKEN_PATTERN);
    expect(built.bundle.secrets.bootstrapToken).toBe(TOKEN);
    expect(built.bundle.cluster.id.length).toBe(32);
    expect(Buffer.from(built.bundle.cluster.secret, 'base64').length).toBe(32);
    expect(built.bundle.secrets.secretboxEncryptionSecret).toBeUndefined();
    expect(built.encryption.kind).toBe('plaintext');
    expect(built.provenance['certs.k8s']?.[0]).toEqual({ kind: 'file', path: join(pki, 'ca.crt') });
  });

  it('draws new random values each time', async () => {
    const a = await buildBundleFromKubeadmPki(pki, { bootstrapToken: TOKEN });
    const b = await buildBundleFromKubeadmPki(pki, { bootstrapToken: TOKEN });
    expect(Buffer.from(a.bundle.cluster.id).equals(Buffer.from(b.bundle.cluster.id))).toBe(false);
    expect(a.bundle.trustdInfo.token).not.toBe(b.bundle.trustdInfo.token);
    expect(a.bundle.certs.os.crt).not.toBe(b.bundle.certs.os.crt);
  });

  it('lists every missing PKI file', async () => {
    const dir = await copyPki('missing');
    await rm(join(dir, 'etcd/ca.key'));
    await rm(join(dir, 'sa.key'));
    const err = await expectInputError(
      buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }),
      /etcd\/ca\.key, sa\.key/,
    );
    expect(err.remediation).toMatch(/\/etc\/kubernetes\/pki/);
  });

  it('rejects an intermediate CA', async () => {
    const dir = await copyPki('intermediate');
    const rootCa = await createCA({ commonName: 'corp-root', key: { algorithm: 'ECDSA' } });
    const inter = await issueCertificate({
      issuer: rootCa,
      commonName: 'kubernetes',
      usage: 'ca',
      key: { algorithm: 'ECDSA' },
    });
    await writeFile(join(dir, 'ca.crt'), inter.certPem);
    await writeFile(join(dir, 'ca.key'), inter.keyPem);
    const err = await expectInputError(
      buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }),
      /intermediate CA/,
    );
    expect(err.location?.file).toBe(join(dir, 'ca.crt'));
  });

  it('rejects a CA that is not valid yet, and one that has expired', async () => {
    const dir = await copyPki('not-yet');
    const keyPem = await readFile(join(dir, 'front-proxy-ca.key'), 'utf8');
    const DAY = 86_400_000;
    const future = await createCA({
      commonName: 'front-proxy-ca',
      existingKeyPem: keyPem,
      notBefore: new Date(Date.now() + 30 * DAY),
    });
    await writeFile(join(dir, 'front-proxy-ca.crt'), future.certPem);
    const err = await expectInputError(
      buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }),
      /front-proxy-ca\.crt is not valid yet: its validity starts on /,
    );
    expect(err.location).toEqual({ file: join(dir, 'front-proxy-ca.crt'), field: 'notBefore' });
    const expired = await createCA({
      commonName: 'front-proxy-ca',
      existingKeyPem: keyPem,
      notBefore: new Date(Date.now() - 20 * DAY),
      notAfter: new Date(Date.now() - 10 * DAY),
    });
    await writeFile(join(dir, 'front-proxy-ca.crt'), expired.certPem);
    await expectInputError(buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }), /expired on/);
  });

  it('rejects a key that does not belong to its certificate', async () => {
    const dir = await copyPki('mismatch');
    await cp(join(dir, 'front-proxy-ca.key'), join(dir, 'etcd/ca.key'));
    const err = await expectInputError(
      buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }),
      /not the private key/,
    );
    expect(err.location?.file).toBe(join(dir, 'etcd/ca.key'));
  });

  it('rejects a leaf certificate in place of a CA', async () => {
    const dir = await copyPki('leaf');
    await cp(join(dir, 'apiserver.crt'), join(dir, 'ca.crt'));
    await cp(join(dir, 'apiserver.key'), join(dir, 'ca.key'));
    await expectInputError(buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }), /not a CA certificate/);
  });

  it('rejects an sa.pub that is not sa.key’s public half', async () => {
    const dir = await copyPki('sapub');
    const other = await createCA({ commonName: 'x', key: { algorithm: 'ECDSA' } });
    const { createPublicKey } = await import('node:crypto');
    await writeFile(
      join(dir, 'sa.pub'),
      createPublicKey(other.privateKey).export({ type: 'spki', format: 'pem' }),
    );
    await expectInputError(
      buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }),
      /sa\.pub is not the public key/,
    );
  });

  it('rejects an encrypted CA key', async () => {
    const dir = await copyPki('encrypted');
    const { createPrivateKey } = await import('node:crypto');
    const key = createPrivateKey(await readFile(join(dir, 'ca.key'), 'utf8'));
    await writeFile(
      join(dir, 'ca.key'),
      key.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }) as string,
    );
    await expectInputError(buildBundleFromKubeadmPki(dir, { bootstrapToken: TOKEN }), /encrypted/);
  });
});

describe('encryption secret', () => {
  const secret = Buffer.alloc(32, 7).toString('base64');
  const cfg = (provider: string, name: string, extra = '') =>
    parseEncryptionConfigWithKeys(
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - ${provider}:
          keys:
            - name: ${name}
              secret: ${secret}
${extra}      - identity: {}
`,
      'encryption-config.yaml',
    );

  it('imports a secretbox key named key2 into the bundle', async () => {
    const built = await buildBundleFromKubeadmPki(pki, {
      bootstrapToken: TOKEN,
      encryption: cfg('secretbox', 'key2'),
    });
    expect(built.encryption.kind).toBe('import');
    expect(built.bundle.secrets.secretboxEncryptionSecret).toBe(secret);
    expect(renderTalosSecretsBundle(built.bundle, 'v1.13')).toContain(`secretboxencryptionsecret: ${secret}`);
    expect(built.provenance['secrets.secretboxencryptionsecret']?.[0]).toMatchObject({
      path: 'encryption-config.yaml',
    });
  });

  it('imports an aescbc key named key1 as aescbcencryptionsecret', async () => {
    const built = await buildBundleFromKubeadmPki(pki, {
      bootstrapToken: TOKEN,
      encryption: cfg('aescbc', 'key1'),
    });
    expect(built.bundle.secrets.aescbcEncryptionSecret).toBe(secret);
    const text = renderTalosSecretsBundle(built.bundle, 'v1.13');
    expect(text.indexOf('bootstraptoken')).toBeLessThan(text.indexOf('aescbcencryptionsecret'));
    expect(text).not.toContain('secretboxencryptionsecret');
  });

  it('leaves the secret out and points to the key-rename plan when the name differs', async () => {
    const built = await buildBundleFromKubeadmPki(pki, {
      bootstrapToken: TOKEN,
      encryption: cfg('aescbc', 'key-2023'),
    });
    expect(built.encryption).toMatchObject({
      kind: 'rename-needed',
      provider: 'aescbc',
      keyName: 'key-2023',
    });
    expect(built.bundle.secrets.aescbcEncryptionSecret).toBeUndefined();
    expect(built.bundle.secrets.secretboxEncryptionSecret).toBeUndefined();
    // The note names the key the kit's rotation really moves to, not Talos's aescbc name.
    expect(built.notes.map((n) => n.message).join('\n')).toMatch(
      /key-rename steps kubeadm\/30-encryption-phase1\.sh, .* move the write key to secretbox "key2"/,
    );
  });

  it('warns about older read keys Talos will not have', async () => {
    const extra = `      - aescbc:\n          keys:\n            - name: old\n              secret: ${secret}\n`;
    const built = await buildBundleFromKubeadmPki(pki, {
      bootstrapToken: TOKEN,
      encryption: cfg('secretbox', 'key2', extra),
    });
    expect(built.encryption.kind).toBe('import');
    expect(built.notes.some((n) => n.severity === 'warning' && /aescbc "old"/.test(n.message))).toBe(true);
  });

  it('treats identity-first and absent configs as plaintext', () => {
    expect(decideEncryption(undefined).kind).toBe('plaintext');
    expect(decideEncryption(cfg('identity', 'x')).kind).toBe('plaintext');
    expect(decideEncryption(cfg('kms', 'x'))).toMatchObject({ kind: 'rename-needed', provider: 'kms' });
  });
});
