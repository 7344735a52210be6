/**
 * `ferry fleet status` as one offline HTML page in the fleet report's style: what needs someone
 * first (stopped or failed runs, journals not read, listings refused, backups stale or not read),
 * then a row per cluster (its run with a progress bar, its versions, where it came from, its last
 * run's probe figures) and the management clusters' backups. No script: nothing to filter in a
 * page that is read top down. Cluster text only ever goes through escapeHtml.
 */
import { escapeHtml as e } from '../util/escape-html.js';
import { formatAge } from '../util/format-age.js';
import { backupNeedsAttention, describeBackup } from './backup-age.js';
import { FLEET_PAGE_CSS } from './html-style.js';
import { describeProbeFigure, type ProbeFigures } from './probes.js';
import {
  type Adoption,
  type ClusterStatusRow,
  describeRunState,
  type FleetStatus,
  needsAttention,
  type RunState,
} from './status.js';
import { describeVersions } from './versions.js';

const CSS = `${FLEET_PAGE_CSS}
.state{font-weight:bold;font-size:.8em;padding:.1em .45em;border-radius:3px;color:#fff;background:#78808a;white-space:nowrap}
.state.completed{background:#2e7d32}.state.in-progress{background:#1565c0}
.state.stopped,.state.failed{background:#c62828}.state.unreadable,.state.unlisted{background:#a86a00}
.bar{width:9em;height:.55em;background:#e4e7ec;border-radius:3px;margin:.3em 0 .1em}
.bar span{display:block;height:100%;border-radius:3px;background:#1565c0}.bar.completed span{background:#2e7d32}
.bar.stopped span,.bar.failed span{background:#c62828}
tr.attention td:first-child{border-left:4px solid #c62828}
.attention-box{border:1px solid #e0b4b4;background:#fdf1f1;padding:.4em 1em;border-radius:4px}.attention-box h2{margin-top:.3em}
.ok-box{border:1px solid #b9d8bb;background:#eef7ee;padding:.4em 1em;border-radius:4px}
.probe.bad{color:#b71c1c}.backup.bad{color:#b71c1c;font-weight:600}
ul.probes{margin:0;padding-left:1.1em}td.detail{max-width:34em}
`;

const LABEL: Record<RunState['kind'], string> = {
  'no-plan': 'no plan',
  'not-started': 'not started',
  'in-progress': 'in progress',
  stopped: 'stopped',
  failed: 'failed',
  completed: 'completed',
  unreadable: 'journal not read',
  unlisted: 'not listed',
};

const anchor = (cluster: string) => `c-${cluster}`;

/** Steps finished out of the plan's, where the journal says it. */
function progress(s: RunState): { done: number; steps: number } | undefined {
  switch (s.kind) {
    case 'not-started':
      return { done: 0, steps: s.steps };
    case 'in-progress':
    case 'stopped':
    case 'failed':
      return { done: s.done, steps: s.steps };
    case 'completed':
      return { done: s.steps, steps: s.steps };
    case 'no-plan':
    case 'unreadable':
    case 'unlisted':
      return undefined;
  }
}

function progressCell(s: RunState): string {
  const p = progress(s);
  if (!p) return '<td></td>';
  const pct = p.steps === 0 ? 100 : Math.round((100 * p.done) / p.steps);
  return `<td><div class="bar ${s.kind}" title="${pct}%"><span style="width:${pct}%"></span></div><span class="meta">${p.done}/${p.steps} steps</span></td>`;
}

function origin(a: Adoption): string {
  return a.kind === 'capi'
    ? `Cluster API <code>${e(`${a.namespace}/${a.cluster}`)}</code> on ${e(a.management)}`
    : 'fleet file';
}

function probesCell(p: ProbeFigures | undefined): string {
  if (!p) return '<td class="meta">none recorded</td>';
  const items = p.probes.map(
    (f) => `<li class="probe${f.failures > 0 ? ' bad' : ''}">${e(describeProbeFigure(f))}</li>`,
  );
  if (p.unreadable > 0) items.push(`<li class="probe bad">${p.unreadable} probe record(s) not readable</li>`);
  return `<td><span class="meta">run started ${e(p.startedAt)}</span><ul class="probes">${items.join('')}</ul></td>`;
}

function clusterRow(r: ClusterStatusRow): string {
  const labels = Object.entries(r.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return [
    `<tr id="${e(anchor(r.name))}" data-state="${r.state.kind}"${needsAttention(r.state) ? ' class="attention"' : ''}>`,
    `<td><strong>${e(r.name)}</strong>${labels ? `<br><span class="meta">${e(labels)}</span>` : ''}</td>`,
    `<td><span class="state ${r.state.kind}">${LABEL[r.state.kind]}</span></td>`,
    progressCell(r.state),
    `<td class="detail">${e(describeRunState(r.state))}</td>`,
    `<td>${e(describeVersions(r.versions))}</td>`,
    `<td>${origin(r.adoption)}</td>`,
    probesCell(r.lastProbes),
    '</tr>',
  ].join('');
}

export function renderFleetStatusHtml(
  s: FleetStatus,
  o: { fleetFile: string; maxAgeSeconds: number | undefined },
): string {
  const counts = new Map<string, number>();
  for (const r of s.clusters) counts.set(LABEL[r.state.kind], (counts.get(LABEL[r.state.kind]) ?? 0) + 1);
  const tally = [...counts].map(([label, n]) => `${n} ${label}`).join(', ');
  const attention = [
    ...s.clusters
      .filter((r) => needsAttention(r.state))
      .map(
        (r) => `<li><a href="#${e(anchor(r.name))}">${e(r.name)}</a>: ${e(describeRunState(r.state))}</li>`,
      ),
    ...s.management
      .filter((m) => backupNeedsAttention(m.backup, o.maxAgeSeconds))
      .map(
        (m) => `<li>management cluster ${e(m.name)}: ${e(describeBackup(m.backup, o.maxAgeSeconds))}</li>`,
      ),
  ];
  const management = s.management.map((m) => {
    const bad = backupNeedsAttention(m.backup, o.maxAgeSeconds);
    return `<tr${bad ? ' class="attention"' : ''}><td><strong>${e(m.name)}</strong></td><td class="backup${bad ? ' bad' : ''}">${e(describeBackup(m.backup, o.maxAgeSeconds))}</td></tr>`;
  });
  return [
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>Fleet status: ${e(o.fleetFile)}</title><style>${CSS}</style></head><body>`,
    `<h1>Fleet status: ${e(o.fleetFile)}</h1>`,
    `<p class="meta">${s.clusters.length} cluster(s): ${e(tally || 'none')}; read ${e(s.generatedAt)}${
      o.maxAgeSeconds !== undefined
        ? `; a backup older than ${e(formatAge(o.maxAgeSeconds))} needs attention`
        : ''
    }</p>`,
    attention.length > 0
      ? `<div class="attention-box" id="attention"><h2>Needs attention (${attention.length})</h2><ul>${attention.join('')}</ul></div>`
      : '<p class="ok-box" id="attention">Nothing needs attention.</p>',
    '<h2>Clusters</h2>',
    '<table class="clusters"><tr><th>cluster</th><th>state</th><th>progress</th><th>run</th><th>versions</th><th>from</th><th>last probes</th></tr>',
    ...s.clusters.map(clusterRow),
    '</table>',
    ...(management.length > 0
      ? [
          '<h2>Management clusters</h2>',
          '<table><tr><th>management</th><th>backup</th></tr>',
          ...management,
          '</table>',
        ]
      : []),
    '</body></html>',
    '',
  ].join('\n');
}
