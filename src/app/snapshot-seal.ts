/**
 * ferry's own etcd snapshots (steps 0.03 and 4.01), checked and sealed before the run goes on: the
 * integrity hash etcd appends to a snapshot it streams (the sha256 of the database, its last 32
 * bytes, which `etcdutl snapshot restore` checks) must match, the file's sha256 is recorded for the
 * journal, and with recipients the snapshot is encrypted at rest with age (the plaintext, which
 * holds every Secret of the cluster, removed). Files 0600, written under a temporary name.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { encrypt } from '../mgmt/age.js';
import type { SnapshotWritten } from '../run/deps.js';

export type SealedSnapshot = SnapshotWritten;

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Whether the last 32 bytes are the sha256 of the rest, as etcd writes a streamed snapshot. */
export function etcdIntegrityHolds(snapshot: Uint8Array): boolean {
  if (snapshot.length <= 32) return false;
  const body = snapshot.subarray(0, snapshot.length - 32);
  const tail = Buffer.from(snapshot.subarray(snapshot.length - 32)).toString('hex');
  return sha256(body) === tail;
}

export async function sealSnapshot(file: string, recipients: readonly string[]): Promise<SealedSnapshot> {
  const plain = await readFile(file);
  if (!etcdIntegrityHolds(plain))
    throw new Error(
      `${file}: the snapshot's integrity hash does not match its contents (truncated or corrupted on the way): it could not be restored`,
    );
  const digest = sha256(plain);
  if (recipients.length === 0)
    return { file, bytes: plain.length, sha256: digest, fileSha256: digest, encrypted: false };
  const sealed = await encrypt(plain, [...recipients]);
  const out = `${file}.age`;
  const tmp = `${out}.${process.pid}.part`;
  try {
    await writeFile(tmp, sealed, { mode: 0o600 });
    await rename(tmp, out);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await rm(file, { force: true });
  return { file: out, bytes: plain.length, sha256: digest, fileSha256: sha256(sealed), encrypted: true };
}
