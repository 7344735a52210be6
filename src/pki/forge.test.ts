import { createPrivateKey, createPublicKey, X509Certificate as NodeX509 } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCA, generateKeyPairPem, issueCertificate, type KeySpec, loadIssued } from './forge.js';
import { x509 } from './x509.js';

function ekus(cert: x509.X509Certificate): string[] {
  return (cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []).map(String);
}

describe('forge', () => {
  it('creates a self-signed RSA root CA shaped like kubeadm', async () => {
    const ca = await createCA({ commonName: 'kubernetes' });
    expect(ca.keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(ca.certPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(ca.subject).toBe('CN=kubernetes');

    // Cross-check with OpenSSL (node:crypto) rather than the library that wrote it.
    const node = new NodeX509(ca.certPem);
    expect(node.ca).toBe(true);
    expect(node.checkIssued(node)).toBe(true);
    expect(node.verify(node.publicKey)).toBe(true);
    expect(node.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
    expect(node.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);

    const bc = ca.certificate.getExtension(x509.BasicConstraintsExtension);
    expect(bc?.ca).toBe(true);
    expect(bc?.critical).toBe(true);
    const ku = ca.certificate.getExtension(x509.KeyUsagesExtension);
    expect(ku?.usages).toBe(
      x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
    );
    expect(ca.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId).toMatch(/^[0-9a-f]{40}$/);
    expect(ca.certificate.getExtension(x509.AuthorityKeyIdentifierExtension)).toBeNull();
    // 10 years by default, backdated a little.
    const days = (ca.notAfter.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(3649);
    expect(days).toBeLessThan(3651);
    expect(ca.certificate.notBefore.getTime()).toBeLessThan(Date.now());
  });

  it('issues server, client and peer leaves with SANs, EKUs and AKI = issuer SKI', async () => {
    const ca = await createCA({ commonName: 'etcd-ca', key: { algorithm: 'ECDSA' } });
    const caSki = ca.certificate.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    const cases = [
      ['server', ['1.3.6.1.5.5.7.3.1']],
      ['client', ['1.3.6.1.5.5.7.3.2']],
      ['peer', ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']],
    ] as const;
    for (const [usage, expected] of cases) {
      const leaf = await issueCertificate({
        issuer: ca,
        commonName: `node-${usage}`,
        organization: ['system:masters'],
        dnsNames: ['node-1', 'localhost'],
        ipAddresses: ['10.0.0.1', '127.0.0.1', '::1'],
        usage,
        key: { algorithm: 'ECDSA' },
      });
      expect(leaf.subject).toBe(`CN=node-${usage},O=system:masters`);
      expect(ekus(leaf.certificate)).toEqual(expected);
      expect(leaf.certificate.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
      expect(leaf.certificate.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(caSki);
      const node = new NodeX509(leaf.certPem);
      expect(node.verify(new NodeX509(ca.certPem).publicKey)).toBe(true);
      expect(node.subjectAltName).toBe(
        'DNS:node-1, DNS:localhost, IP Address:10.0.0.1, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
      );
      expect(node.issuer).toBe('CN=etcd-ca');
      const days = (leaf.notAfter.getTime() - Date.now()) / 86_400_000;
      expect(Math.round(days)).toBe(365);
    }
  });

  it('makes an intermediate CA that verifies against the root and signs leaves', async () => {
    const root = await createCA({ commonName: 'root', key: { algorithm: 'ECDSA', curve: 'P-384' } });
    const mid = await issueCertificate({
      issuer: root,
      commonName: 'kubernetes',
      usage: 'ca',
      pathLength: 0,
      key: { algorithm: 'ECDSA' },
    });
    const leaf = await issueCertificate({ issuer: mid, commonName: 'kube-apiserver', usage: 'server' });
    const rootN = new NodeX509(root.certPem);
    const midN = new NodeX509(mid.certPem);
    const leafN = new NodeX509(leaf.certPem);
    expect(midN.ca).toBe(true);
    expect(midN.verify(rootN.publicKey)).toBe(true);
    expect(midN.verify(midN.publicKey)).toBe(false);
    expect(leafN.verify(midN.publicKey)).toBe(true);
    expect(mid.certificate.getExtension(x509.BasicConstraintsExtension)?.pathLength).toBe(0);
    // The P-384 root signs with SHA-384.
    expect(mid.certificate.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-384' } });
  });

  it('writes each key type in the PEM form kubeadm uses', async () => {
    const specs: [KeySpec, RegExp, string, number | undefined][] = [
      [{ algorithm: 'RSA', size: 3072 }, /^-----BEGIN RSA PRIVATE KEY-----/, 'rsa', 3072],
      [{ algorithm: 'ECDSA', curve: 'P-384' }, /^-----BEGIN EC PRIVATE KEY-----/, 'ec', undefined],
      [{ algorithm: 'Ed25519' }, /^-----BEGIN PRIVATE KEY-----/, 'ed25519', undefined],
    ];
    for (const [spec, label, type, bits] of specs) {
      const { privateKeyPem, publicKeyPem } = await generateKeyPairPem(spec);
      expect(privateKeyPem).toMatch(label);
      expect(publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      const priv = createPrivateKey(privateKeyPem);
      expect(priv.asymmetricKeyType).toBe(type);
      expect(priv.asymmetricKeyDetails?.modulusLength).toBe(bits);
      expect(createPublicKey(priv).export({ type: 'spki', format: 'pem' })).toBe(publicKeyPem);
    }
  });

  it('signs with an Ed25519 CA', async () => {
    const ca = await createCA({
      commonName: 'talos',
      organization: ['talos'],
      key: { algorithm: 'Ed25519' },
    });
    const leaf = await issueCertificate({
      issuer: ca,
      commonName: 'x',
      usage: 'client',
      key: { algorithm: 'Ed25519' },
    });
    expect(new NodeX509(leaf.certPem).verify(new NodeX509(ca.certPem).publicKey)).toBe(true);
    expect(ca.subject).toBe('CN=talos,O=talos');
  });

  it('reuses an existing key and loads an issuer from PEM', async () => {
    const ca = await createCA({ commonName: 'ca', key: { algorithm: 'ECDSA' } });
    const again = await createCA({ commonName: 'ca', existingKeyPem: ca.keyPem });
    expect(again.certificate.publicKey.rawData).toEqual(ca.certificate.publicKey.rawData);
    expect(again.certificate.serialNumber).not.toBe(ca.certificate.serialNumber);

    const loaded = await loadIssued(ca.certPem, ca.keyPem);
    const leaf = await issueCertificate({ issuer: loaded, commonName: 'l', usage: 'server' });
    expect(new NodeX509(leaf.certPem).verify(new NodeX509(ca.certPem).publicKey)).toBe(true);

    const other = await generateKeyPairPem({ algorithm: 'ECDSA' });
    await expect(loadIssued(ca.certPem, other.privateKeyPem)).rejects.toThrow(/does not match/);
  });

  it('takes names literally and renders them as RFC 4514', async () => {
    const ca = await createCA({
      commonName: 'a+b, "c" #1',
      organization: ['system:masters', 'ops'],
      key: { algorithm: 'ECDSA' },
    });
    expect(ca.subject).toBe('CN=a\\+b\\, \\"c\\" #1,O=system:masters+O=ops');
    // OpenSSL sees one multi-valued O RDN (as Go writes it) and the CN verbatim (escaped by Node).
    expect(new NodeX509(ca.certPem).subject).toBe('O=system:masters + O=ops\nCN=a\\+b\\, \\"c\\" #1');
  });

  it('honours explicit validity and rejects bad input', async () => {
    const notBefore = new Date('2020-01-01T00:00:00Z');
    const notAfter = new Date('2021-01-01T00:00:00Z');
    const ca = await createCA({ commonName: 'old', notBefore, notAfter, key: { algorithm: 'ECDSA' } });
    expect(ca.certificate.notBefore.toISOString()).toBe(notBefore.toISOString());
    expect(ca.notAfter.toISOString()).toBe(notAfter.toISOString());
    await expect(
      createCA({ commonName: 'x', notBefore: notAfter, notAfter: notBefore, key: { algorithm: 'ECDSA' } }),
    ).rejects.toThrow(/notAfter/);
    await expect(
      issueCertificate({
        issuer: ca,
        commonName: 'x',
        usage: 'server',
        ipAddresses: ['not-an-ip'],
        key: { algorithm: 'ECDSA' },
      }),
    ).rejects.toThrow(/not an IP/);
  });
});
