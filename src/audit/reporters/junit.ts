/**
 * JUnit XML for CI dashboards: one testsuite per rule family, one testcase per rule. Blocker and
 * risk findings are `<failure>`s (one per finding); `info` findings need no action (blockers.md
 * severity definitions), so they are listed in the testcase's `<system-out>` and do not turn a
 * dashboard red. Skipped and not-applicable rules are `<skipped>`, crashed rules `<error>`.
 * Suppressed findings, and findings the kit given to --kit resolves, are listed in `<system-out>`
 * (no failure) and counted in each suite's properties.
 */
import type { AuditReport, RuleMeta } from '../engine.js';
import { describeEvidence, describeSubject, type Finding } from '../findings.js';
import { describeSuppression } from '../suppressions.js';
import { describeTarget, escapeXml, skipReason, summaryLine } from './common.js';

export function renderJunit(r: AuditReport): string {
  const families = [...new Set(r.rules.map((m) => m.family))];
  // Grouped once: a large cluster can have thousands of findings across ~90 rules.
  const byRule = new Map<string, Finding[]>();
  for (const f of r.findings) {
    const list = byRule.get(f.ruleId);
    if (list) list.push(f);
    else byRule.set(f.ruleId, [f]);
  }
  const resolvedByRule = new Map<string, Finding[]>();
  for (const f of r.resolved) {
    const list = resolvedByRule.get(f.ruleId);
    if (list) list.push(f);
    else resolvedByRule.set(f.ruleId, [f]);
  }
  const suppressedByRule = new Map<string, AuditReport['suppressed']>();
  for (const s of r.suppressed) {
    const list = suppressedByRule.get(s.finding.ruleId);
    if (list) list.push(s);
    else suppressedByRule.set(s.finding.ruleId, [s]);
  }
  const suites: string[] = [];
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  for (const family of families) {
    const rules = r.rules.filter((m) => m.family === family);
    const cases: string[] = [];
    const t = { tests: 0, failures: 0, errors: 0, skipped: 0, suppressed: 0, resolved: 0 };
    for (const m of rules) {
      t.tests++;
      const found = byRule.get(m.id) ?? [];
      const suppressed = suppressedByRule.get(m.id) ?? [];
      t.suppressed += suppressed.length;
      const body: string[] = [];
      const out: string[] = [];
      const failing = found.filter((f) => f.severity !== 'info');
      for (const f of failing) body.push(failure(f));
      if (failing.length) t.failures++;
      for (const f of found.filter((x) => x.severity === 'info'))
        out.push(`info ${f.fingerprint} ${describeSubject(f.subject)}: ${f.message}`);
      // Resolved by the kit: no failure, said in the output.
      const resolved = resolvedByRule.get(m.id) ?? [];
      t.resolved += resolved.length;
      for (const f of resolved)
        out.push(
          `resolved by the kit ${f.resolution?.kit ?? ''} ${f.fingerprint} ${describeSubject(f.subject)} (${f.resolution?.files.join(', ') ?? ''}): ${f.resolution?.how ?? ''}`,
        );
      for (const { finding, by } of suppressed)
        out.push(
          `suppressed ${finding.fingerprint} ${describeSubject(finding.subject)} by ${describeSuppression(by)}: ${by.reason}`,
        );
      const err = r.errors.find((e) => e.ruleId === m.id);
      if (err) {
        t.errors++;
        body.push(`<error type="rule-error" message="${escapeXml(err.message)}"/>`);
      } else if (!failing.length) {
        const skip = skipMessage(r, m);
        if (skip) {
          t.skipped++;
          body.push(`<skipped message="${escapeXml(skip)}"/>`);
        }
      }
      if (out.length) body.push(`<system-out>${escapeXml(out.join('\n'))}</system-out>`);
      const open = `<testcase classname="ferry.${escapeXml(family)}" name="${escapeXml(`${m.id}: ${m.title}`)}"`;
      cases.push(body.length ? `${open}>\n      ${body.join('\n      ')}\n    </testcase>` : `${open}/>`);
    }
    totals.tests += t.tests;
    totals.failures += t.failures;
    totals.errors += t.errors;
    totals.skipped += t.skipped;
    suites.push(
      [
        `  <testsuite name="${escapeXml(family)}" tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}" timestamp="${escapeXml(r.generatedAt.replace(/Z$/, ''))}">`,
        '    <properties>',
        `      <property name="ferry.target" value="${escapeXml(describeTarget(r.target))}"/>`,
        `      <property name="ferry.suppressed" value="${t.suppressed}"/>`,
        ...(r.kit ? [`      <property name="ferry.resolved" value="${t.resolved}"/>`] : []),
        '    </properties>',
        ...cases.map((c) => `    ${c}`),
        '  </testsuite>',
      ].join('\n'),
    );
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<!-- ferry ${escapeXml(r.tool.version)} audit of ${escapeXml(r.snapshot.source).replace(/--/g, '- -')}: ${escapeXml(summaryLine(r)).replace(/--/g, '- -')} -->`,
    `<testsuites name="ferry audit" tests="${totals.tests}" failures="${totals.failures}" errors="${totals.errors}" skipped="${totals.skipped}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

function failure(f: Finding): string {
  const text = [
    `${f.title}: ${f.message}`,
    `subject: ${describeSubject(f.subject)}`,
    `fingerprint: ${f.fingerprint}`,
    ...f.evidence.map((e) => `evidence: ${describeEvidence(e)}`),
    `fix: ${f.remediation}`,
    ...(f.kitGap ? [`not resolved by the kit: ${f.kitGap}`] : []),
  ].join('\n');
  return `<failure type="${f.severity}" message="${escapeXml(`${describeSubject(f.subject)}: ${f.message}`)}">${escapeXml(text)}</failure>`;
}

function skipMessage(r: AuditReport, m: RuleMeta): string | undefined {
  const s = r.skipped.find((x) => x.ruleId === m.id);
  if (s) return `${skipReason(s)}: ${s.howToProvide}`;
  const na = r.notApplicable.find((x) => x.ruleId === m.id);
  if (na) return `not applicable: ${na.reason}`;
  return undefined;
}
