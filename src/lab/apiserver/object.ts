/**
 * Plain-JSON Kubernetes objects as the lab API server stores and serves them, and the small
 * helpers every part of the server needs. Objects are never shared between requests: they are
 * parsed from JSON and cloned before they are changed.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type ObjectMeta = {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
};

export type OwnerReference = {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
};

/** A stored or served object. `spec`/`status` stay loosely typed: each resource has its own. */
export type KObj = {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  // biome-ignore lint/suspicious/noExplicitAny: every resource has its own spec shape
  spec?: any;
  // biome-ignore lint/suspicious/noExplicitAny: every resource has its own status shape
  status?: any;
  [key: string]: unknown;
};

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The value at a dotted path (`spec.nodeName`), or undefined. */
export function valueAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Sets the value at a dotted path, creating intermediate objects. */
export function setValueAt(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur: Record<string, unknown> = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (!isPlainObject(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

export function metaOf(obj: unknown): ObjectMeta {
  if (isPlainObject(obj) && isPlainObject(obj.metadata)) return obj.metadata as ObjectMeta;
  return {};
}
