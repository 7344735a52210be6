/** Human renderings of the backup, restore and status reports (JSON is the reports themselves). */

import { formatAge } from '../util/format-age.js';
import type { BackupReport } from './backup.js';
import type { RestoreReport } from './restore.js';
import type { KindRestoreOutcome } from './restore-kind/run.js';
import type { MgmtStatus } from './status.js';

export function formatSize(bytes: number): string {
  if (bytes < 10_240) return `${bytes} B`;
  if (bytes < 10_485_760) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

export function renderBackup(r: BackupReport, now: Date): string {
  const age = Math.max(0, Math.round((now.getTime() - Date.parse(r.createdAt)) / 1000));
  const out = [
    `backup ${r.url} version ${r.versionId}`,
    `  created    ${r.createdAt} (${formatAge(age)} ago)`,
    `  size       ${formatSize(r.size)} encrypted, sha256 ${r.sha256}, ${r.verified ? 'read back and verified' : 'NOT verified'}`,
    `  objects    ${r.objects}: ${counts(r.counts)}`,
    `  clusters   ${r.clusters.length}: ${r.clusters.join(', ') || '(none)'}`,
    `  providers  ${r.providers.map((p) => `${p.type} ${p.providerName} ${p.version}`).join(', ') || '(no clusterctl inventory)'}`,
    `  retention  ${r.retention.kept.length} version(s) kept, ${r.retention.deleted.length} deleted${r.retention.deleted.length ? ` (${r.retention.deleted.join(', ')})` : ''}`,
  ];
  for (const l of r.leftBehind) out.push(`  not in the backup (nothing leads to it from a Cluster): ${l}`);
  return `${out.join('\n')}\n`;
}

export function renderRestore(r: RestoreReport): string {
  const out = [
    `restored ${r.url} version ${r.versionId}`,
    `  created    ${r.created} object(s)${r.namespaces.length ? `, namespace(s) ${r.namespaces.join(', ')}` : ''}`,
    `  statuses   ${r.statuses} put back through the status subresource`,
    `  verify     ${r.verify.ok ? 'every Cluster Ready, every Machine with its nodeRef and providerID, statuses as backed up' : 'FAILED'}`,
  ];
  for (const p of r.verify.problems) out.push(`    ${p}`);
  for (const d of r.droppedOwners) out.push(`  owner not in the backup, reference dropped: ${d}`);
  return `${out.join('\n')}\n`;
}

export function renderKindRestore(out: Extract<KindRestoreOutcome, { kind: 'restored' }>): string {
  return (
    `${renderRestore(out.report)}kind cluster ${out.kindName} is the management cluster now; kubeconfig ${out.kubeconfig}` +
    `${out.resumed ? ' (the restore an earlier run started was completed)' : ''}` +
    `${out.skipped.length > 0 ? ` (${out.skipped.length} stage(s) were done by an earlier run)` : ''}\n`
  );
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

export function renderStatus(s: MgmtStatus, maxAgeSeconds: number | undefined): string {
  const out: string[] = [];
  if (s.clusters) {
    out.push(`management cluster ${s.server}`, '');
    out.push(
      ...table([
        ['CLUSTER', 'READY', 'PAUSED', 'MACHINES', 'NODEREFS'],
        ...s.clusters.map((c) => [
          `${c.namespace}/${c.name}`,
          c.ready ? 'yes' : 'no',
          c.paused ? 'yes' : c.pausedObjects.length ? `mid-migration (${c.pausedObjects.join(', ')})` : 'no',
          String(c.machines),
          `${c.machinesWithNodeRef}/${c.machines}`,
        ]),
      ]),
    );
    out.push('');
    out.push(
      ...(s.providers?.length
        ? table([
            ['PROVIDER', 'TYPE', 'VERSION', 'NAMESPACE'],
            ...s.providers.map((p) => [p.providerName, p.type, p.version, p.namespace]),
          ])
        : ['no clusterctl provider inventory']),
    );
  }
  if (s.backup) {
    if (out.length) out.push('');
    const n = s.backup.newest;
    if (!n) out.push(`backup ${s.backup.url}: none`);
    else {
      out.push(
        `backup ${s.backup.url}: ${s.backup.versions} version(s); newest ${n.versionId}, ${formatAge(n.ageSeconds)} old${maxAgeSeconds !== undefined && n.ageSeconds > maxAgeSeconds ? ` (older than --max-age ${formatAge(maxAgeSeconds)})` : ''}, ${formatSize(n.size)}`,
        `  verifies: ${n.verified ? `yes (${n.depth === 'full' ? 'checksum, decryption and manifest' : 'checksum; pass --identity to also decrypt and check the manifest'})` : `NO: ${n.problem}`}`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}
