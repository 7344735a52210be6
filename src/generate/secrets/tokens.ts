import { randomBytes } from 'node:crypto';
import { usageError } from '../../errors.js';
import { TOKEN_PATTERN } from './bundle.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform over [a-z0-9] (rejection sampling: 252 = 7 × 36). */
function randomChars(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 252 && out.length < n) out += ALPHABET[b % 36];
    }
  }
  return out;
}

/** A token in Talos's `[a-z0-9]{6}.[a-z0-9]{16}` form (trustd token). */
export function randomToken(): string {
  return `${randomChars(6)}.${randomChars(16)}`;
}

/** base64 of 32 random bytes: cluster secret, Talos-format encryption keys. */
export function random32Base64(): string {
  return randomBytes(32).toString('base64');
}

/**
 * A kubeadm bootstrap token for the Talos nodes. Checked here because Talos does not validate a
 * supplied token (talos.md §1) and a malformed one only fails when a kubelet tries to join. The
 * value is never echoed: it is a credential.
 */
export function checkBootstrapToken(token: string): string {
  if (!TOKEN_PATTERN.test(token)) {
    throw usageError(
      '--bootstrap-token is not a bootstrap token: expected 6 and 16 characters of [a-z0-9] joined by "." (value not shown)',
      'create one on a control-plane node with: kubeadm token create --ttl 0',
    );
  }
  return token;
}
