/**
 * The fleet report as one offline HTML page: the verdict of each cluster, a rule × cluster matrix
 * (each cell the number of findings, linking to that cluster's section) and a section per cluster
 * listing its findings by rule. A filter box narrows rules and clusters by id or name (also from
 * `?filter=`). Cluster text only ever goes through escapeHtml; the one inline script writes no
 * markup and is admitted by its hash.
 */
import { createHash } from 'node:crypto';
import { escapeHtml as e } from '../util/escape-html.js';
import { FLEET_PAGE_CSS } from './html-style.js';
import type { ClusterRow, FleetFinding, FleetReport } from './report.js';
import { verdictText } from './words.js';

const SCRIPT = `(function () {
  var input = document.getElementById('filter');
  var status = document.getElementById('filter-status');
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr[data-rule]'));
  var cols = Array.prototype.slice.call(document.querySelectorAll('[data-col]'));
  var sections = Array.prototype.slice.call(document.querySelectorAll('section[data-cluster]'));
  function has(v, q) { return (v || '').toLowerCase().indexOf(q) >= 0; }
  function apply() {
    var q = input.value.trim().toLowerCase();
    var clusterHit = {}, anyCluster = false, shownRules = 0, shownClusters = 0;
    sections.forEach(function (s) {
      var hit = !!q && has(s.getAttribute('data-cluster'), q);
      if (hit) { clusterHit[s.getAttribute('data-cluster')] = true; anyCluster = true; }
    });
    rows.forEach(function (r) {
      var show = !q || anyCluster || has(r.getAttribute('data-rule'), q);
      if (show && anyCluster) {
        show = r.getAttribute('data-clusters').split(' ').some(function (c) { return clusterHit[c]; });
      }
      r.hidden = !show;
      if (show) shownRules++;
    });
    var ruleShown = {};
    rows.forEach(function (r) { if (!r.hidden) ruleShown[r.getAttribute('data-rule')] = true; });
    sections.forEach(function (s) {
      var c = s.getAttribute('data-cluster');
      var show = !q || (anyCluster ? !!clusterHit[c] : s.querySelector('li[data-rule]') !== null &&
        Array.prototype.some.call(s.querySelectorAll('li[data-rule]'), function (li) { return ruleShown[li.getAttribute('data-rule')]; }));
      s.hidden = !show;
      s.querySelectorAll('li[data-rule]').forEach(function (li) {
        li.hidden = !!q && !anyCluster && !ruleShown[li.getAttribute('data-rule')];
      });
      if (show) shownClusters++;
    });
    cols.forEach(function (c) { c.hidden = anyCluster && !clusterHit[c.getAttribute('data-col')]; });
    status.textContent = q
      ? shownRules + ' of ' + rows.length + ' rules, ' + shownClusters + ' of ' + sections.length + ' clusters match'
      : rows.length + ' rules, ' + sections.length + ' clusters';
    document.body.setAttribute('data-shown-rules', String(shownRules));
    document.body.setAttribute('data-shown-clusters', String(shownClusters));
  }
  var initial = new URLSearchParams(location.search).get('filter');
  if (initial) input.value = initial;
  input.addEventListener('input', apply);
  apply();
  document.body.setAttribute('data-script', 'ran');
})();`;

const SCRIPT_HASH = `'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;

const CSS = `${FLEET_PAGE_CSS}
.v-ready{color:#1b5e20;font-weight:600}.v-blocked,.v-error{color:#b71c1c;font-weight:600}
.v-not-observed,.v-unreachable,.v-unreadable{color:#8a5a00;font-weight:600}
.sev{font-weight:bold;font-size:.78em;padding:.1em .4em;border-radius:3px;color:#fff;background:#888}
.sev.blocker{background:#c62828}.sev.risk{background:#ef8f00}.sev.info{background:#1565c0}
.matrix td.c{text-align:center;min-width:3em}.matrix td.unknown{color:#8a5a00;background:#f3f0e6}
td:first-child{white-space:nowrap}.matrix td.c a{text-decoration:none;font-weight:600}
.matrix td.hit.blocker{background:#fde4e4}.matrix td.hit.risk{background:#fff1dc}.matrix td.hit.info{background:#e3eefb}
.matrix th.col{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
.filterbar{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ccd;z-index:1}
#filter{font:inherit;width:28em;max-width:70%;padding:.3em .5em}#filter-status{color:#555;margin-left:.8em}
section.cluster li{margin:.2em 0}code{font-size:.9em}
`;

const verdictCell = (c: ClusterRow) => `<span class="v-${c.verdict}">${e(verdictText(c))}</span>`;
const anchor = (cluster: string) => `c-${cluster}`;

function clusterSection(c: ClusterRow, findings: readonly FleetFinding[]): string {
  const mine = findings.filter((f) => f.cluster === c.name);
  const byRule = new Map<string, FleetFinding[]>();
  for (const f of mine) byRule.set(f.ruleId, [...(byRule.get(f.ruleId) ?? []), f]);
  const items = [...byRule.entries()].map(
    ([rule, fs]) =>
      `<li data-rule="${e(rule)}" id="${e(`${anchor(c.name)}-${rule}`)}"><span class="sev ${fs[0]!.severity}">${fs[0]!.severity}</span> <code>${e(rule)}</code> (${fs.length}): ${e(fs[0]!.message)}${fs.length > 1 ? ` <span class="meta">and ${fs.length - 1} more</span>` : ''}</li>`,
  );
  return [
    `<section class="cluster" data-cluster="${e(c.name)}" id="${e(anchor(c.name))}">`,
    `<h3>${e(c.name)} — ${verdictCell(c)}</h3>`,
    `<p class="meta">${e(c.source)}${c.reportFile ? `; full report: <code>${e(c.reportFile)}</code>` : ''}${c.reason ? `; ${e(c.reason)}` : ''}</p>`,
    items.length > 0 ? `<ul>${items.join('')}</ul>` : '<p>No findings.</p>',
    '</section>',
  ].join('\n');
}

export function renderFleetHtml(r: FleetReport): string {
  const t = r.totals;
  const summary = `${t.ready} of ${t.clusters} cluster(s) ready`;
  const clusterRows = r.clusters.map(
    (c) =>
      `<tr><td><a href="#${e(anchor(c.name))}">${e(c.name)}</a></td><td>${e(
        Object.entries(c.labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(', '),
      )}</td><td>${verdictCell(c)}</td></tr>`,
  );
  const head = r.clusters.map((c) => `<th class="col" data-col="${e(c.name)}">${e(c.name)}</th>`).join('');
  const matrixRows = r.rules.map((g) => {
    const cells = r.clusters.map((c) => {
      // A cluster that was not audited has no findings, not zero: say so.
      if (c.reportFile === undefined || c.verdict === 'error')
        return `<td class="c unknown" data-col="${e(c.name)}" title="not audited">?</td>`;
      const n = g.clusters.find((x) => x.name === c.name)?.findings ?? 0;
      return n === 0
        ? `<td class="c" data-col="${e(c.name)}"></td>`
        : `<td class="c hit ${g.severity}" data-col="${e(c.name)}"><a href="#${e(`${anchor(c.name)}-${g.ruleId}`)}">${n}</a></td>`;
    });
    return `<tr data-rule="${e(g.ruleId)}" data-clusters="${e(g.clusters.map((c) => c.name).join(' '))}"><td><span class="sev ${g.severity}">${g.severity}</span> <code>${e(g.ruleId)}</code><br><span class="meta">${e(g.title)}</span></td>${cells.join('')}</tr>`;
  });
  const delta = r.delta
    ? `<h2>Since ${e(r.delta.baseline)}</h2><p>${r.delta.added.length} new, ${r.delta.fixed.length} fixed${r.delta.incomparable.length > 0 ? `; not compared (read in only one run): ${e(r.delta.incomparable.join(', '))}` : ''}.</p>`
    : '';
  return [
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src ${SCRIPT_HASH}">`,
    `<title>Fleet audit: ${e(r.fleet)}</title><style>${CSS}</style></head><body>`,
    `<h1>Fleet audit: ${e(r.fleet)}</h1>`,
    `<p class="meta">${e(summary)}; generated ${e(r.generatedAt)}; not ready at --fail-on ${e(r.failOn)}</p>`,
    '<h2>Clusters</h2>',
    `<table><tr><th>cluster</th><th>labels</th><th>verdict</th></tr>${clusterRows.join('')}</table>`,
    delta,
    '<div class="filterbar"><input id="filter" type="search" placeholder="filter by rule id or cluster name" aria-label="filter"><span id="filter-status"></span></div>',
    '<h2>Rules × clusters</h2>',
    r.rules.length > 0
      ? `<table class="matrix"><tr><th>rule</th>${head}</tr>${matrixRows.join('')}</table>`
      : '<p>No findings in any cluster.</p>',
    '<h2>Each cluster</h2>',
    ...r.clusters.map((c) => clusterSection(c, r.findings)),
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
