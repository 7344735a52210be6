import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { createCA, type Issued, issueCertificate } from '../../pki/forge.js';
import { checkEtcdTls } from './tls-check.js';
import { type EtcdTlsBytes, readEtcdTlsFiles } from './tls-files.js';

const files = { caFile: '/in/etcd/ca.crt', certFile: '/in/etcd/client.crt', keyFile: '/in/etcd/client.key' };
let ca: Issued;
let client: Issued;
let other: Issued;
let good: EtcdTlsBytes;

beforeAll(async () => {
  ca = await createCA({ commonName: 'etcd-ca', key: { algorithm: 'ECDSA' } });
  client = await issueCertificate({
    issuer: ca,
    commonName: 'kube-etcd-healthcheck-client',
    usage: 'client',
    key: { algorithm: 'ECDSA' },
  });
  other = await issueCertificate({
    issuer: ca,
    commonName: 'etcd-peer',
    usage: 'peer',
    key: { algorithm: 'ECDSA' },
  });
  good = { ca: Buffer.from(ca.certPem), cert: Buffer.from(client.certPem), key: Buffer.from(client.keyPem) };
});

/** The refusal of `tls`, checked to be exit 2 and free of any PEM text or key bytes. */
function refusal(tls: Partial<EtcdTlsBytes>): FerryError {
  const all = { ...good, ...tls };
  try {
    checkEtcdTls(all, files);
  } catch (err) {
    expect(err).toBeInstanceOf(FerryError);
    const fe = err as FerryError;
    expect(fe.exitCode).toBe(2);
    const said = `${fe.message}\n${fe.remediation}`;
    expect(said).not.toContain('-----');
    for (const pem of [all.key.toString(), client.keyPem, other.keyPem]) {
      const body = pem.split('\n').find((l) => l.length > 20 && !l.startsWith('-----'));
      if (body) expect(said).not.toContain(body.slice(0, 16));
    }
    return fe;
  }
  throw new Error('the TLS files were accepted');
}

describe('checkEtcdTls', () => {
  it('accepts a CA, a client certificate it issued and that certificate’s key', () => {
    expect(() => checkEtcdTls(good, files)).not.toThrow();
  });

  it('an empty key names --etcd-key and its file', () => {
    const e = refusal({ key: Buffer.alloc(0) });
    expect(e.message).toBe(`--etcd-key ${files.keyFile} is empty, not a PEM private key`);
    expect(e.location).toEqual({ file: files.keyFile, field: '--etcd-key' });
    expect(e.remediation).toContain('healthcheck-client.key');
  });

  it('a certificate where the key should be: not a PEM private key, it holds a certificate', () => {
    const e = refusal({ key: Buffer.from(client.certPem) });
    expect(e.message).toBe(`--etcd-key ${files.keyFile} is not a PEM private key: it holds a certificate`);
  });

  it('the key of another certificate does not match the certificate in --etcd-cert', () => {
    const e = refusal({ key: Buffer.from(other.keyPem) });
    expect(e.message).toBe(
      `--etcd-key ${files.keyFile} does not match the certificate in ${files.certFile} (--etcd-cert)`,
    );
    expect(e.location).toEqual({ file: files.keyFile, field: '--etcd-key' });
  });

  it('a CA that is base64 garbage, DER, or a private key is not a PEM certificate', () => {
    const lines = ca.certPem.trim().split('\n');
    const garbage = [lines[0], ...lines.slice(1, -1).map((l) => '!'.repeat(l.length)), lines.at(-1)].join(
      '\n',
    );
    expect(refusal({ ca: Buffer.from(garbage) }).message).toBe(
      `--etcd-cacert ${files.caFile} is not a valid PEM certificate: block 1 (certificate): body is not valid base64`,
    );
    const der = Buffer.from(lines.slice(1, -1).join(''), 'base64');
    expect(refusal({ ca: der }).message).toBe(
      `--etcd-cacert ${files.caFile} is not a PEM certificate: it has no PEM block (DER or another format?)`,
    );
    const wellFormedNonsense = `${lines[0]}\n${Buffer.from('not a certificate at all').toString('base64')}\n${lines.at(-1)}\n`;
    expect(refusal({ ca: Buffer.from(wellFormedNonsense) }).message).toBe(
      `--etcd-cacert ${files.caFile} is not a valid PEM certificate: block 1 is not an X.509 certificate`,
    );
    const e = refusal({ ca: Buffer.from(ca.keyPem) });
    expect(e.message).toBe(`--etcd-cacert ${files.caFile} is not a PEM certificate: it holds a private key`);
    expect(e.location).toEqual({ file: files.caFile, field: '--etcd-cacert' });
  });

  it('a client certificate file holding only a key names --etcd-cert', () => {
    const e = refusal({ cert: Buffer.from(client.keyPem) });
    expect(e.message).toBe(`--etcd-cert ${files.certFile} is not a PEM certificate: it holds a private key`);
  });

  it('an encrypted key, or two keys, is refused', () => {
    const encrypted = createPrivateKey(client.keyPem).export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase: 'secret',
    }) as string;
    expect(refusal({ key: Buffer.from(encrypted) }).message).toContain('is encrypted with a passphrase');
    expect(refusal({ key: Buffer.from(client.keyPem + other.keyPem) }).message).toContain(
      'holds 2 private keys',
    );
  });
});

describe('readEtcdTlsFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-etcd-tls-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads and checks the files: a missing one and a wrong one are input errors naming flag and file', () => {
    const onDisk = {
      caFile: join(dir, 'ca.crt'),
      certFile: join(dir, 'client.crt'),
      keyFile: join(dir, 'client.key'),
    };
    writeFileSync(onDisk.caFile, ca.certPem);
    writeFileSync(onDisk.certFile, client.certPem);
    writeFileSync(onDisk.keyFile, client.keyPem);
    expect(readEtcdTlsFiles(onDisk).key.toString()).toBe(client.keyPem);

    const missing = { ...onDisk, caFile: join(dir, 'none.crt') };
    expect(() => readEtcdTlsFiles(missing)).toThrow(`--etcd-cacert ${missing.caFile} does not exist`);

    writeFileSync(onDisk.keyFile, client.certPem);
    try {
      readEtcdTlsFiles(onDisk);
      expect.unreachable();
    } catch (err) {
      expect((err as FerryError).exitCode).toBe(2);
      expect((err as FerryError).location).toEqual({ file: onDisk.keyFile, field: '--etcd-key' });
    }
  });
});
