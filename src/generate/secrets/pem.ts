import type { KeyObject } from 'node:crypto';
import { inputError } from '../../errors.js';
import { isEncryptedKeyBlock, parsePem, privateKeyFromBlock } from '../../pki/pem.js';

/** Key PEM labels Talos accepts when importing a PKI (talos.md §2); anything else is `unsupported key type`. */
export const TALOS_KEY_LABELS = [
  'RSA PRIVATE KEY',
  'EC PRIVATE KEY',
  'ED25519 PRIVATE KEY',
  'PRIVATE KEY',
] as const;

/**
 * Reads a private key the way Talos will: exactly one supported PEM block, not encrypted (Talos's
 * Ed25519 label included). Errors name the file (exit 2).
 */
export function parseTalosPrivateKey(pem: string, file: string): KeyObject {
  const { blocks, errors } = parsePem(pem);
  const first = blocks[0];
  if (!first) {
    throw inputError(
      errors.length > 0 ? `cannot parse the private key: ${errors.join('; ')}` : 'not a PEM private key',
      { file },
      errors.length > 0
        ? `replace ${file} with an intact copy from a control-plane node`
        : `replace ${file} with the PEM private key kubeadm wrote`,
    );
  }
  if (isEncryptedKeyBlock(first)) {
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
    return privateKeyFromBlock(first);
  } catch (cause) {
    throw inputError(
      'cannot parse the private key',
      { file },
      `replace ${file} with an intact copy from a control-plane node`,
      cause,
    );
  }
}
