/** The fleet report as a terminal table, Markdown or JSON: one report, three renderings. */
import { describeTarget } from '../audit/reporters/common.js';
import { renderFleetHtml } from './html.js';
import type { FleetFinding, FleetReport, RuleGroup } from './report.js';
import { summaryLine, verdictText } from './words.js';

export { summaryLine } from './words.js';

export const FLEET_FORMATS = ['table', 'md', 'json', 'html'] as const;
export type FleetFormat = (typeof FLEET_FORMATS)[number];

export function renderFleetReport(r: FleetReport, format: FleetFormat): string {
  switch (format) {
    case 'table':
      return table(r);
    case 'md':
      return markdown(r);
    case 'json':
      return `${JSON.stringify(r, null, 2)}\n`;
    case 'html':
      return renderFleetHtml(r);
  }
}

const labelText = (l: Record<string, string>) =>
  Object.entries(l)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

function pad(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const clusterList = (g: RuleGroup) => g.clusters.map((c) => `${c.name} (${c.findings})`).join(', ');

function deltaLines(r: FleetReport, bullet: (f: FleetFinding) => string): string[] {
  const d = r.delta;
  if (!d) return [];
  const out = [`Since ${d.baseline}: ${d.added.length} new, ${d.fixed.length} fixed.`];
  for (const f of d.added) out.push(`  new    ${bullet(f)}`);
  for (const f of d.fixed) out.push(`  fixed  ${bullet(f)}`);
  if (d.incomparable.length > 0)
    out.push(`  not compared (read in only one run): ${d.incomparable.join(', ')}`);
  return out;
}

function infoLine(r: FleetReport): string[] {
  const info = r.rules.filter((g) => g.severity === 'info');
  return info.length > 0
    ? ['', `${info.length} informational rule(s) more: in the JSON report and each cluster's own report.`]
    : [];
}

const findingLine = (f: FleetFinding) => `${f.cluster}: ${f.ruleId} ${f.message}`;

function table(r: FleetReport): string {
  const out = [
    `Fleet ${r.fleet}${r.target ? `, target ${describeTarget(r.target)}` : ''}: ${summaryLine(r)}`,
    '',
    ...pad([
      ['CLUSTER', 'LABELS', 'VERDICT', 'REPORT'],
      ...r.clusters.map((c) => [c.name, labelText(c.labels) || '-', verdictText(c), c.reportFile ?? '-']),
    ]),
  ];
  const shown = r.rules.filter((g) => g.severity !== 'info');
  if (shown.length > 0) {
    out.push('', 'Across the fleet (most severe first, then by clusters affected):');
    for (const g of shown) {
      out.push(
        `  ${g.severity.toUpperCase().padEnd(7)} ${g.ruleId}: ${g.title}`,
        `          ${g.clusters.length} cluster(s): ${clusterList(g)}`,
        `          fix (as ${g.remediationFrom} reports it): ${g.remediation}`,
      );
    }
  }
  out.push(...infoLine(r));
  const d = deltaLines(r, findingLine);
  if (d.length > 0) out.push('', ...d);
  return `${out.join('\n')}\n`;
}

const md = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function markdown(r: FleetReport): string {
  const out = [
    `# Fleet audit: ${md(r.fleet)}`,
    '',
    `${summaryLine(r)}${r.target ? `; target ${describeTarget(r.target)}` : ''}.`,
    '',
    '| cluster | labels | verdict | report |',
    '|---|---|---|---|',
    ...r.clusters.map(
      (c) =>
        `| ${c.name} | ${md(labelText(c.labels)) || '-'} | ${md(verdictText(c))} | ${c.reportFile ? `\`${c.reportFile}\`` : '-'} |`,
    ),
  ];
  const shown = r.rules.filter((g) => g.severity !== 'info');
  if (shown.length > 0) {
    out.push('', '## Across the fleet', '');
    for (const g of shown) {
      out.push(
        `### ${g.severity}: \`${g.ruleId}\` — ${md(g.title)}`,
        '',
        `${g.clusters.length} cluster(s), ${g.findings} finding(s): ${clusterList(g)}.`,
        '',
        `Fix (as ${g.remediationFrom} reports it): ${g.remediation}`,
        '',
      );
    }
  }
  out.push(...infoLine(r));
  const d = deltaLines(r, (f) => `\`${f.cluster}\`: \`${f.ruleId}\` ${md(f.message)}`);
  if (d.length > 0) out.push('## Changes', '', ...d.map((l) => `- ${l.trim()}`));
  return `${out.join('\n').trimEnd()}\n`;
}
