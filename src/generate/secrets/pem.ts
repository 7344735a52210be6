import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { inputError } from '../../errors.js';

export interface PemBlock {
  label: string;
  /** The block's text including the BEGIN/END lines. */
  text: string;
  headers: boolean;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

export function pemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    out.push({ label: m[1] ?? '', text: m[0], headers: (m[2] ?? '').includes(':') });
  }
  return out;
}

/** Key PEM labels Talos accepts when importing a PKI (talos.md §2); anything else is `unsupported key type`. */
export const TALOS_KEY_LABELS = [
  'RSA PRIVATE KEY',
  'EC PRIVATE KEY',
  'ED25519 PRIVATE KEY',
  'PRIVATE KEY',
] as const;

/**
 * Reads a private key the way Talos will: exactly one supported PEM block, not encrypted. Talos's
 * Ed25519 label is relabelled for OpenSSL, which rejects it. Errors name the file (exit 2).
 */
export function parseTalosPrivateKey(pem: string, file: string): KeyObject {
  const blocks = pemBlocks(pem);
  const first = blocks[0];
  if (!first) {
    throw inputError(
      'not a PEM private key',
      { file },
      `replace ${file} with the PEM private key kubeadm wrote`,
    );
  }
  if (
    first.label === 'ENCRYPTED PRIVATE KEY' ||
    (first.headers && /Proc-Type:\s*4,ENCRYPTED/.test(first.text))
  ) {
    throw inputError(
      'the private key is encrypted; Talos cannot use a passphrase-protected key',
      { file },
      `decrypt it first, e.g. openssl pkey -in ${file} -out ${file}.plain, and point --pki at the decrypted copy`,
    );
  }
  if (!(TALOS_KEY_LABELS as readonly string[]).includes(first.label)) {
    throw inputError(
      `unsupported key type "${first.label}" (Talos accepts ${TALOS_KEY_LABELS.join(', ')})`,
      { file },
      'convert the key to PKCS#8 with openssl pkcs8 -topk8 -nocrypt',
    );
  }
  try {
    return createPrivateKey({
      key: first.text.replace(/(-----(?:BEGIN|END)) ED25519 PRIVATE KEY-----/g, '$1 PRIVATE KEY-----'),
    });
  } catch (cause) {
    throw inputError(
      'cannot parse the private key',
      { file },
      `replace ${file} with an intact copy from a control-plane node`,
      cause,
    );
  }
}

/** DER SubjectPublicKeyInfo of the public half of a private key: what key↔certificate matching compares. */
export function spkiOfPrivateKey(key: KeyObject): Buffer {
  return createPublicKey(key).export({ type: 'spki', format: 'der' });
}

/** Talos writes its Ed25519 keys as PKCS#8 DER under this non-standard label (crypto x509/options.go). */
export function toTalosEd25519Pem(pkcs8Pem: string): string {
  return pkcs8Pem.replace(/(-----(?:BEGIN|END)) PRIVATE KEY-----/g, '$1 ED25519 PRIVATE KEY-----');
}
