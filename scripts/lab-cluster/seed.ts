/**
 * Deterministic stand-ins for what a real cluster generates randomly (UIDs, name suffixes, container
 * ids, etcd ids) and timestamp arithmetic: the same seed gives the same value on every run.
 */
import { createHash } from 'node:crypto';

function sha(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

/** A UUID (v4 layout) derived from a seed, so UIDs are stable across runs. */
export function uidFor(seed: string): string {
  const h = sha(`uid/${seed}`).toString('hex');
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Kubernetes' "safe" alphabet for generated name suffixes (no vowels, no confusable digits). */
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A generated-name suffix (ReplicaSet hash, pod suffix) of `len` safe characters. */
export function suffix(seed: string, len: number): string {
  const h = sha(`suffix/${seed}`);
  let out = '';
  for (let i = 0; i < len; i++) out += SAFE[(h[i] ?? 0) % SAFE.length];
  return out;
}

/** Lowercase hex of `len` digits: container, machine and config-hash ids. */
export function hex(seed: string, len: number): string {
  return sha(`hex/${seed}`).toString('hex').slice(0, len);
}

/** etcd member/cluster ids: uint64 above 2^63 (so always above 2^53), as decimal strings. */
export function etcdIdFor(seed: string): string {
  const v = sha(`etcd/${seed}`).readBigUInt64BE(0) | (1n << 63n);
  return v.toString();
}

/** RFC 3339 to the second, as the API server prints timestamps. */
export function at(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `iso` shifted by `seconds`. */
export function plus(iso: string, seconds: number): string {
  return at(Date.parse(iso) + seconds * 1000);
}
