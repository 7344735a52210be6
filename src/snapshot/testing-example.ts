/**
 * The example cluster (examples/lab-cluster: 3 control planes, etcd leader cp-2 per
 * etcd/endpoint-status.json, 5 workers), loaded from disk once per test file.
 */
import { fileURLToPath } from 'node:url';
import { loadSnapshot } from './load.js';
import type { Snapshot } from './model.js';

export const EXAMPLE_DIR = fileURLToPath(new URL('../../examples/lab-cluster', import.meta.url));

let cached: Promise<Snapshot> | undefined;

/** A fresh deep copy of the example snapshot each call (tests mutate it). */
export async function exampleSnapshot(): Promise<Snapshot> {
  cached ??= loadSnapshot(EXAMPLE_DIR, { strictPki: false });
  return structuredClone(await cached);
}
