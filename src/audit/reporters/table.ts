/**
 * The default console output: findings grouped by rule (group.ts), blockers first, then what the
 * kit resolves, what was suppressed or skipped.
 */
import type { AuditReport } from '../engine.js';
import { describeEvidence, describeSubject, type Finding, type Severity } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import {
  describeTarget,
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

const ANSI = { red: '31', yellow: '33', cyan: '36', bold: '1', dim: '2', green: '32' } as const;
const SEVERITY_COLOR: Record<Severity, keyof typeof ANSI> = { blocker: 'red', risk: 'yellow', info: 'cyan' };

/** Only evidence lines beyond this are summarised: a 5,000-node finding must stay readable. */
const MAX_EVIDENCE = 8;
/** Distinct suppression reasons or kit resolutions said for a folded group. */
const MAX_REASONS = 3;

export function renderTable(r: AuditReport, opts: RenderOptions): string {
  const paint = (code: keyof typeof ANSI, s: string) => (opts.color ? `\x1b[${ANSI[code]}m${s}\x1b[0m` : s);
  const out: string[] = [];
  out.push(paint('bold', `ferry audit of ${r.snapshot.source}`));
  out.push(`target: ${describeTarget(r.target)}`);
  if (r.baseline) out.push(`baseline: ${r.baseline.file} (${r.baseline.known} known findings hidden)`);
  out.push('');
  if (r.snapshot.unobserved.length) {
    out.push(paint('yellow', paint('bold', unobservedHeading(r))));
    for (const l of unobservedLines(r)) out.push(`  ${l}`);
    out.push('');
  }

  const expand = opts.expand ?? [];
  for (const { severity, groups } of bySeverity(groupByRule(r.findings, (f) => f, { expand }))) {
    out.push(paint(SEVERITY_COLOR[severity], paint('bold', sectionHeading(severity, groups))));
    for (const g of groups) out.push(...groupLines(g, paint, SEVERITY_COLOR[g.severity]));
    out.push('');
  }
  if (r.findings.length === 0) {
    out.push(paint('green', r.counts.baselined ? 'No new findings.' : 'No findings.'));
    out.push('');
  }

  if (r.kit) {
    out.push(paint('green', paint('bold', resolvedHeading(r))));
    for (const w of r.kit.warnings) out.push(paint('yellow', `  warning: ${w}`));
    for (const g of groupByRule(r.resolved, (f) => f, { expand })) {
      out.push(`  ${g.ruleId}  ${SEVERITY_LABEL[g.severity]} ${g.title}  (${countOf(g)})`);
      out.push(
        ...itemLines(
          g,
          (f) => f,
          paint,
          (f) => (f.resolution ? [`resolved: ${f.resolution.how}`] : []),
        ),
      );
    }
    if (r.resolved.length === 0) out.push('  none: no finding is one the kit fixes as it stands');
    out.push('');
  }
  if (r.suppressed.length) {
    out.push(paint('bold', `Suppressed (${r.suppressed.length})`));
    for (const g of groupByRule(r.suppressed, (x) => x.finding, { expand })) {
      out.push(`  ${g.ruleId}  ${SEVERITY_LABEL[g.severity]} ${g.title}  (${countOf(g)})`);
      out.push(
        ...itemLines(
          g,
          (x) => x.finding,
          paint,
          ({ by }) => [
            `by ${describeSuppression(by)}: ${by.reason}${by.expires ? ` (until ${by.expires})` : ''}`,
          ],
        ),
      );
    }
    out.push('');
  }
  if (r.expiredSuppressions.length) {
    out.push(paint('bold', `Expired suppressions (${r.expiredSuppressions.length}) - no longer applied`));
    for (const { suppression: s, wouldMatch } of r.expiredSuppressions)
      out.push(
        `  ${describeSuppression(s)}  ${s.rule}  expired ${s.expires}, ${plural(wouldMatch, 'finding')} back`,
      );
    out.push('');
  }
  if (r.unusedSuppressions.length) {
    out.push(paint('bold', `Unused suppressions (${r.unusedSuppressions.length})`));
    for (const s of r.unusedSuppressions) out.push(`  ${describeSuppression(s)}  ${s.rule}  matched nothing`);
    out.push('');
  }
  if (r.skipped.length) {
    out.push(
      paint('bold', `Skipped rules (${r.skipped.length}) - not checked, provide the input to run them`),
    );
    for (const s of r.skipped) {
      out.push(`  ${s.ruleId}  ${skipReason(s)}`);
      out.push(paint('dim', `    ${s.howToProvide}`));
    }
    out.push('');
  }
  if (r.errors.length) {
    out.push(
      paint('red', paint('bold', `Rule errors (${r.errors.length}) - these rules did not run to completion`)),
    );
    for (const e of r.errors) out.push(`  ${e.ruleId}: ${e.message}`);
    out.push('');
  }
  if (r.snapshot.warnings.length) {
    out.push(paint('bold', 'Snapshot warnings'));
    for (const w of r.snapshot.warnings) out.push(`  ${w}`);
    out.push('');
  }
  out.push(`Summary: ${summaryLine(r)}`);
  return `${out.join('\n')}\n`;
}

type Paint = (c: keyof typeof ANSI, s: string) => string;

/** "BLOCKER: 3 rules, 51 findings" */
function sectionHeading(sev: Severity, groups: readonly RuleGroup<Finding>[]): string {
  const n = groups.reduce((sum, g) => sum + g.total, 0);
  return `${SEVERITY_LABEL[sev]}: ${plural(groups.length, 'rule')}, ${plural(n, 'finding')}`;
}

function countOf(g: RuleGroup<unknown>): string {
  const mix = severityMix(g);
  const ns = g.namespaces > 1 ? ` in ${g.namespaces.toLocaleString('en-US')} namespaces` : '';
  return `${plural(g.total, 'finding')}${ns}${mix ? `: ${mix}` : ''}`;
}

function groupLines(g: RuleGroup<Finding>, paint: Paint, color: keyof typeof ANSI): string[] {
  const lines = [`  ${paint(color, g.ruleId)}  ${g.title}  (${countOf(g)})`];
  if (detailed(g)) {
    if (g.fix.same && g.total > 1) lines.push(`    fix (each): ${g.fix.text}`);
    for (const f of g.items) lines.push(...findingLines(f, paint, g.fix.same && g.total > 1));
  } else {
    lines.push(`    ${g.message.same ? '' : 'e.g. '}${g.message.text}`);
    lines.push(
      g.fix.same
        ? `    fix: ${g.fix.text}`
        : `    fix, e.g. for ${describeSubject(g.items[0]!.subject)}: ${g.fix.text}`,
    );
    if (g.artifacts.length) lines.push(`    kit: ${g.artifacts.join(', ')}`);
    for (const gap of g.kitGaps) lines.push(paint('yellow', `    not resolved by the kit: ${gap}`));
    lines.push(...objectLines(g, (f) => f, paint));
  }
  return lines;
}

/** The affected objects by namespace, the first ones shown and the rest counted. */
function objectLines<T>(g: RuleGroup<T>, findingOf: (item: T) => Finding, paint: Paint): string[] {
  const lines = g.shown.map(
    (ns) =>
      `    ${namespaceLabel(ns.namespace)}${namespaceCount(ns)}: ${compactObjects(ns.items, findingOf)}`,
  );
  const more = hiddenLine(g);
  if (more) lines.push(paint('dim', `    ${more}: --expand ${g.ruleId} or -o json lists them`));
  return lines;
}

/**
 * The entries of a resolved or suppressed group: each with its fingerprint and what resolved or
 * suppressed it when few; else what did so once per distinct text, then the objects compactly.
 */
function itemLines<T>(
  g: RuleGroup<T>,
  findingOf: (item: T) => Finding,
  paint: Paint,
  why: (item: T) => string[],
): string[] {
  if (detailed(g))
    return g.items.flatMap((item) => {
      const f = findingOf(item);
      return [
        `    ${describeSubject(f.subject)}  [${f.fingerprint.slice(0, 12)}]`,
        ...why(item).map((l) => paint('dim', `      ${l}`)),
      ];
    });
  const distinct = [...new Set(g.items.flatMap(why))];
  const said = distinct.slice(0, MAX_REASONS).map((l) => paint('dim', `    ${l}`));
  if (distinct.length > MAX_REASONS)
    said.push(paint('dim', `    and ${distinct.length - MAX_REASONS} other reasons (--expand ${g.ruleId})`));
  return [...said, ...objectLines(g, findingOf, paint)];
}

function findingLines(f: Finding, paint: Paint, fixSaid = false): string[] {
  const lines = [
    `    ${paint(SEVERITY_COLOR[f.severity], SEVERITY_LABEL[f.severity].toLowerCase())} ${describeSubject(f.subject)}  [${f.fingerprint.slice(0, 12)}]`,
    `      ${f.message}`,
  ];
  for (const e of f.evidence.slice(0, MAX_EVIDENCE))
    lines.push(paint('dim', `      - ${describeEvidence(e)}`));
  if (f.evidence.length > MAX_EVIDENCE)
    lines.push(paint('dim', `      - ... and ${f.evidence.length - MAX_EVIDENCE} more (see -o json)`));
  if (!fixSaid) lines.push(`      fix: ${f.remediation}`);
  if (f.artifacts.length) lines.push(`      kit: ${f.artifacts.join(', ')}`);
  if (f.kitGap) lines.push(paint('yellow', `      not resolved by the kit: ${f.kitGap}`));
  return lines;
}
