/**
 * A kubeadm cluster in the "external etcd" topology, as a files directory (docs/snapshot-layout.md
 * §1): three control planes cp-1..cp-3 (10.0.0.11-13) and worker-1, whose apiservers use an etcd
 * cluster on its own hosts — members etcd-1..etcd-3 at 10.0.1.5-7, etcd 3.5.21, leader etcd-2 — named
 * in kubeadm-config `etcd.external` and in every `--etcd-servers`. No control plane runs an etcd
 * static pod, and no member has a Node. Literal files under external-etcd/, no PKI (the PKI rules
 * skip themselves).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSnapshot } from './load.js';
import type { Snapshot } from './model.js';

export const EXTERNAL_ETCD_DIR = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'external-etcd');

/** The external members as etcd names them, with their client URLs. */
export const EXTERNAL_MEMBERS = [
  ['etcd-1', 'https://10.0.1.5:2379'],
  ['etcd-2', 'https://10.0.1.6:2379'],
  ['etcd-3', 'https://10.0.1.7:2379'],
] as const;

let cached: Promise<Snapshot> | undefined;

/** A fresh deep copy of the loaded fixture each call (tests mutate it). */
export async function externalEtcdSnapshot(): Promise<Snapshot> {
  cached ??= loadSnapshot(EXTERNAL_ETCD_DIR, { strictPki: false });
  return structuredClone(await cached);
}
