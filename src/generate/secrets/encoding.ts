import { usageError } from '../../errors.js';
import { decodeBase64 } from '../../snapshot/values.js';
import { parseVersion } from '../../util/semver.js';

/**
 * Base64 flavours of the bundle. Go's base64.URLEncoding is the URL alphabet *with* padding, which
 * Node's 'base64url' (unpadded) is not, so it is derived from the standard alphabet here.
 */
export function toStdBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

export function toUrlBase64Padded(bytes: Uint8Array): string {
  return toStdBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_');
}

/** Decodes standard or URL-alphabet base64 (padded or not); undefined when the text is not base64. */
export function decodeAnyBase64(text: string): Buffer | undefined {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  const bare = t.replace(/=+$/, '');
  if (bare.length % 4 === 1) return undefined;
  return Buffer.from(bare.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Strict standard base64 (what `crt`/`key` and the encryption secrets use), not empty. */
export function decodeStdBase64(text: string): Buffer | undefined {
  return text.trim() === '' ? undefined : decodeBase64(text);
}

export interface TalosMinor {
  major: number;
  minor: number;
}

/** "v1.13", "1.13.9", "v1.14.0-rc.1" → {1, 13}. Bad syntax is a usage error (exit 2). */
export function talosMinorOf(version: string): TalosMinor {
  const v = parseVersion(version);
  if (!v) {
    throw usageError(
      `"${version}" is not a Talos version`,
      'pass --talos-version as v1.MINOR or v1.MINOR.PATCH, e.g. --talos-version v1.13',
    );
  }
  return { major: v.major, minor: v.minor };
}

/** v1.14 switched cluster.id from URLEncoding to StdEncoding (talos.md §1, bundle.go). */
export function clusterIdEncoding(version: string): 'std' | 'url' {
  const v = talosMinorOf(version);
  return v.major > 1 || (v.major === 1 && v.minor >= 14) ? 'std' : 'url';
}

export function encodeClusterId(id: Uint8Array, version: string): string {
  return clusterIdEncoding(version) === 'std' ? toStdBase64(id) : toUrlBase64Padded(id);
}
