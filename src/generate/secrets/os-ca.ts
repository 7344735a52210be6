import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { toTalosEd25519Pem } from '../../pki/pem.js';
import { x509 } from '../../pki/x509.js';
import type { CertAndKey } from './bundle.js';

/** Talos CA validity: 87600h (secrets.go CAValidityTime). */
const CA_VALIDITY_MS = 87_600 * 3_600_000;

/**
 * A new Talos API CA (`certs.os`), shaped like Talos's own: Ed25519, subject O=talos, 10 years,
 * CA:TRUE critical, keyUsage digitalSignature+keyCertSign, EKU serverAuth+clientAuth, SKI; the key
 * as PKCS#8 under Talos's "ED25519 PRIVATE KEY" label (talos.md §1). Nothing kubeadm has maps to it.
 */
export async function createTalosOsCa(now: Date): Promise<CertAndKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const alg = { name: 'Ed25519' };
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    privateKey.export({ type: 'pkcs8', format: 'der' }),
    alg,
    false,
    ['sign'],
  );
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  const name = [{ O: ['talos'] }];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: name,
    issuer: name,
    notBefore: now,
    notAfter: new Date(now.getTime() + CA_VALIDITY_MS),
    publicKey: spki,
    signingKey,
    signingAlgorithm: alg,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
      new x509.ExtendedKeyUsageExtension(
        [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
        false,
      ),
      new x509.BasicConstraintsExtension(true, undefined, true),
      await x509.SubjectKeyIdentifierExtension.create(spki),
    ],
  });
  return {
    crt: `${cert.toString('pem')}\n`,
    key: toTalosEd25519Pem(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string),
  };
}
