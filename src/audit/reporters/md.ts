/** Markdown for pull requests and tickets: a summary table, then findings by rule (group.ts), blockers first. */
import type { AuditReport } from '../engine.js';
import { describeEvidence, describeSubject, type Finding } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import {
  describeTarget,
  escapeMd,
  plural,
  type RenderOptions,
  resolvedHeading,
  SEVERITY_LABEL,
  skipReason,
  summaryLine,
  unobservedHeading,
  unobservedLines,
} from './common.js';
import {
  bySeverity,
  compactObjects,
  detailed,
  groupByRule,
  hiddenLine,
  namespaceCount,
  namespaceLabel,
  type RuleGroup,
  severityMix,
} from './group.js';

const MAX_EVIDENCE = 20;
/** Distinct suppression reasons or kit resolutions said for a folded group. */
const MAX_REASONS = 3;

export function renderMarkdown(r: AuditReport, opts: RenderOptions = { color: false }): string {
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
  if (r.snapshot.unobserved.length) {
    out.push(`## ${escapeMd(unobservedHeading(r))}`, '');
    for (const l of unobservedLines(r)) out.push(`- ${escapeMd(l)}`);
    out.push('');
  }
  if (r.findings.length === 0) out.push(r.counts.baselined ? 'No new findings.' : 'No findings.', '');
  const expand = opts.expand ?? [];
  for (const { severity, groups } of bySeverity(groupByRule(r.findings, (f) => f, { expand }))) {
    const n = groups.reduce((sum, g) => sum + g.total, 0);
    out.push(`## ${SEVERITY_LABEL[severity]}: ${plural(groups.length, 'rule')}, ${plural(n, 'finding')}`, '');
    for (const g of groups) out.push(...groupLines(g));
  }
  if (r.kit) {
    out.push(`## ${escapeMd(resolvedHeading(r))}`, '');
    for (const w of r.kit.warnings) out.push(`> warning: ${escapeMd(w)}`, '');
    if (r.resolved.length) {
      for (const g of groupByRule(r.resolved, (f) => f, { expand })) {
        out.push(...headLines(g));
        if (detailed(g)) {
          out.push(
            '| subject | fingerprint | kit file | what it does |',
            '|---|---|---|---|',
            ...g.items.map(
              (f) =>
                `| ${escapeMd(describeSubject(f.subject))} | \`${f.fingerprint}\` | ${(f.resolution?.files ?? []).map(code).join(', ')} | ${escapeMd(f.resolution?.how ?? '')} |`,
            ),
            '',
          );
        } else
          out.push(
            ...distinct(g.items.map((f) => f.resolution?.how ?? '')).map(
              (how) => `Resolved: ${escapeMd(how)}`,
            ),
            '',
            ...objectLines(g, (f) => f),
          );
      }
    } else out.push('None: no finding is one the kit fixes as it stands.');
    out.push('');
  }
  if (r.suppressed.length) {
    out.push(`## Suppressed (${r.suppressed.length})`, '');
    for (const g of groupByRule(r.suppressed, (x) => x.finding, { expand })) {
      out.push(...headLines(g));
      if (detailed(g))
        out.push(
          '| subject | fingerprint | by | reason |',
          '|---|---|---|---|',
          ...g.items.map(
            ({ finding: f, by }) =>
              `| ${escapeMd(describeSubject(f.subject))} | \`${f.fingerprint}\` | ${escapeMd(describeSuppression(by))} | ${escapeMd(by.reason)} |`,
          ),
          '',
        );
      else
        out.push(
          ...distinct(g.items.map(({ by }) => `by ${describeSuppression(by)}: ${by.reason}`)).map(
            (t) => `Suppressed ${escapeMd(t)}`,
          ),
          '',
          ...objectLines(g, (x) => x.finding),
        );
    }
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
      '| rule | why | how to provide |',
      '|---|---|---|',
    );
    for (const s of r.skipped)
      out.push(`| \`${s.ruleId}\` | ${escapeMd(skipReason(s))} | ${escapeMd(s.howToProvide)} |`);
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

/** A rule's heading: id, title, count (and the severities when they differ). */
function headLines(g: RuleGroup<unknown>): string[] {
  const mix = severityMix(g);
  const ns = g.namespaces > 1 ? ` in ${g.namespaces.toLocaleString('en-US')} namespaces` : '';
  const docs = g.docs ? ` · [docs](${g.docs.replace(/[()\s]/g, encodeURIComponent)})` : '';
  return [
    `### \`${g.ruleId}\` ${escapeMd(g.title)} (${plural(g.total, 'finding')}${ns}${mix ? `: ${mix}` : ''})${docs}`,
    '',
  ];
}

function groupLines(g: RuleGroup<Finding>): string[] {
  const out = headLines(g);
  if (detailed(g)) {
    if (g.total > 1 && g.fix.same) out.push(`**Fix (each):** ${escapeMd(g.fix.text)}`, '');
    for (const f of g.items) {
      out.push(
        `- **${SEVERITY_LABEL[f.severity].toLowerCase()}** ${escapeMd(describeSubject(f.subject))}: **${escapeMd(f.title)}.** ${escapeMd(f.message)}`,
      );
      for (const e of f.evidence.slice(0, MAX_EVIDENCE)) out.push(`  - ${escapeMd(describeEvidence(e))}`);
      if (f.evidence.length > MAX_EVIDENCE) out.push(`  - … and ${f.evidence.length - MAX_EVIDENCE} more`);
      if (!(g.total > 1 && g.fix.same)) out.push(`  - **Fix:** ${escapeMd(f.remediation)}`);
      if (f.artifacts.length) out.push(`  - Kit: ${f.artifacts.map(code).join(', ')}`);
      if (f.kitGap) out.push(`  - Not resolved by the kit: ${escapeMd(f.kitGap)}`);
      out.push(`  - Fingerprint: \`${f.fingerprint}\``);
    }
    out.push('');
    return out;
  }
  out.push(`${g.message.same ? '' : 'E.g. '}${escapeMd(g.message.text)}`, '');
  out.push(
    g.fix.same
      ? `**Fix:** ${escapeMd(g.fix.text)}`
      : `**Fix**, e.g. for ${escapeMd(describeSubject(g.items[0]!.subject))}: ${escapeMd(g.fix.text)}`,
    '',
  );
  if (g.artifacts.length) out.push(`Kit: ${g.artifacts.map(code).join(', ')}`, '');
  for (const gap of g.kitGaps) out.push(`Not resolved by the kit: ${escapeMd(gap)}`, '');
  out.push(...objectLines(g, (f) => f));
  return out;
}

/** The affected objects by namespace, the first ones shown and the rest counted. */
function objectLines<T>(g: RuleGroup<T>, findingOf: (item: T) => Finding): string[] {
  const out = g.shown.map(
    (ns) =>
      `- **${escapeMd(namespaceLabel(ns.namespace))}**${namespaceCount(ns)}: ${escapeMd(compactObjects(ns.items, findingOf))}`,
  );
  const more = hiddenLine(g);
  if (more) out.push(`- ${more}: \`--expand ${g.ruleId}\` or \`-o json\` lists them`);
  out.push('');
  return out;
}

function distinct(texts: readonly string[]): string[] {
  const all = [...new Set(texts)];
  return all.length > MAX_REASONS
    ? [...all.slice(0, MAX_REASONS), `and ${all.length - MAX_REASONS} other texts`]
    : all;
}

function code(p: string): string {
  return `\`${p.replace(/`/g, '')}\``;
}
