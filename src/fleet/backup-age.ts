/**
 * A management cluster's backups as `ferry fleet status` reports them: the newest version's age
 * and whether it verified (as `ferry mgmt status` reads it), or why it could not be read. A backup
 * not seen is not seen to be fresh: it needs attention as a stale one does. Pure.
 */
import { formatAge } from '../util/format-age.js';

/** What `ferry mgmt status` reads of a backup location (mgmt/status.ts BackupStatus). */
export interface BackupSeen {
  url: string;
  versions: number;
  newest?: { versionId: string; createdAt: string; ageSeconds: number; verified: boolean; problem?: string };
}

export type ManagementBackup =
  | { kind: 'not-configured' }
  | { kind: 'read'; backup: BackupSeen }
  | { kind: 'not-read'; url: string; reason: string };

export function backupNeedsAttention(b: ManagementBackup, maxAgeSeconds: number | undefined): boolean {
  switch (b.kind) {
    case 'not-configured':
      return false;
    case 'not-read':
      return true;
    case 'read': {
      const n = b.backup.newest;
      return !n?.verified || (maxAgeSeconds !== undefined && n.ageSeconds > maxAgeSeconds);
    }
  }
}

export function describeBackup(b: ManagementBackup, maxAgeSeconds: number | undefined): string {
  switch (b.kind) {
    case 'not-configured':
      return 'no backup location in the fleet file (management[].backup)';
    case 'not-read':
      return `backup ${b.url} not read: ${b.reason}`;
    case 'read': {
      const { url, versions, newest: n } = b.backup;
      if (!n) return `backup ${url}: none (ferry mgmt backup --to ${url} writes one)`;
      const stale =
        maxAgeSeconds !== undefined && n.ageSeconds > maxAgeSeconds
          ? ` (older than --max-age ${formatAge(maxAgeSeconds)})`
          : '';
      const check = n.verified ? 'checksum verified' : `does not verify: ${n.problem ?? 'unknown problem'}`;
      return `backup ${url}: newest ${formatAge(n.ageSeconds)} old${stale}, ${check}; ${versions} version(s)`;
    }
  }
}
