import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startBlackhole, startTlsServer } from '../adapters/kube/testing-fake-api.js';
import { createCA, type Issued, issueCertificate } from '../pki/forge.js';
import { fetchPeerCertificate, joinHostPort, splitHostPort } from './tls.js';

let ca: Issued;
let serving: Issued;
let server: Awaited<ReturnType<typeof startTlsServer>>;

beforeAll(async () => {
  ca = await createCA({ commonName: 'kubernetes' });
  // No 127.0.0.1 SAN and an untrusted CA: verification would fail, reading must not.
  serving = await issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    dnsNames: ['cp1', 'kubernetes'],
    ipAddresses: ['10.0.0.11'],
    usage: 'server',
  });
  server = await startTlsServer(serving.certPem, serving.keyPem);
});
afterAll(async () => server?.close());

describe('fetchPeerCertificate', () => {
  it('returns the DER the server presents without verifying trust or names', async () => {
    const der = await fetchPeerCertificate('127.0.0.1', server.port);
    expect(Buffer.from(der).equals(new X509Certificate(serving.certPem).raw)).toBe(true);
  });

  it('fails fast on a closed port, naming the address', async () => {
    const port = await closedPort();
    await expect(fetchPeerCertificate('127.0.0.1', port)).rejects.toThrow(
      `127.0.0.1:${port} failed: ECONNREFUSED`,
    );
  });

  it('gives up on a server that never answers the handshake', async () => {
    const hole = await startBlackhole();
    try {
      const t0 = Date.now();
      await expect(fetchPeerCertificate('127.0.0.1', hole.port, { timeoutMs: 500 })).rejects.toThrow(
        /no answer within 0.5 s/,
      );
      expect(Date.now() - t0).toBeLessThan(2_000);
    } finally {
      await hole.close();
    }
  });
});

describe('splitHostPort / joinHostPort', () => {
  it.each([
    ['https://10.0.0.10:6443', 443, '10.0.0.10', 6443],
    ['https://k8s.example.com', 443, 'k8s.example.com', 443],
    ['https://[fd00::10]:6443/prefix', 443, 'fd00::10', 6443],
    ['10.0.0.11:6443', 6443, '10.0.0.11', 6443],
    ['10.0.0.11', 6443, '10.0.0.11', 6443],
    ['[fd00::11]:7443', 6443, 'fd00::11', 7443],
    ['fd00::11', 6443, 'fd00::11', 6443],
  ])('%s', (input, dflt, host, port) => {
    expect(splitHostPort(input, dflt)).toEqual({ host, port });
  });

  it('brackets IPv6 only', () => {
    expect(joinHostPort('fd00::11', 6443)).toBe('[fd00::11]:6443');
    expect(joinHostPort('cp1', 6443)).toBe('cp1:6443');
  });
});
