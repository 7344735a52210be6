/**
 * One self-contained HTML file: inline CSS, no script, no external resource, and a
 * Content-Security-Policy that forbids fetching anything, so the report can be mailed or
 * attached to a ticket and opened offline. Every piece of cluster text is escaped.
 */

import { escapeHtml as h } from '../../util/escape-html.js';
import type { AuditReport } from '../engine.js';
import { describeEvidence, describeSubject, type Finding, SEVERITIES } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import { describeTarget, resolvedHeading, SEVERITY_LABEL, summaryLine } from './common.js';

const MAX_EVIDENCE = 50;

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#1b1f24}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccd;padding:.25em .6em;text-align:left;vertical-align:top}
.f{border-left:5px solid #888;padding:.3em 1em;margin:1em 0;background:#f7f8fa}
.blocker{border-color:#c62828}.risk{border-color:#ef8f00}.info{border-color:#1565c0}
.sev{font-weight:bold;font-size:.8em;padding:.1em .4em;border-radius:3px;color:#fff}
.sev.blocker{background:#c62828}.sev.risk{background:#ef8f00}.sev.info{background:#1565c0}
code,.fp{font-family:ui-monospace,monospace;font-size:.9em}.fp{color:#666}
ul{margin:.3em 0}.muted{color:#666}
`;

export function renderHtml(r: AuditReport): string {
  const c = r.counts;
  const body: string[] = [
    `<h1>ferry audit: ${h(r.snapshot.source)}</h1>`,
    `<p>Target: ${h(describeTarget(r.target))}. Generated ${h(r.generatedAt)} by ferry ${h(r.tool.version)}.</p>`,
    '<table id="counts"><tr><th>blocker</th><th>risk</th><th>info</th><th>suppressed</th><th>baselined</th><th>skipped rules</th><th>not applicable</th><th>passed rules</th></tr>',
    `<tr><td>${c.blocker}</td><td>${c.risk}</td><td>${c.info}</td><td data-count="suppressed">${c.suppressed}</td><td>${c.baselined}</td><td>${c.skipped}</td><td>${c.notApplicable}</td><td>${c.passed}</td></tr></table>`,
  ];
  if (r.findings.length === 0)
    body.push(`<p>${r.counts.baselined ? 'No new findings.' : 'No findings.'}</p>`);
  for (const sev of SEVERITIES) {
    const group = r.findings.filter((f) => f.severity === sev);
    if (!group.length) continue;
    body.push(`<h2>${SEVERITY_LABEL[sev]} (${group.length})</h2>`);
    for (const f of group) body.push(finding(f));
  }
  if (r.kit) {
    body.push(`<h2 id="resolved">${h(resolvedHeading(r))}</h2>`);
    for (const w of r.kit.warnings) body.push(`<p class="muted">warning: ${h(w)}</p>`);
    if (r.resolved.length) {
      body.push(
        '<table><tr><th>rule</th><th>severity</th><th>subject</th><th>fingerprint</th><th>kit file</th><th>what it does</th></tr>',
      );
      for (const f of r.resolved)
        body.push(
          `<tr class="resolved"><td><code>${h(f.ruleId)}</code></td><td>${f.severity}</td><td>${h(describeSubject(f.subject))}</td><td class="fp" data-fingerprint="${h(f.fingerprint)}">${h(f.fingerprint)}</td><td>${(f.resolution?.files ?? []).map((p) => `<code>${h(p)}</code>`).join(', ')}</td><td>${h(f.resolution?.how ?? '')}</td></tr>`,
        );
      body.push('</table>');
    } else body.push('<p>None: no finding is one the kit fixes as it stands.</p>');
  }
  if (r.suppressed.length) {
    body.push(
      `<h2>Suppressed (${r.suppressed.length})</h2>`,
      '<table><tr><th>rule</th><th>subject</th><th>fingerprint</th><th>by</th><th>reason</th></tr>',
    );
    for (const { finding: f, by } of r.suppressed)
      body.push(
        `<tr class="suppressed"><td><code>${h(f.ruleId)}</code></td><td>${h(describeSubject(f.subject))}</td><td class="fp" data-fingerprint="${h(f.fingerprint)}">${h(f.fingerprint)}</td><td>${h(describeSuppression(by))}</td><td>${h(by.reason)}</td></tr>`,
      );
    body.push('</table>');
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
      '<table><tr><th>rule</th><th>missing</th><th>how to provide</th></tr>',
    );
    for (const s of r.skipped)
      body.push(
        `<tr><td><code>${h(s.ruleId)}</code></td><td>${h(s.missing.join(', '))}</td><td>${h(s.howToProvide)}</td></tr>`,
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
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>ferry audit: ${h(r.snapshot.source)}</title>`,
    `<style>${CSS}</style></head><body>`,
    ...body,
    '</body></html>',
    '',
  ].join('\n');
}

function finding(f: Finding): string {
  const ev = f.evidence.slice(0, MAX_EVIDENCE).map((e) => `<li>${h(describeEvidence(e))}</li>`);
  if (f.evidence.length > MAX_EVIDENCE) ev.push(`<li>… and ${f.evidence.length - MAX_EVIDENCE} more</li>`);
  return [
    `<div class="f ${f.severity}" data-fingerprint="${h(f.fingerprint)}" data-rule="${h(f.ruleId)}">`,
    `<p><span class="sev ${f.severity}">${SEVERITY_LABEL[f.severity]}</span> <code>${h(f.ruleId)}</code> ${h(describeSubject(f.subject))}</p>`,
    `<p><b>${h(f.title)}.</b> ${h(f.message)}</p>`,
    `<ul>${ev.join('')}</ul>`,
    `<p><b>Fix:</b> ${h(f.remediation)}</p>`,
    f.artifacts.length ? `<p>Kit: ${f.artifacts.map((a) => `<code>${h(a)}</code>`).join(', ')}</p>` : '',
    f.kitGap ? `<p class="muted">Not resolved by the kit: ${h(f.kitGap)}</p>` : '',
    `<p class="fp">${h(f.fingerprint)}</p>`,
    '</div>',
  ]
    .filter(Boolean)
    .join('\n');
}
