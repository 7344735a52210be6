import { inputError } from '../../errors.js';
import { parsePem, spkiDer } from '../../pki/pem.js';
import { x509 } from '../../pki/x509.js';
import type { GenerateNote } from '../artifact.js';
import { parseTalosPrivateKey } from './pem.js';

export interface CaFiles {
  /** What the CA is for, e.g. "Kubernetes CA". */
  role: string;
  certFile: string;
  certPem: string;
  keyFile: string;
  keyPem: string;
}

/**
 * The checks Talos skips (its Validate only parses, talos.md §1): the certificate is a CA
 * (basicConstraints CA:TRUE, keyCertSign when key usage is present), self-signed (Talos uses one
 * root as signer and as --root-ca-file, so an intermediate cannot work), valid now (not expired,
 * not valid only from a future date), and the key
 * is the certificate's key. Every failure is bad input (exit 2) naming the file.
 */
export async function checkCaPair(ca: CaFiles, now: Date): Promise<GenerateNote[]> {
  const notes: GenerateNote[] = [];
  const certBlocks = parsePem(ca.certPem).blocks.filter((b) => b.label === 'CERTIFICATE');
  const first = certBlocks[0];
  if (!first) {
    throw inputError(
      `no certificate in the ${ca.role} file`,
      { file: ca.certFile },
      `copy ${ca.certFile} again from a control-plane node`,
    );
  }
  if (certBlocks.length > 1) {
    notes.push({
      severity: 'warning',
      message: `${ca.certFile} holds ${certBlocks.length} certificates; Talos signs with the first one only and drops the others from trust (pki.ca-bundle-multiple): finish the CA rotation first or add the other CAs as accepted CAs in the machine config`,
      source: { kind: 'file', path: ca.certFile },
    });
  }
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(first.der);
  } catch (cause) {
    throw inputError(
      `cannot parse the ${ca.role} certificate`,
      { file: ca.certFile },
      `copy ${ca.certFile} again from a control-plane node`,
      cause,
    );
  }
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  if (!bc?.ca) {
    throw inputError(
      `${ca.certFile} is not a CA certificate (basicConstraints CA:TRUE is missing)`,
      { file: ca.certFile, field: 'basicConstraints' },
      `point --pki at the kubeadm PKI directory whose ${ca.certFile} is the ${ca.role}`,
    );
  }
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  if (ku && (ku.usages & x509.KeyUsageFlags.keyCertSign) === 0) {
    throw inputError(
      `${ca.certFile} may not sign certificates (keyUsage lacks keyCertSign)`,
      { file: ca.certFile, field: 'keyUsage' },
      'Talos re-issues every leaf from this CA; a CA rotation is needed before migrating',
    );
  }
  const selfSigned = cert.subject === cert.issuer && (await cert.verify({ signatureOnly: true }));
  if (!selfSigned) {
    throw inputError(
      `${ca.certFile} is an intermediate CA (issued by "${cert.issuer}"); Talos needs a self-signed root (pki.intermediate-ca)`,
      { file: ca.certFile, field: 'issuer' },
      'Talos uses one self-signed CA as signer and as --root-ca-file; an intermediate-CA PKI cannot be imported (re-PKI needed)',
    );
  }
  if (cert.notBefore.getTime() > now.getTime()) {
    throw inputError(
      `${ca.certFile} is not valid yet: its validity starts on ${cert.notBefore.toISOString()}`,
      { file: ca.certFile, field: 'notBefore' },
      "check this machine's clock and the CA's origin: every certificate Talos issues from a CA that is not yet valid would be refused until then",
    );
  }
  if (cert.notAfter.getTime() <= now.getTime()) {
    throw inputError(
      `${ca.certFile} expired on ${cert.notAfter.toISOString()}`,
      { file: ca.certFile, field: 'notAfter' },
      'rotate the CA before migrating; Talos does not check expiry and would issue unusable leaves',
    );
  }
  const key = parseTalosPrivateKey(ca.keyPem, ca.keyFile);
  if (!Buffer.from(cert.publicKey.rawData).equals(spkiDer(key))) {
    throw inputError(
      `${ca.keyFile} is not the private key of ${ca.certFile} (pki.cert-key-mismatch)`,
      { file: ca.keyFile },
      `copy the matching ${ca.keyFile} from the control-plane node the certificate came from`,
    );
  }
  return notes;
}
