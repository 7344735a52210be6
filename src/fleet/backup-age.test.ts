import { describe, expect, it } from 'vitest';
import { backupNeedsAttention, describeBackup, type ManagementBackup } from './backup-age.js';

const url = 's3://mgmt-backups/eu';
const read = (ageSeconds: number, verified = true, problem?: string): ManagementBackup => ({
  kind: 'read',
  backup: {
    url,
    versions: 3,
    newest: {
      versionId: 'v3',
      createdAt: '2026-12-06T01:00:00.000Z',
      ageSeconds,
      verified,
      ...(problem && { problem }),
    },
  },
});

describe('a management cluster backup in fleet status', () => {
  it('fresh and verified: no attention, its age said', () => {
    expect(backupNeedsAttention(read(3600), 26 * 3600)).toBe(false);
    expect(backupNeedsAttention(read(3600), undefined)).toBe(false);
    expect(describeBackup(read(3600), 26 * 3600)).toBe(
      `backup ${url}: newest 60m old, checksum verified; 3 version(s)`,
    );
  });

  it('past --max-age needs attention and says so; exactly the limit does not', () => {
    expect(backupNeedsAttention(read(26 * 3600 + 1), 26 * 3600)).toBe(true);
    expect(backupNeedsAttention(read(26 * 3600), 26 * 3600)).toBe(false);
    expect(describeBackup(read(3 * 86_400), 26 * 3600)).toBe(
      `backup ${url}: newest 3d old (older than --max-age 26h), checksum verified; 3 version(s)`,
    );
  });

  it('a newest version that does not verify, or no version at all, needs attention whatever its age', () => {
    const bad = read(60, false, 'sha256 differs');
    expect(backupNeedsAttention(bad, undefined)).toBe(true);
    expect(describeBackup(bad, undefined)).toContain('does not verify: sha256 differs');
    const none: ManagementBackup = { kind: 'read', backup: { url, versions: 0 } };
    expect(backupNeedsAttention(none, undefined)).toBe(true);
    expect(describeBackup(none, undefined)).toBe(
      `backup ${url}: none (ferry mgmt backup --to ${url} writes one)`,
    );
  });

  it('a location that could not be read is not seen to be fresh; none configured is only said', () => {
    const gone: ManagementBackup = { kind: 'not-read', url, reason: 'S3 at http://127.0.0.1:1 refused' };
    expect(backupNeedsAttention(gone, 86_400)).toBe(true);
    expect(describeBackup(gone, 86_400)).toBe(`backup ${url} not read: S3 at http://127.0.0.1:1 refused`);
    expect(backupNeedsAttention({ kind: 'not-configured' }, 60)).toBe(false);
    expect(describeBackup({ kind: 'not-configured' }, 60)).toContain('management[].backup');
  });
});
