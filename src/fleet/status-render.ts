/**
 * `ferry fleet status` as a table (a line per cluster with its run, a line under it with its
 * versions and where it came from, and one with its last run's probe figures when a run recorded
 * them; then the management clusters' backups), as JSON or as one offline HTML page, and the exit
 * code: 1 when a run, a journal, a listing or a backup needs someone to look at it.
 */
import { backupNeedsAttention, describeBackup } from './backup-age.js';
import { describeProbeFigures } from './probes.js';
import { type Adoption, describeRunState, type FleetStatus, needsAttention } from './status.js';
import { renderFleetStatusHtml } from './status-html.js';
import { describeVersions } from './versions.js';

function describeAdoption(a: Adoption): string {
  return a.kind === 'capi'
    ? `Cluster API: ${a.namespace}/${a.cluster} on management cluster ${a.management}`
    : 'listed in the fleet file';
}

export function renderFleetStatus(
  s: FleetStatus,
  format: 'table' | 'json' | 'html',
  o: { fleetFile: string; maxAgeSeconds: number | undefined },
): string {
  if (format === 'html') return renderFleetStatusHtml(s, o);
  if (format === 'json')
    return `${JSON.stringify(
      {
        kind: 'FerryFleetStatus',
        fleet: o.fleetFile,
        generatedAt: s.generatedAt,
        ...(o.maxAgeSeconds !== undefined && { maxAgeSeconds: o.maxAgeSeconds }),
        clusters: s.clusters,
        management: s.management.map((m) => ({
          ...m,
          needsAttention: backupNeedsAttention(m.backup, o.maxAgeSeconds),
        })),
      },
      null,
      2,
    )}\n`;
  const width = Math.max(
    10,
    ...s.clusters.map((r) => r.name.length),
    ...s.management.map((m) => m.name.length),
  );
  const out = [`${'CLUSTER'.padEnd(width)}  STATE`];
  for (const r of s.clusters) {
    out.push(`${r.name.padEnd(width)}  ${describeRunState(r.state)}`);
    out.push(`${''.padEnd(width)}  ${describeVersions(r.versions)}; ${describeAdoption(r.adoption)}`);
    if (r.lastProbes) out.push(`${''.padEnd(width)}  ${describeProbeFigures(r.lastProbes)}`);
  }
  if (s.management.length > 0) {
    out.push('', `${'MANAGEMENT'.padEnd(width)}  BACKUP`);
    for (const m of s.management)
      out.push(`${m.name.padEnd(width)}  ${describeBackup(m.backup, o.maxAgeSeconds)}`);
  }
  return `${out.join('\n')}\n`;
}

export function fleetStatusExit(s: FleetStatus, maxAgeSeconds: number | undefined): 0 | 1 {
  const attention =
    s.clusters.some((r) => needsAttention(r.state)) ||
    s.management.some((m) => backupNeedsAttention(m.backup, maxAgeSeconds));
  return attention ? 1 : 0;
}
