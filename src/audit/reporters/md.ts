/** Markdown for pull requests and tickets: a summary table, then findings by severity. */
import type { AuditReport } from '../engine.js';
import { describeEvidence, describeSubject, SEVERITIES } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import { describeTarget, escapeMd, resolvedHeading, SEVERITY_LABEL, summaryLine } from './common.js';

const MAX_EVIDENCE = 20;

export function renderMarkdown(r: AuditReport): string {
  const c = r.counts;
  const out: string[] = [
    `# ferry audit: ${escapeMd(r.snapshot.source)}`,
    '',
    `Target: ${escapeMd(describeTarget(r.target))}. Generated ${escapeMd(r.generatedAt)} by ferry ${escapeMd(r.tool.version)}.`,
    '',
    '| blocker | risk | info | suppressed | baselined | skipped rules | not applicable | passed rules |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${c.blocker} | ${c.risk} | ${c.info} | ${c.suppressed} | ${c.baselined} | ${c.skipped} | ${c.notApplicable} | ${c.passed} |`,
    '',
  ];
  if (r.findings.length === 0) out.push(r.counts.baselined ? 'No new findings.' : 'No findings.', '');
  for (const sev of SEVERITIES) {
    const group = r.findings.filter((f) => f.severity === sev);
    if (!group.length) continue;
    out.push(`## ${SEVERITY_LABEL[sev]} (${group.length})`, '');
    for (const f of group) {
      out.push(`### \`${f.ruleId}\` ${escapeMd(describeSubject(f.subject))}`, '');
      out.push(`**${escapeMd(f.title)}.** ${escapeMd(f.message)}`, '');
      for (const e of f.evidence.slice(0, MAX_EVIDENCE)) out.push(`- ${escapeMd(describeEvidence(e))}`);
      if (f.evidence.length > MAX_EVIDENCE) out.push(`- … and ${f.evidence.length - MAX_EVIDENCE} more`);
      out.push('', `**Fix:** ${escapeMd(f.remediation)}`, '');
      if (f.artifacts.length)
        out.push(`Kit: ${f.artifacts.map((a) => `\`${a.replace(/`/g, '')}\``).join(', ')}`, '');
      if (f.kitGap) out.push(`Not resolved by the kit: ${escapeMd(f.kitGap)}`, '');
      out.push(`Fingerprint: \`${f.fingerprint}\``, '');
    }
  }
  if (r.kit) {
    out.push(`## ${escapeMd(resolvedHeading(r))}`, '');
    for (const w of r.kit.warnings) out.push(`> warning: ${escapeMd(w)}`, '');
    if (r.resolved.length) {
      out.push(
        '| rule | severity | subject | fingerprint | kit file | what it does |',
        '|---|---|---|---|---|---|',
      );
      for (const f of r.resolved)
        out.push(
          `| \`${f.ruleId}\` | ${f.severity} | ${escapeMd(describeSubject(f.subject))} | \`${f.fingerprint}\` | ${(f.resolution?.files ?? []).map((p) => `\`${p.replace(/`/g, '')}\``).join(', ')} | ${escapeMd(f.resolution?.how ?? '')} |`,
        );
    } else out.push('None: no finding is one the kit fixes as it stands.');
    out.push('');
  }
  if (r.suppressed.length) {
    out.push(
      `## Suppressed (${r.suppressed.length})`,
      '',
      '| rule | subject | fingerprint | by | reason |',
      '|---|---|---|---|---|',
    );
    for (const { finding: f, by } of r.suppressed)
      out.push(
        `| \`${f.ruleId}\` | ${escapeMd(describeSubject(f.subject))} | \`${f.fingerprint}\` | ${escapeMd(describeSuppression(by))} | ${escapeMd(by.reason)} |`,
      );
    out.push('');
  }
  if (r.expiredSuppressions.length) {
    out.push(`## Expired suppressions (${r.expiredSuppressions.length})`, '');
    for (const { suppression: s, wouldMatch } of r.expiredSuppressions)
      out.push(
        `- ${escapeMd(describeSuppression(s))} \`${s.rule}\` expired ${escapeMd(s.expires ?? '')}: ${wouldMatch} finding(s) back`,
      );
    out.push('');
  }
  if (r.skipped.length) {
    out.push(
      `## Skipped rules (${r.skipped.length})`,
      '',
      '| rule | missing | how to provide |',
      '|---|---|---|',
    );
    for (const s of r.skipped)
      out.push(`| \`${s.ruleId}\` | ${escapeMd(s.missing.join(', '))} | ${escapeMd(s.howToProvide)} |`);
    out.push('');
  }
  if (r.errors.length) {
    out.push(`## Rule errors (${r.errors.length})`, '');
    for (const e of r.errors) out.push(`- \`${e.ruleId}\`: ${escapeMd(e.message)}`);
    out.push('');
  }
  out.push(`_${escapeMd(summaryLine(r))}_`, '');
  return out.join('\n');
}
