/**
 * One self-contained HTML file: inline CSS, one inline script (html-script.ts, admitted by its hash),
 * no external resource, and a Content-Security-Policy that forbids fetching anything, so the report
 * can be mailed or attached to a ticket and opened offline. Every piece of cluster text is escaped.
 *
 * Readable at a glance at 17,000 findings: a summary (counts by severity, a bar per family), a table
 * of contents, then one collapsible section per rule (group.ts) with a stable anchor, its rule id.
 * Every affected object is in the page, so the filter finds any of them; the first ones of a rule
 * are shown and the rest folded.
 */

import { escapeHtml as h } from '../../util/escape-html.js';
import { ruleDocsUri } from '../docs-link.js';
import type { AuditReport } from '../engine.js';
import {
  describeEvidence,
  describeSubject,
  type Finding,
  SEVERITIES,
  type Severity,
  severityRank,
} from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import {
  describeTarget,
  plural,
  resolvedHeading,
  SEVERITY_LABEL,
  skipReason,
  summaryLine,
  unobservedHeading,
  unobservedLines,
} from './common.js';
import {
  bySeverity,
  detailed,
  groupByRule,
  namespaceCount,
  namespaceLabel,
  type RuleGroup,
  severityMix,
} from './group.js';
import { SCRIPT, SCRIPT_HASH } from './html-script.js';

const MAX_EVIDENCE = 50;

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#1b1f24}
h1{font-size:1.45em;margin:.2em 0}h2{margin-top:1.6em;border-bottom:1px solid #ccd;font-size:1.2em}
[hidden]{display:none!important}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccd;padding:.25em .6em;text-align:left;vertical-align:top}
.meta{color:#555;margin:.2em 0 1em}
.cards{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0}
.card{border:1px solid #ccd;border-radius:6px;padding:.4em .9em;min-width:7em;background:#fafbfc}
.card b{display:block;font-size:1.7em;line-height:1.2}.card span{color:#555;font-size:.85em}
.card.blocker{border-top:5px solid #c62828}.card.risk{border-top:5px solid #ef8f00}.card.info{border-top:5px solid #1565c0}
.verdict{font-size:1.1em;font-weight:600;margin:.4em 0}
.verdict.blocker{color:#b71c1c}.largest{margin:.2em 0 .6em}.verdict.ok{color:#1b5e20}
.families{display:grid;grid-template-columns:9em 1fr 15em;gap:.2em .6em;align-items:center;margin:.5em 0 1em;font-size:.9em}
.bar{display:flex;height:1em;background:#eef0f3;border-radius:3px;overflow:hidden}
.bar i{display:block;height:100%;min-width:2px}
i.blocker{background:#c62828}i.risk{background:#ef8f00}i.info{background:#1565c0}
.legend i{display:inline-block;width:.8em;height:.8em;margin:0 .25em 0 .8em;vertical-align:-.05em}
#toc{columns:2 24em;column-gap:2em;font-size:.9em}#toc h3{margin:.3em 0;font-size:1em;break-after:avoid}
#toc ul{margin:0 0 .6em;padding-left:1.2em}#toc li{break-inside:avoid}
.filterbar{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #ccd;z-index:1}
#filter{font:inherit;width:28em;max-width:70%;padding:.3em .5em}#filter-status{color:#555;margin-left:.8em}
details.rule{border-left:5px solid #888;margin:.6em 0;background:#f7f8fa}
details.rule>summary{cursor:pointer;padding:.4em .8em;font-weight:600}
details.rule>div{padding:0 1em .6em}
details.rule.blocker{border-color:#c62828}details.rule.risk{border-color:#ef8f00}details.rule.info{border-color:#1565c0}
.n{font-weight:normal;color:#555}
.sev{font-weight:bold;font-size:.78em;padding:.1em .4em;border-radius:3px;color:#fff;background:#888}
.sev.blocker{background:#c62828}.sev.risk{background:#ef8f00}.sev.info{background:#1565c0}
.f{border-top:1px solid #dde;padding:.3em 0}.ns{margin:.2em 0}.ns b{font-family:ui-monospace,monospace;font-size:.9em}
ul.objs{display:inline;margin:0;padding:0}ul.objs li{display:inline;list-style:none}
ul.objs li:not(:last-child)::after{content:", "}
details.more>summary{cursor:pointer;color:#555}
code,.fp{font-family:ui-monospace,monospace;font-size:.9em}.fp{color:#666}
ul{margin:.3em 0}.muted{color:#666}
`;

export function renderHtml(r: AuditReport, opts: { expand?: readonly string[] } = {}): string {
  const expand = opts.expand ?? [];
  const groups = groupByRule(r.findings, (f) => f, { expand });
  const body: string[] = [
    `<h1>ferry audit: ${h(r.snapshot.source)}</h1>`,
    `<p class="meta">Target: ${h(describeTarget(r.target))}. Generated ${h(r.generatedAt)} by ferry ${h(r.tool.version)}.</p>`,
    ...summary(r, groups),
    '<div class="filterbar"><input id="filter" type="search" placeholder="Filter by rule id, namespace or object name" aria-label="filter"><span id="filter-status"></span></div>',
    ...toc(groups),
  ];
  if (r.snapshot.unobserved.length) {
    body.push(`<section class="group" id="unobserved"><h2>${h(unobservedHeading(r))}</h2><ul>`);
    for (const l of unobservedLines(r)) body.push(`<li>${h(l)}</li>`);
    body.push('</ul></section>');
  }
  if (r.findings.length === 0)
    body.push(`<p>${r.counts.baselined ? 'No new findings.' : 'No findings.'}</p>`);
  for (const { severity, groups: list } of bySeverity(groups)) {
    const n = list.reduce((sum, g) => sum + g.total, 0);
    body.push(
      `<section class="group" id="sev-${severity}"><h2>${SEVERITY_LABEL[severity]}: ${plural(list.length, 'rule')}, ${plural(n, 'finding')}</h2>`,
    );
    for (const g of list) body.push(findingGroup(g));
    body.push('</section>');
  }
  if (r.kit) {
    body.push(`<section class="group" id="resolved"><h2>${h(resolvedHeading(r))}</h2>`);
    for (const w of r.kit.warnings) body.push(`<p class="muted">warning: ${h(w)}</p>`);
    if (r.resolved.length === 0) body.push('<p>None: no finding is one the kit fixes as it stands.</p>');
    for (const g of groupByRule(r.resolved, (f) => f, { expand }))
      body.push(
        otherGroup(
          g,
          'resolved',
          (f) => f,
          (f) => [
            ['kit file', (f.resolution?.files ?? []).map((p) => `<code>${h(p)}</code>`).join(', ')],
            ['what it does', h(f.resolution?.how ?? '')],
          ],
        ),
      );
    body.push('</section>');
  }
  if (r.suppressed.length) {
    body.push(`<section class="group" id="suppressed"><h2>Suppressed (${r.suppressed.length})</h2>`);
    for (const g of groupByRule(r.suppressed, (x) => x.finding, { expand }))
      body.push(
        otherGroup(
          g,
          'suppressed',
          (x) => x.finding,
          ({ by }) => [
            ['by', h(describeSuppression(by))],
            ['reason', h(by.reason)],
          ],
        ),
      );
    body.push('</section>');
  }
  if (r.expiredSuppressions.length) {
    body.push(`<h2>Expired suppressions (${r.expiredSuppressions.length})</h2><ul>`);
    for (const { suppression: s, wouldMatch } of r.expiredSuppressions)
      body.push(
        `<li>${h(describeSuppression(s))} <code>${h(s.rule)}</code> expired ${h(s.expires ?? '')}: ${wouldMatch} finding(s) back</li>`,
      );
    body.push('</ul>');
  }
  if (r.skipped.length) {
    body.push(
      `<h2>Skipped rules (${r.skipped.length})</h2>`,
      '<table><tr><th>rule</th><th>why</th><th>how to provide</th></tr>',
    );
    for (const s of r.skipped)
      body.push(
        `<tr><td><code>${h(s.ruleId)}</code></td><td>${h(skipReason(s))}</td><td>${h(s.howToProvide)}</td></tr>`,
      );
    body.push('</table>');
  }
  if (r.errors.length) {
    body.push(`<h2>Rule errors (${r.errors.length})</h2><ul>`);
    for (const e of r.errors) body.push(`<li><code>${h(e.ruleId)}</code>: ${h(e.message)}</li>`);
    body.push('</ul>');
  }
  body.push(`<p class="muted">${h(summaryLine(r))}</p>`);
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src ${SCRIPT_HASH}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>ferry audit: ${h(r.snapshot.source)}</title>`,
    `<style>${CSS}</style></head><body>`,
    ...body,
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** The first screen: the verdict, counts by severity, and a bar per rule family. */
function summary(r: AuditReport, groups: readonly RuleGroup<Finding>[]): string[] {
  const c = r.counts;
  const rulesOf = (s: Severity) => groups.filter((g) => g.severity === s).length;
  const verdict =
    c.blocker > 0
      ? `<p class="verdict blocker">Not ready: ${plural(c.blocker, 'blocker')} in ${plural(rulesOf('blocker'), 'rule')} must be fixed before the migration.</p>`
      : `<p class="verdict ok">No blockers${c.risk ? `; ${plural(c.risk, 'risk')} to review` : ''}.</p>`;
  const card = (cls: string, n: number, label: string, sub: string) =>
    `<div class="card ${cls}" data-count="${cls}"><b>${n.toLocaleString('en-US')}</b>${h(label)}<br><span>${h(sub)}</span></div>`;
  const cards = [
    ...SEVERITIES.map((s) => card(s, c[s], s === 'info' ? 'info' : `${s}s`, plural(rulesOf(s), 'rule'))),
    card('suppressed', c.suppressed, 'suppressed', 'accepted'),
    ...(r.kit ? [card('resolved', c.resolved, 'resolved', 'by the kit')] : []),
    ...(r.baseline ? [card('baselined', c.baselined, 'baselined', 'known')] : []),
    card('skipped', c.skipped, 'skipped rules', 'inputs missing'),
    card('passed', c.passed, 'passed rules', `of ${c.rules}`),
  ];
  const families = new Map<string, Record<Severity, number>>();
  for (const g of groups) {
    const f = families.get(g.family) ?? { blocker: 0, risk: 0, info: 0 };
    for (const s of SEVERITIES) f[s] += g.bySeverity[s];
    families.set(g.family, f);
  }
  const rows = [...families].sort(
    (a, b) => b[1].blocker - a[1].blocker || total(b[1]) - total(a[1]) || a[0].localeCompare(b[0]),
  );
  const max = Math.max(1, ...rows.map(([, f]) => total(f)));
  const bars = rows.map(([family, f]) => {
    const segs = SEVERITIES.filter((s) => f[s] > 0)
      .map(
        (s) => `<i class="${s}" style="width:${((100 * f[s]) / max).toFixed(2)}%" title="${f[s]} ${s}"></i>`,
      )
      .join('');
    const said = SEVERITIES.filter((s) => f[s] > 0)
      .map((s) => `${f[s].toLocaleString('en-US')} ${s}`)
      .join(', ');
    return `<span>${h(family)}</span><div class="bar" data-family="${h(family)}">${segs}</div><span class="n">${h(said)}</span>`;
  });
  // The rules most findings come from, so the size of the report is explained at once.
  const largest = [...groups]
    .sort((a, b) => b.total - a.total || severityRank(a.severity) - severityRank(b.severity))
    .slice(0, 3)
    .filter((g) => g.total > 1)
    .map(
      (g) =>
        `<a href="#${h(g.ruleId)}"><code>${h(g.ruleId)}</code></a> <span class="sev ${g.severity}">${SEVERITY_LABEL[g.severity]}</span> ${g.total.toLocaleString('en-US')}`,
    );
  return [
    '<section id="summary">',
    verdict,
    ...(largest.length ? [`<p class="largest">Most findings: ${largest.join(' · ')}</p>`] : []),
    `<div class="cards">${cards.join('')}</div>`,
    ...(rows.length
      ? [
          `<h2>Findings by family <span class="legend n">${SEVERITIES.map((s) => `<i class="${s}"></i>${s}`).join('')}</span></h2>`,
          `<div class="families">${bars.join('')}</div>`,
        ]
      : []),
    '</section>',
  ];
}

function total(f: Record<Severity, number>): number {
  return f.blocker + f.risk + f.info;
}

function toc(groups: readonly RuleGroup<Finding>[]): string[] {
  if (!groups.length) return [];
  const out = ['<h2>Contents</h2><nav id="toc">'];
  for (const { severity, groups: list } of bySeverity(groups)) {
    out.push(`<h3>${SEVERITY_LABEL[severity]}</h3><ul>`);
    for (const g of list)
      out.push(
        `<li data-rule="${h(g.ruleId)}"><a href="#${h(g.ruleId)}"><code>${h(g.ruleId)}</code></a> ${h(g.title)} <span class="n">(${g.total.toLocaleString('en-US')})</span></li>`,
      );
    out.push('</ul>');
  }
  out.push('</nav>');
  return out;
}

function heading(g: RuleGroup<unknown>): string {
  const mix = severityMix(g);
  const ns = g.namespaces > 1 ? ` in ${g.namespaces.toLocaleString('en-US')} namespaces` : '';
  return `<summary><span class="sev ${g.severity}">${SEVERITY_LABEL[g.severity]}</span> <code>${h(g.ruleId)}</code> ${h(g.title)} <span class="n">· ${plural(g.total, 'finding')}${ns}${mix ? `: ${mix}` : ''}</span></summary>`;
}

function docsLink(g: RuleGroup<unknown>): string {
  return g.docs ? ` <a class="muted" href="${h(ruleDocsUri(g.ruleId, g.docs))}">${h(g.docs)}</a>` : '';
}

/** A reported rule: anchored by its id, blockers open, with the fix once and every object. */
function findingGroup(g: RuleGroup<Finding>): string {
  const open = g.severity === 'blocker' ? ' open data-open' : '';
  const out = [
    `<details class="rule ${g.severity}" id="${h(g.ruleId)}" data-rule="${h(g.ruleId)}"${open}>`,
    heading(g),
    '<div>',
  ];
  if (detailed(g)) {
    const fixOnce = g.total > 1 && g.fix.same;
    if (fixOnce) out.push(`<p><b>Fix (each):</b> ${h(g.fix.text)}${docsLink(g)}</p>`);
    else out.push(`<p>${docsLink(g).trim()}</p>`);
    for (const f of g.items) out.push(finding(f, !fixOnce));
  } else {
    out.push(
      `<p>${g.message.same ? '' : '<i>e.g.</i> '}${h(g.message.text)}</p>`,
      `<p><b>Fix${g.fix.same ? '' : `, e.g. for ${h(describeSubject(g.items[0]!.subject))}`}:</b> ${h(g.fix.text)}${docsLink(g)}</p>`,
    );
    if (g.artifacts.length)
      out.push(`<p>Kit: ${g.artifacts.map((a) => `<code>${h(a)}</code>`).join(', ')}</p>`);
    for (const gap of g.kitGaps) out.push(`<p class="muted">Not resolved by the kit: ${h(gap)}</p>`);
    out.push(...objects(g, (f) => f));
  }
  out.push('</div></details>');
  return out.join('\n');
}

/** A rule's resolved or suppressed findings: a table when few, else what did it once and the objects. */
function otherGroup<T>(
  g: RuleGroup<T>,
  section: 'resolved' | 'suppressed',
  findingOf: (item: T) => Finding,
  why: (item: T) => [string, string][],
): string {
  const out = [
    `<details class="rule ${g.severity}" id="${section}:${h(g.ruleId)}" data-rule="${h(g.ruleId)}" open data-open>`,
    heading(g),
    '<div>',
  ];
  if (detailed(g)) {
    const cols = why(g.items[0]!).map(([k]) => `<th>${h(k)}</th>`);
    out.push(`<table><tr><th>subject</th><th>fingerprint</th>${cols.join('')}</tr>`);
    for (const item of g.items) {
      const f = findingOf(item);
      out.push(
        `<tr class="${section}" data-obj data-ns="${h(f.subject.namespace ?? '')}" data-name="${h(f.subject.name)}"><td>${h(describeSubject(f.subject))}</td><td class="fp" data-fingerprint="${h(f.fingerprint)}">${h(f.fingerprint)}</td>${why(
          item,
        )
          .map(([, v]) => `<td>${v}</td>`)
          .join('')}</tr>`,
      );
    }
    out.push('</table>');
  } else {
    const said = new Set(
      g.items.map((item) =>
        why(item)
          .map(([k, v]) => `<b>${h(k)}:</b> ${v}`)
          .join('; '),
      ),
    );
    for (const line of [...said].slice(0, 3)) out.push(`<p>${line}</p>`);
    if (said.size > 3) out.push(`<p class="muted">and ${said.size - 3} other texts</p>`);
    out.push(...objects(g, findingOf));
  }
  out.push('</div></details>');
  return out.join('\n');
}

/** Objects by namespace: the shown ones, then the rest folded in a details of their own. */
function objects<T>(g: RuleGroup<T>, findingOf: (item: T) => Finding): string[] {
  const list = (groups: RuleGroup<T>['shown']) =>
    groups.map(
      (ns) =>
        `<div class="ns"><b>${h(namespaceLabel(ns.namespace))}</b><span class="n">${namespaceCount(ns)}</span>: <ul class="objs">${ns.items
          .map((item) => {
            const f = findingOf(item);
            const s = f.subject;
            const on = s.node && s.kind !== 'Node' && s.node !== s.name ? ` (on ${h(s.node)})` : '';
            return `<li data-obj data-ns="${h(s.namespace ?? '')}" data-name="${h(s.name)}" data-fingerprint="${h(f.fingerprint)}">${h(s.kind)} ${h(s.name)}${on}</li>`;
          })
          .join('')}</ul></div>`,
    );
  const out = list(g.shown);
  if (g.rest.length) {
    const where = g.hiddenNamespaces ? ` (${plural(g.hiddenNamespaces, 'more namespace')})` : '';
    out.push(
      `<details class="more"><summary>… and ${g.hidden.toLocaleString('en-US')} more${where}</summary>`,
      ...list(g.rest),
      '</details>',
    );
  }
  return out;
}

function finding(f: Finding, withFix: boolean): string {
  const ev = f.evidence.slice(0, MAX_EVIDENCE).map((e) => `<li>${h(describeEvidence(e))}</li>`);
  if (f.evidence.length > MAX_EVIDENCE) ev.push(`<li>… and ${f.evidence.length - MAX_EVIDENCE} more</li>`);
  return [
    `<div class="f ${f.severity}" data-fingerprint="${h(f.fingerprint)}" data-rule="${h(f.ruleId)}" data-obj data-ns="${h(f.subject.namespace ?? '')}" data-name="${h(f.subject.name)}">`,
    `<p><span class="sev ${f.severity}">${SEVERITY_LABEL[f.severity]}</span> ${h(describeSubject(f.subject))}</p>`,
    `<p><b>${h(f.title)}.</b> ${h(f.message)}</p>`,
    `<ul>${ev.join('')}</ul>`,
    withFix ? `<p><b>Fix:</b> ${h(f.remediation)}</p>` : '',
    f.artifacts.length ? `<p>Kit: ${f.artifacts.map((a) => `<code>${h(a)}</code>`).join(', ')}</p>` : '',
    f.kitGap ? `<p class="muted">Not resolved by the kit: ${h(f.kitGap)}</p>` : '',
    `<p class="fp">${h(f.fingerprint)}</p>`,
    '</div>',
  ]
    .filter(Boolean)
    .join('\n');
}
