import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { createCA, issueCertificate } from '../../pki/forge.js';
import { closedPort } from '../kube/testing-fake-api.js';
import { createEtcdReader, normalizeEndpoint } from './reader.js';

// Real etcd is exercised by the lab tests (src/lab/etcd); these cover what needs no etcd.
let dir: string;
let files: { caFile: string; certFile: string; keyFile: string };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-etcd-reader-'));
  const ca = await createCA({ commonName: 'etcd-ca' });
  const client = await issueCertificate({
    issuer: ca,
    commonName: 'kube-etcd-healthcheck-client',
    usage: 'client',
  });
  files = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'client.crt'),
    keyFile: join(dir, 'client.key'),
  };
  writeFileSync(files.caFile, ca.certPem);
  writeFileSync(files.certFile, client.certPem);
  writeFileSync(files.keyFile, client.keyPem, { mode: 0o600 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createEtcdReader', () => {
  it('normalizes endpoints to https URLs and refuses plain http', () => {
    expect(normalizeEndpoint('10.0.0.11:2379')).toBe('https://10.0.0.11:2379');
    expect(normalizeEndpoint('https://10.0.0.11:2379/')).toBe('https://10.0.0.11:2379');
    expect(() => normalizeEndpoint('http://10.0.0.11:2379')).toThrow(/plain http/);
  });

  it('an unreadable TLS file is bad input naming the file and the flag', () => {
    const missing = join(dir, 'nope.crt');
    try {
      createEtcdReader({ endpoints: ['127.0.0.1:2379'], ...files, caFile: missing });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).kind).toBe('input');
      expect((err as FerryError).location).toMatchObject({ file: missing, field: '--etcd-cacert' });
    }
  });

  it('a key that is not the client certificate’s is bad input before anything connects', async () => {
    const other = await issueCertificate({
      issuer: await createCA({ commonName: 'another-ca' }),
      commonName: 'someone-else',
      usage: 'client',
    });
    const keyFile = join(dir, 'other.key');
    writeFileSync(keyFile, other.keyPem, { mode: 0o600 });
    try {
      createEtcdReader({ endpoints: ['127.0.0.1:2379'], ...files, keyFile });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).exitCode).toBe(2);
      expect((err as FerryError).message).toBe(
        `--etcd-key ${keyFile} does not match the certificate in ${files.certFile} (--etcd-cert)`,
      );
    }
  });

  it('fails fast when no endpoint answers, naming every endpoint', async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const reader = createEtcdReader({
      endpoints: [`127.0.0.1:${a}`, `127.0.0.1:${b}`],
      ...files,
      timeoutMs: 2_000,
    });
    try {
      const t0 = Date.now();
      const err = (await reader.readState().catch((e: unknown) => e)) as FerryError;
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(err).toBeInstanceOf(FerryError);
      expect(err.kind).toBe('unreachable');
      expect(err.message).toContain(`https://127.0.0.1:${a}`);
      expect(err.message).toContain(`https://127.0.0.1:${b}`);
      expect(err.remediation).toMatch(/--etcd-endpoints/);
    } finally {
      reader.close();
    }
  });
});
