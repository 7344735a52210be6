/** The default console output: findings grouped by severity, then what was suppressed or skipped. */
import type { AuditReport } from '../engine.js';
import { describeEvidence, describeSubject, type Finding, SEVERITIES, type Severity } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import {
  describeTarget,
  plural,
  type RenderOptions,
  resolvedHeading,
  SEVERITY_LABEL,
  summaryLine,
} from './common.js';

const ANSI = { red: '31', yellow: '33', cyan: '36', bold: '1', dim: '2', green: '32' } as const;
const SEVERITY_COLOR: Record<Severity, keyof typeof ANSI> = { blocker: 'red', risk: 'yellow', info: 'cyan' };

/** Only evidence lines beyond this are summarised: a 5,000-node finding must stay readable. */
const MAX_EVIDENCE = 8;

export function renderTable(r: AuditReport, opts: RenderOptions): string {
  const paint = (code: keyof typeof ANSI, s: string) => (opts.color ? `\x1b[${ANSI[code]}m${s}\x1b[0m` : s);
  const out: string[] = [];
  out.push(paint('bold', `ferry audit of ${r.snapshot.source}`));
  out.push(`target: ${describeTarget(r.target)}`);
  if (r.baseline) out.push(`baseline: ${r.baseline.file} (${r.baseline.known} known findings hidden)`);
  out.push('');

  for (const sev of SEVERITIES) {
    const group = r.findings.filter((f) => f.severity === sev);
    if (group.length === 0) continue;
    out.push(paint(SEVERITY_COLOR[sev], paint('bold', `${SEVERITY_LABEL[sev]} (${group.length})`)));
    for (const f of group) out.push(...findingLines(f, paint));
    out.push('');
  }
  if (r.findings.length === 0) {
    out.push(paint('green', r.counts.baselined ? 'No new findings.' : 'No findings.'));
    out.push('');
  }

  if (r.kit) {
    out.push(paint('green', paint('bold', resolvedHeading(r))));
    for (const w of r.kit.warnings) out.push(paint('yellow', `  warning: ${w}`));
    for (const f of r.resolved) {
      out.push(`  ${f.ruleId}  ${describeSubject(f.subject)}  [${f.fingerprint.slice(0, 12)}]`);
      out.push(`    ${SEVERITY_LABEL[f.severity]} ${f.title}`);
      if (f.resolution) out.push(paint('dim', `    resolved: ${f.resolution.how}`));
    }
    if (r.resolved.length === 0) out.push('  none: no finding is one the kit fixes as it stands');
    out.push('');
  }
  if (r.suppressed.length) {
    out.push(paint('bold', `Suppressed (${r.suppressed.length})`));
    for (const { finding, by } of r.suppressed) {
      out.push(
        `  ${finding.ruleId}  ${describeSubject(finding.subject)}  [${finding.fingerprint.slice(0, 12)}]`,
      );
      out.push(
        paint(
          'dim',
          `    by ${describeSuppression(by)}: ${by.reason}${by.expires ? ` (until ${by.expires})` : ''}`,
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
      out.push(`  ${s.ruleId}  missing: ${s.missing.join(', ')}`);
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

function findingLines(f: Finding, paint: (c: keyof typeof ANSI, s: string) => string): string[] {
  const lines = [
    `  ${paint(SEVERITY_COLOR[f.severity], f.ruleId)}  ${describeSubject(f.subject)}  [${f.fingerprint.slice(0, 12)}]`,
    `    ${f.title}: ${f.message}`,
  ];
  for (const e of f.evidence.slice(0, MAX_EVIDENCE)) lines.push(paint('dim', `    - ${describeEvidence(e)}`));
  if (f.evidence.length > MAX_EVIDENCE)
    lines.push(paint('dim', `    - ... and ${f.evidence.length - MAX_EVIDENCE} more (see -o json)`));
  lines.push(`    fix: ${f.remediation}`);
  if (f.artifacts.length) lines.push(`    kit: ${f.artifacts.join(', ')}`);
  if (f.kitGap) lines.push(paint('yellow', `    not resolved by the kit: ${f.kitGap}`));
  return lines;
}
