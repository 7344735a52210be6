import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { createCA, generateKeyPairPem, issueCertificate } from '../pki/forge.js';
import { writeEtcdMemberCerts, writeKubeadmPki } from '../pki/kubeadm-layout.js';
import type { PkiInventory } from './model.js';
import { assertPkiUsable, certificateInfoFromDer, certificateInfoFromPem, inventoryPki } from './pki.js';

let root: string;
let pristine: string;
let n = 0;

/** A fresh copy of the kubeadm PKI made once in beforeAll, for a test to damage. */
async function copyPki(): Promise<string> {
  const dir = join(root, `copy-${n++}`);
  await cp(pristine, dir, { recursive: true });
  return dir;
}

function usableError(inv: PkiInventory, dir: string): FerryError {
  try {
    assertPkiUsable(inv, dir);
  } catch (err) {
    expect(err).toBeInstanceOf(FerryError);
    return err as FerryError;
  }
  throw new Error('assertPkiUsable accepted an unusable PKI');
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-pki-inventory-'));
  pristine = join(root, 'pristine');
  await writeKubeadmPki(pristine, {
    apiserver: {
      nodeName: 'cp-1',
      advertiseAddress: '10.0.0.11',
      dnsNames: ['kubernetes'],
      ipAddresses: ['10.96.0.1'],
    },
    etcdMembers: [{ name: 'cp-1', ip: '10.0.0.11' }],
  });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('inventoryPki on a kubeadm directory', () => {
  let inv: PkiInventory;
  let dir: string;

  beforeAll(async () => {
    dir = await copyPki();
    await writeEtcdMemberCerts(dir, { name: 'cp-2', ip: '10.0.0.12' }, join(dir, 'etcd'));
    inv = await inventoryPki(dir);
  });

  it('finds every certificate, key and public key without problems', () => {
    expect(inv.root).toBe(dir);
    expect(inv.problems).toEqual([]);
    expect(inv.certificates.map((c) => c.path)).toEqual([
      'apiserver-etcd-client.crt',
      'apiserver-kubelet-client.crt',
      'apiserver.crt',
      'ca.crt',
      'etcd/ca.crt',
      'etcd/healthcheck-client.crt',
      'etcd/peer-cp-2.crt',
      'etcd/peer.crt',
      'etcd/server-cp-2.crt',
      'etcd/server.crt',
      'front-proxy-ca.crt',
      'front-proxy-client.crt',
    ]);
    expect(inv.publicKeys).toEqual([
      expect.objectContaining({ path: 'sa.pub', algorithm: 'RSA', keySize: 2048 }),
    ]);
    for (const k of inv.keys) {
      expect(k.encrypted).toBe(false);
      expect(k.algorithm).toBe('RSA');
      expect(k.keySize).toBe(2048);
      expect(k.matchesCertificate).toBe(k.path === 'sa.key' ? null : k.path.replace(/\.key$/, '.crt'));
    }
    expect(inv.keys).toHaveLength(inv.certificates.length + 1);
    expect(() => assertPkiUsable(inv, dir)).not.toThrow();
  });

  it('verifies every chain up to the right self-signed CA', () => {
    const issuerOf = Object.fromEntries(inv.certificates.map((c) => [c.path, c.chain]));
    expect(issuerOf['ca.crt']).toEqual({ issuerPath: 'ca.crt', verified: true });
    expect(issuerOf['apiserver.crt']).toEqual({ issuerPath: 'ca.crt', verified: true });
    expect(issuerOf['apiserver-etcd-client.crt']).toEqual({ issuerPath: 'etcd/ca.crt', verified: true });
    expect(issuerOf['etcd/server-cp-2.crt']).toEqual({ issuerPath: 'etcd/ca.crt', verified: true });
    expect(issuerOf['front-proxy-client.crt']).toEqual({ issuerPath: 'front-proxy-ca.crt', verified: true });
    for (const c of inv.certificates) {
      expect(c.selfSigned).toBe(c.isCA);
      if (!c.selfSigned) {
        const ca = inv.certificates.find((x) => x.path === c.chain.issuerPath);
        expect(c.authorityKeyId).toBe(ca?.subjectKeyId);
        expect(c.issuer).toBe(ca?.subject);
      }
    }
  });

  it('describes certificates as OpenSSL sees them', async () => {
    const api = inv.certificates.find((c) => c.path === 'apiserver.crt')!;
    const node = new X509Certificate(await readFile(join(dir, 'apiserver.crt')));
    expect(api.subject).toBe('CN=kube-apiserver');
    expect(api.issuer).toBe('CN=kubernetes');
    expect(api.serialNumber).toBe(node.serialNumber.toLowerCase());
    expect(api.fingerprintSha256).toBe(node.fingerprint256.replace(/:/g, '').toLowerCase());
    expect(api.notAfter).toBe(new Date(node.validTo).toISOString());
    expect(api.dnsNames).toEqual(['cp-1', 'kubernetes']);
    expect(api.ipAddresses).toEqual(['10.0.0.11', '10.96.0.1']);
    expect(api.keyUsages).toEqual(['digitalSignature', 'keyEncipherment']);
    expect(api.extendedKeyUsages).toEqual(['serverAuth']);
    expect(api.isCA).toBe(false);

    const kc = inv.certificates.find((c) => c.path === 'apiserver-kubelet-client.crt')!;
    expect(kc.subject).toBe('CN=kube-apiserver-kubelet-client,O=system:masters');
    expect(kc.extendedKeyUsages).toEqual(['clientAuth']);

    const ca = inv.certificates.find((c) => c.path === 'ca.crt')!;
    expect(ca.keyUsages).toEqual(['digitalSignature', 'keyCertSign', 'cRLSign']);
    expect(ca.pathLength).toBeUndefined();
    expect(ca.authorityKeyId).toBeUndefined();
    expect(ca.subjectKeyId).toMatch(/^[0-9a-f]{40}$/);

    const peer = inv.certificates.find((c) => c.path === 'etcd/peer.crt')!;
    expect(peer.extendedKeyUsages).toEqual(['serverAuth', 'clientAuth']);
    expect(peer.ipAddresses).toEqual(['10.0.0.11', '127.0.0.1', '::1']);
  });

  it('never puts key material into the inventory', async () => {
    const json = JSON.stringify(inv);
    expect(json).not.toContain('PRIVATE KEY');
    // Not even the base64 body of any key file.
    for (const k of inv.keys) {
      const body = (await readFile(join(dir, k.path), 'utf8')).split('\n')[2]!;
      expect(body.length).toBeGreaterThan(40);
      expect(json).not.toContain(body);
    }
  });
});

describe('inventoryPki on unusual and damaged directories', () => {
  it('detects an intermediate CA and finds its root when present', async () => {
    const dir = join(root, 'intermediate');
    const rootCa = await createCA({ commonName: 'corp-root', key: { algorithm: 'ECDSA' } });
    const mid = await issueCertificate({
      issuer: rootCa,
      commonName: 'kubernetes',
      usage: 'ca',
      pathLength: 0,
      key: { algorithm: 'ECDSA' },
    });
    await writeFile(join(await mkdirp(dir), 'ca.crt'), mid.certPem);
    await writeFile(join(dir, 'ca.key'), mid.keyPem);
    let inv = await inventoryPki(dir);
    let ca = inv.certificates[0]!;
    expect(ca.isCA).toBe(true);
    expect(ca.selfSigned).toBe(false);
    expect(ca.pathLength).toBe(0);
    expect(ca.chain).toEqual({ verified: false });
    expect(inv.keys[0]?.matchesCertificate).toBe('ca.crt');

    await writeFile(join(dir, 'root.pem'), rootCa.certPem);
    inv = await inventoryPki(dir);
    ca = inv.certificates.find((c) => c.path === 'ca.crt')!;
    expect(ca.chain).toEqual({ issuerPath: 'root.pem', verified: true });
    expect(inv.problems).toEqual([]);
  });

  it('does not verify a leaf signed by an impostor CA of the same name', async () => {
    const dir = await copyPki();
    const impostor = await createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA' } });
    const leaf = await issueCertificate({ issuer: impostor, commonName: 'kube-apiserver', usage: 'server' });
    await writeFile(join(dir, 'apiserver.crt'), leaf.certPem);
    await writeFile(join(dir, 'apiserver.key'), leaf.keyPem);
    const inv = await inventoryPki(dir);
    const api = inv.certificates.find((c) => c.path === 'apiserver.crt')!;
    expect(api.issuer).toBe('CN=kubernetes');
    expect(api.chain).toEqual({ issuerPath: 'ca.crt', verified: false });
    expect(inv.problems).toEqual([]);
  });

  it('reports each certificate of a bundle with its index', async () => {
    const dir = await mkdirp(join(root, 'bundle'));
    const a = await createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA' } });
    const b = await createCA({ commonName: 'kubernetes-old', key: { algorithm: 'ECDSA' } });
    await writeFile(join(dir, 'ca.crt'), a.certPem + b.certPem);
    await writeFile(join(dir, 'ca.key'), a.keyPem);
    const inv = await inventoryPki(dir);
    expect(inv.certificates.map((c) => [c.path, c.index, c.subject, c.chain.verified])).toEqual([
      ['ca.crt', 0, 'CN=kubernetes', true],
      ['ca.crt', 1, 'CN=kubernetes-old', true],
    ]);
    expect(inv.problems).toEqual([]);
    expect(certificateInfoFromPem(a.certPem + b.certPem, 'ca.crt').map((c) => c.index)).toEqual([0, 1]);
  });

  it('reports RSA, ECDSA and Ed25519 algorithms and sizes', async () => {
    const dir = await mkdirp(join(root, 'algorithms'));
    const specs = [
      ['rsa3072', { algorithm: 'RSA', size: 3072 }, 'RSA', 3072, undefined],
      ['p256', { algorithm: 'ECDSA', curve: 'P-256' }, 'ECDSA', 256, 'P-256'],
      ['p384', { algorithm: 'ECDSA', curve: 'P-384' }, 'ECDSA', 384, 'P-384'],
      ['ed', { algorithm: 'Ed25519' }, 'Ed25519', undefined, undefined],
    ] as const;
    for (const [name, key] of specs) {
      const ca = await createCA({ commonName: name, key });
      await writeFile(join(dir, `${name}.crt`), ca.certPem);
      await writeFile(join(dir, `${name}.key`), ca.keyPem);
    }
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([]);
    for (const [name, , algorithm, keySize, curve] of specs) {
      const cert = inv.certificates.find((c) => c.path === `${name}.crt`)!;
      expect([cert.keyAlgorithm, cert.keySize, cert.curve], name).toEqual([algorithm, keySize, curve]);
      expect(cert.chain.verified, name).toBe(true);
      const key = inv.keys.find((k) => k.path === `${name}.key`)!;
      expect([key.algorithm, key.keySize, key.curve], name).toEqual([algorithm, keySize, curve]);
      expect(key.publicKeySha256).toBe(cert.publicKeySha256);
    }
  });

  it('reads Talos\'s "ED25519 PRIVATE KEY" label', async () => {
    const dir = await mkdirp(join(root, 'talos-label'));
    const ca = await createCA({
      commonName: 'talos',
      organization: ['talos'],
      key: { algorithm: 'Ed25519' },
    });
    await writeFile(join(dir, 'os.crt'), ca.certPem);
    await writeFile(
      join(dir, 'os.key'),
      ca.keyPem.replace(/ PRIVATE KEY-----/g, ' ED25519 PRIVATE KEY-----'),
    );
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([]);
    expect(inv.keys[0]).toMatchObject({ algorithm: 'Ed25519', matchesCertificate: 'os.crt' });
  });

  it('flags a file that is not PEM', async () => {
    const dir = await copyPki();
    await writeFile(join(dir, 'front-proxy-ca.crt'), 'this is not a certificate\n');
    const der = new X509Certificate(await readFile(join(dir, 'ca.crt'))).raw;
    await writeFile(join(dir, 'extra.crt'), der);
    const inv = await inventoryPki(dir);
    expect(inv.problems.map((p) => [p.path, p.problem])).toEqual([
      ['extra.crt', 'not-pem'],
      ['front-proxy-ca.crt', 'not-pem'],
    ]);
    const err = usableError(inv, dir);
    expect(err.kind).toBe('input');
    expect(err.exitCode).toBe(2);
    expect(err.location?.file).toBe(join(dir, 'extra.crt'));
    expect(err.message).toMatch(/^2 problems.*extra\.crt.*front-proxy-ca\.crt/);
    expect(err.remediation).toMatch(/PEM/);
    expect(() => certificateInfoFromPem('garbage', 'x.crt')).toThrow(FerryError);
  });

  it('flags a key that does not match its certificate, and a mismatched sa.pub', async () => {
    const dir = await copyPki();
    const other = await generateKeyPairPem({ algorithm: 'ECDSA' });
    await writeFile(join(dir, 'apiserver.key'), other.privateKeyPem);
    await writeFile(join(dir, 'sa.pub'), other.publicKeyPem);
    const inv = await inventoryPki(dir);
    expect(inv.problems.map((p) => [p.path, p.problem])).toEqual([
      ['apiserver.key', 'key-mismatch'],
      ['sa.key', 'key-mismatch'],
    ]);
    expect(inv.keys.find((k) => k.path === 'apiserver.key')?.matchesCertificate).toBeNull();
    const err = usableError(inv, dir);
    expect(err.location?.file).toBe(join(dir, 'apiserver.key'));
    expect(err.remediation).toMatch(/together/);
  });

  it('finds the matching certificate elsewhere when keys are swapped', async () => {
    const dir = await copyPki();
    await cp(join(dir, 'ca.key'), join(dir, 'front-proxy-ca.key'));
    const inv = await inventoryPki(dir);
    expect(inv.keys.find((k) => k.path === 'front-proxy-ca.key')?.matchesCertificate).toBe('ca.crt');
    expect(inv.problems).toEqual([
      expect.objectContaining({ path: 'front-proxy-ca.key', problem: 'key-mismatch' }),
    ]);
  });

  it('flags encrypted private keys, PKCS#8 and legacy PEM', async () => {
    const dir = await copyPki();
    const passphrase = 'correct horse';
    const caKey = createPrivateKey(await readFile(join(dir, 'ca.key')));
    await writeFile(
      join(dir, 'ca.key'),
      caKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }),
    );
    const saKey = createPrivateKey(await readFile(join(dir, 'sa.key')));
    const legacy = saKey.export({
      type: 'pkcs1',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase,
    }) as string;
    expect(legacy).toContain('Proc-Type: 4,ENCRYPTED');
    await writeFile(join(dir, 'sa.key'), legacy);
    const inv = await inventoryPki(dir);
    expect(inv.keys.find((k) => k.path === 'ca.key')).toEqual({
      path: 'ca.key',
      algorithm: 'unknown',
      encrypted: true,
      matchesCertificate: null,
    });
    expect(inv.keys.find((k) => k.path === 'sa.key')).toMatchObject({ algorithm: 'RSA', encrypted: true });
    expect(inv.problems.map((p) => [p.path, p.problem])).toEqual([
      ['ca.key', 'encrypted-key'],
      ['sa.key', 'encrypted-key'],
    ]);
    expect(JSON.stringify(inv)).not.toContain('PRIVATE KEY');
    const err = usableError(inv, dir);
    expect(err.location?.file).toBe(join(dir, 'ca.key'));
    expect(err.remediation).toMatch(/decrypt/);
  });

  it('refuses a truncated directory: ca.crt missing', async () => {
    const dir = await copyPki();
    await unlink(join(dir, 'ca.crt'));
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([]);
    expect(inv.keys.find((k) => k.path === 'ca.key')?.matchesCertificate).toBeNull();
    const err = usableError(inv, dir);
    expect(err.location?.file).toBe(join(dir, 'ca.crt'));
    expect(err.message).toMatch(/ca\.crt is missing/);
  });

  it('refuses a PEM cut in half, keeping the rest of the inventory', async () => {
    const dir = await copyPki();
    const pem = await readFile(join(dir, 'etcd/ca.crt'), 'utf8');
    await writeFile(join(dir, 'etcd/ca.crt'), pem.slice(0, Math.floor(pem.length / 2)));
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([
      expect.objectContaining({
        path: 'etcd/ca.crt',
        problem: 'unparseable',
        message: expect.stringMatching(/truncated/),
      }),
    ]);
    // Leaves of the etcd CA now have no issuer in the inventory.
    expect(inv.certificates.find((c) => c.path === 'etcd/server.crt')?.chain).toEqual({ verified: false });
    expect(inv.certificates.find((c) => c.path === 'apiserver.crt')?.chain.verified).toBe(true);
    const err = usableError(inv, dir);
    expect(err.location?.file).toBe(join(dir, 'etcd/ca.crt'));
    expect(err.remediation).toMatch(/truncated/);
  });

  it('flags a certificate whose DER is damaged inside valid PEM armour', async () => {
    const dir = await copyPki();
    const der = Buffer.from(new X509Certificate(await readFile(join(dir, 'apiserver.crt'))).raw);
    const cut = der.subarray(0, 200).toString('base64');
    await writeFile(
      join(dir, 'apiserver.crt'),
      `-----BEGIN CERTIFICATE-----\n${cut}\n-----END CERTIFICATE-----\n`,
    );
    const inv = await inventoryPki(dir);
    expect(inv.problems.map((p) => [p.path, p.problem])).toEqual([['apiserver.crt', 'unparseable']]);
    expect(inv.keys.find((k) => k.path === 'apiserver.key')?.matchesCertificate).toBeNull();
  });

  it('records a dangling symlink as what it is, with a fix that is not about permissions', async () => {
    const dir = await copyPki();
    const { symlink } = await import('node:fs/promises');
    await unlink(join(dir, 'sa.key'));
    await symlink(join(dir, 'gone.key'), join(dir, 'sa.key'));
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([
      {
        path: 'sa.key',
        problem: 'not-a-file',
        message: `sa.key is a symbolic link to ${join(dir, 'gone.key')}, which does not exist`,
      },
    ]);
    const err = usableError(inv, dir);
    expect(err.exitCode).toBe(2);
    expect(err.remediation).toMatch(/cp -rL/);
    expect(err.remediation).not.toMatch(/readable/);
  });

  it('records a directory where a key file belongs', async () => {
    const dir = await copyPki();
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'extra.key'));
    const inv = await inventoryPki(dir);
    expect(inv.problems).toEqual([]);
    // A directory named like a key is walked into, not read; a symbolic link loop is reported.
    const { symlink } = await import('node:fs/promises');
    await symlink(join(dir, 'loop.key'), join(dir, 'loop.key'));
    const again = await inventoryPki(dir);
    expect(again.problems.map((p) => [p.path, p.problem, p.message])).toEqual([
      ['loop.key', 'not-a-file', 'loop.key is a symbolic link loop (following it never reaches a file)'],
    ]);
  });

  it('rejects a directory that does not exist', async () => {
    await expect(inventoryPki(join(root, 'nope'))).rejects.toBeInstanceOf(FerryError);
  });
});

describe('certificateInfoFromDer', () => {
  it('describes a DER certificate and rejects garbage', async () => {
    const ca = await createCA({ commonName: 'served', key: { algorithm: 'ECDSA' } });
    const der = new Uint8Array(new X509Certificate(ca.certPem).raw);
    const info = certificateInfoFromDer(der, '10.0.0.10_6443');
    expect(info).toMatchObject({ path: '10.0.0.10_6443', index: 0, subject: 'CN=served', isCA: true });
    expect(info.fingerprintSha256).toBe(certificateInfoFromPem(ca.certPem, 'x').at(0)?.fingerprintSha256);
    expect(() => certificateInfoFromDer(der.subarray(0, 100), 'cut')).toThrow(FerryError);
    expect(() =>
      certificateInfoFromDer(
        generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }),
        'k',
      ),
    ).toThrow(FerryError);
  });
});

async function mkdirp(dir: string): Promise<string> {
  const { mkdir } = await import('node:fs/promises');
  await mkdir(dir, { recursive: true });
  return dir;
}
