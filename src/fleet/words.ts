/** The words every rendering of the fleet report uses for a verdict and for the whole fleet. */
import type { ClusterRow, FleetReport, Verdict } from './report.js';

export function verdictText(c: ClusterRow): string {
  const v: Verdict = c.verdict;
  switch (v) {
    case 'ready':
      return 'ready';
    case 'blocked':
      return `${c.counts.blocker} blocker(s)${c.counts.risk ? `, ${c.counts.risk} risk(s)` : ''}`;
    case 'not-observed':
      return `not observed: ${c.notObserved.length} rule(s) could not read their inputs`;
    case 'unreachable':
      return `unreachable: ${c.reason ?? ''}`;
    case 'unreadable':
      return `unreadable: ${c.reason ?? ''}`;
    case 'error':
      return 'a rule failed (see its report)';
  }
}

export function summaryLine(r: FleetReport): string {
  const t = r.totals;
  const parts = [`${t.ready} of ${t.clusters} cluster(s) ready`];
  if (t.blocked) parts.push(`${t.blocked} blocked`);
  if (t['not-observed']) parts.push(`${t['not-observed']} not observed`);
  if (t.unreachable) parts.push(`${t.unreachable} unreachable`);
  if (t.unreadable) parts.push(`${t.unreadable} unreadable`);
  if (t.error) parts.push(`${t.error} with a failed rule`);
  return parts.join(', ');
}
