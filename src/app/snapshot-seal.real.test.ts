/**
 * ferry's own etcd snapshots, from a real etcd 3.4: the integrity hash etcd appends is checked (a
 * corrupted byte is refused), the sha256 recorded, and with a recipient the snapshot is encrypted
 * with age, 0600, the plaintext gone, and it decrypts to the snapshot it was.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, expect, it } from 'vitest';
import { EtcdAdmin } from '../adapters/etcd/admin.js';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs, withEtcdLab } from '../lab/etcd/cluster.js';
import { decrypt } from '../mgmt/age.js';
import { etcdIntegrityHolds, sealSnapshot } from './snapshot-seal.js';

const missing = await missingReason('3.4');
afterAll(disposeAllLabs);

it('checks, hashes and encrypts a real etcd snapshot', async ({ skip }) => {
  if (missing) skip(missing);
  await withEtcdLab({ subnet: 48, version: '3.4', members: 1 }, async (lab) => {
    const admin = new EtcdAdmin({ endpoints: lab.endpoints(), tls: lab.clientTls(), callTimeoutMs: 5_000 });
    try {
      const file = join(lab.dir, 'snap', 'etcd.db');
      await admin.snapshot(file);
      const bytes = await readFile(file);
      expect(etcdIntegrityHolds(bytes)).toBe(true);

      const plain = await sealSnapshot(file, []);
      expect(plain).toEqual({
        file,
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        fileSha256: createHash('sha256').update(bytes).digest('hex'),
        encrypted: false,
      });

      // One byte changed in the database: etcd's own hash no longer matches, the snapshot is refused.
      const bad = Buffer.from(bytes);
      bad[100] = bad[100]! ^ 0xff;
      const badFile = join(lab.dir, 'snap', 'bad.db');
      await writeFile(badFile, bad, { mode: 0o600 });
      await expect(sealSnapshot(badFile, [])).rejects.toThrow(/integrity hash does not match/);

      const identity = await generateIdentity();
      const sealed = await sealSnapshot(file, [await identityToRecipient(identity)]);
      expect(sealed.file).toBe(`${file}.age`);
      expect(sealed.encrypted).toBe(true);
      expect(existsSync(file)).toBe(false);
      expect(statSync(sealed.file).mode & 0o777).toBe(0o600);
      const cipher = await readFile(sealed.file);
      expect(sealed.fileSha256).toBe(createHash('sha256').update(cipher).digest('hex'));
      const back = await decrypt(cipher, [identity], sealed.file, 'identity');
      expect(createHash('sha256').update(back).digest('hex')).toBe(plain.sha256);
    } finally {
      admin.close();
    }
  });
}, 60_000);
