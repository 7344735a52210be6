/**
 * The audit engine: runs every rule over one snapshot + facts + target and assembles the one
 * AuditReport every renderer takes. Pure: no I/O, the clock is an input.
 *
 * A rule ends in exactly one of five states (kube-bench's lesson: more than pass/fail):
 * failed (findings), passed, skipped (an input is missing: said what to provide, never a silent
 * pass), not-applicable (to this target), error (the rule crashed: an internal error, exit 4).
 */
import type { Facts } from '../facts/model.js';
import type { Target } from '../facts/target.js';
import { snapshotMismatch } from '../kit/match.js';
import type { KitContents } from '../kit/read.js';
import type { InputTag } from '../knowledge/rule-catalog.js';
import {
  describeNotObserved,
  type NotObserved,
  RESOURCE_KEYS,
  type Snapshot,
  type SnapshotInput,
  type SnapshotPart,
} from '../snapshot/model.js';
import { unobservedInputs } from '../snapshot/unobserved.js';
import { VERSION } from '../version.js';
import { applyBaseline } from './baseline.js';
import {
  describeSubject,
  type Finding,
  fingerprintOf,
  type Severity,
  severityRank,
  subjectFromEvidence,
  type TargetSummary,
} from './findings.js';
import { resolveByKit } from './kit-resolve.js';
import { HOW_TO_PROVIDE, type Requirement, type Rule, type RuleFinding, requirementsOf } from './rule.js';
import { buildIndex, type SnapshotIndex } from './snapshot-index.js';
import { applySuppressions, type ExpiredSuppression, type Suppression } from './suppressions.js';
import { summarizeTarget } from './target-summary.js';

export type RuleOutcome = 'failed' | 'passed' | 'skipped' | 'not-applicable' | 'error';

export interface RuleMeta {
  id: string;
  family: string;
  title: string;
  /** The rule's default severity. */
  severity: Severity;
  inputs: InputTag[];
  requires: Requirement[];
  description?: string;
  docs?: string;
  outcome: RuleOutcome;
  /** Findings this rule produced before suppressions and baseline. */
  findings: number;
}

/**
 * A rule that did not run. `input-missing`: a part was not given (or the rule found it could not
 * decide); `not-observed`: the snapshot tried to read an input and the server refused or does not
 * serve it, so the rule's answer would rest on a list never read (never a pass, never an absence).
 */
export type SkippedRule =
  | { ruleId: string; because: 'input-missing'; missing: string[]; howToProvide: string }
  | {
      ruleId: string;
      because: 'not-observed';
      /** The snapshot inputs not observed. */
      missing: string[];
      howToProvide: string;
      /** The reads that did not happen, as the snapshot recorded them. */
      notObserved: NotObserved[];
    };

/**
 * Inputs a part comes from in a live snapshot: a rule that requires the part also depends on
 * them, so a refused kubeadm-config skips a kubeadm rule as "not observed", not as "not given".
 */
const PART_INPUTS: Partial<Record<Requirement, readonly SnapshotInput[]>> = {
  kubeadm: ['configmap kube-system/kubeadm-config'],
  kubelet: ['configmap kube-system/kubelet-config'],
  'kube-proxy': ['configmap kube-system/kube-proxy'],
  flags: ['pods'],
};

/** Every snapshot input a rule depends on: what it reads, and what its required parts come from. */
export function inputsOf(rule: Rule): SnapshotInput[] {
  const out = new Set<SnapshotInput>(rule.reads);
  for (const r of requirementsOf(rule)) for (const i of PART_INPUTS[r] ?? []) out.add(i);
  return [...out];
}

export interface SnapshotSummary {
  source: string;
  createdAt: string;
  parts: SnapshotPart[];
  warnings: string[];
  /** What the snapshot could not read (reported before anything else). */
  unobserved: NotObserved[];
  /** The snapshot was kept although some inputs were not observed (--allow-partial). */
  partial: boolean;
  /** Object counts per resource kind, e.g. {nodes: 8, pods: 120}. */
  objects: Record<string, number>;
}

export interface AuditCounts {
  blocker: number;
  risk: number;
  info: number;
  /** Reported findings (after suppressions, the kit and baseline). */
  total: number;
  suppressed: number;
  /** Findings the kit given to --kit resolves (reported apart, never failing the audit). */
  resolved: number;
  /** Findings hidden because their fingerprint is in the baseline. */
  baselined: number;
  expiredSuppressions: number;
  rules: number;
  passed: number;
  failed: number;
  skipped: number;
  notApplicable: number;
  errors: number;
}

export interface AuditReport {
  tool: { name: 'ferry'; version: string };
  generatedAt: string;
  target: TargetSummary;
  snapshot: SnapshotSummary;
  /** Reported findings, most severe first. */
  findings: Finding[];
  suppressed: { finding: Finding; by: Suppression }[];
  /** Findings the kit resolves, each with its `resolution`, most severe first (empty without --kit). */
  resolved: Finding[];
  /** The kit given to --kit. */
  kit?: { path: string; generatedAt: string | null; warnings: string[] };
  expiredSuppressions: ExpiredSuppression[];
  unusedSuppressions: Suppression[];
  baseline?: { file: string; known: number };
  skipped: SkippedRule[];
  notApplicable: { ruleId: string; reason: string }[];
  errors: { ruleId: string; message: string }[];
  rules: RuleMeta[];
  counts: AuditCounts;
}

export interface AuditInput {
  snapshot: Snapshot;
  facts: Facts;
  target: Target;
  rules: readonly Rule[];
  suppressions?: readonly Suppression[];
  baseline?: { file: string; fingerprints: ReadonlySet<string> };
  /** A kit `ferry generate` wrote: findings it resolves are reported apart (kit-resolve.ts). */
  kit?: KitContents;
  now: Date;
  /** Reuse an index built elsewhere (benchmarks). */
  index?: SnapshotIndex;
}

export function runAudit(input: AuditInput): AuditReport {
  return runAuditDetailed(input).report;
}

/**
 * Like runAudit, and also returns the findings that survived suppressions before the baseline was
 * applied: what `--write-baseline` records, so a baseline can be refreshed while another is in use.
 */
export function runAuditDetailed(input: AuditInput): { report: AuditReport; unsuppressed: Finding[] } {
  const { snapshot, facts, target } = input;
  const index = input.index ?? buildIndex(snapshot);
  const targetSummary = summarizeTarget(target);
  const present = new Set<Requirement>(snapshot.manifest.parts);
  const unobserved = unobservedInputs(snapshot.manifest);

  const all: Finding[] = [];
  const rules: RuleMeta[] = [];
  const skipped: SkippedRule[] = [];
  const notApplicable: { ruleId: string; reason: string }[] = [];
  const errors: { ruleId: string; message: string }[] = [];

  for (const rule of input.rules) {
    const requires = requirementsOf(rule);
    const meta: RuleMeta = {
      id: rule.id,
      family: rule.family,
      title: rule.title,
      severity: rule.severity,
      inputs: [...rule.inputs],
      requires,
      ...(rule.description !== undefined ? { description: rule.description } : {}),
      ...(rule.docs !== undefined ? { docs: rule.docs } : {}),
      outcome: 'passed',
      findings: 0,
    };
    rules.push(meta);

    const na = rule.notApplicable?.(target);
    if (na !== undefined) {
      meta.outcome = 'not-applicable';
      notApplicable.push({ ruleId: rule.id, reason: na });
      continue;
    }
    // Before the parts: a part missing because its ConfigMap was refused is "not observed".
    const unread = inputsOf(rule).filter((i) => unobserved.has(i));
    if (unread.length > 0) {
      meta.outcome = 'skipped';
      const notObserved = unread.flatMap((i) => unobserved.get(i) ?? []);
      skipped.push({
        ruleId: rule.id,
        because: 'not-observed',
        missing: unread,
        howToProvide: howToObserve(notObserved),
        notObserved,
      });
      continue;
    }
    const missing = requires.filter((r) => !present.has(r));
    if (missing.length > 0) {
      meta.outcome = 'skipped';
      skipped.push({
        ruleId: rule.id,
        because: 'input-missing',
        missing,
        howToProvide: missing.map((m) => HOW_TO_PROVIDE[m]).join('; '),
      });
      continue;
    }

    let result: ReturnType<Rule['check']>;
    try {
      result = rule.check({ snapshot, facts, target, index });
    } catch (err) {
      meta.outcome = 'error';
      errors.push({ ruleId: rule.id, message: err instanceof Error ? err.message : String(err) });
      continue;
    }
    if (!Array.isArray(result)) {
      if (result.kind === 'skipped') {
        meta.outcome = 'skipped';
        skipped.push({
          ruleId: rule.id,
          because: 'input-missing',
          missing: result.missing,
          howToProvide: result.howToProvide,
        });
      } else {
        meta.outcome = 'not-applicable';
        notApplicable.push({ ruleId: rule.id, reason: result.reason });
      }
      continue;
    }
    const produced = toFindings(rule, result, targetSummary, (message) =>
      errors.push({ ruleId: rule.id, message }),
    );
    meta.findings = produced.length;
    if (produced.length > 0) meta.outcome = 'failed';
    // A loop, not push(...produced): a rule may report one finding per pod of a large cluster.
    for (const f of produced) all.push(f);
  }

  const sup = applySuppressions(all, input.suppressions ?? [], input.now);
  // Suppressed findings stay suppressed; the kit then takes what it resolves; the baseline hides the rest it knows.
  const byKit = input.kit ? resolveByKit(sup.active, input.kit) : { open: sup.active, resolved: [] };
  let reported = byKit.open;
  let baselined = 0;
  if (input.baseline) {
    const split = applyBaseline(reported, input.baseline.fingerprints);
    reported = split.fresh;
    baselined = split.known.length;
  }
  reported = sortFindings(reported);
  const suppressedOrder = new Map(sortFindings(sup.suppressed.map((x) => x.finding)).map((f, i) => [f, i]));
  sup.suppressed.sort((a, b) => suppressedOrder.get(a.finding)! - suppressedOrder.get(b.finding)!);
  if (errors.length) for (const m of rules) if (errors.some((e) => e.ruleId === m.id)) m.outcome = 'error';

  const counts: AuditCounts = {
    blocker: 0,
    risk: 0,
    info: 0,
    total: reported.length,
    suppressed: sup.suppressed.length,
    resolved: byKit.resolved.length,
    baselined,
    expiredSuppressions: sup.expired.length,
    rules: rules.length,
    passed: rules.filter((r) => r.outcome === 'passed').length,
    failed: rules.filter((r) => r.outcome === 'failed').length,
    skipped: skipped.length,
    notApplicable: notApplicable.length,
    errors: errors.length,
  };
  for (const f of reported) counts[f.severity]++;

  const report: AuditReport = {
    tool: { name: 'ferry', version: VERSION },
    generatedAt: input.now.toISOString(),
    target: targetSummary,
    snapshot: summarizeSnapshot(snapshot),
    findings: reported,
    suppressed: sup.suppressed,
    resolved: sortFindings(byKit.resolved),
    ...(input.kit ? { kit: kitSummary(input.kit, facts) } : {}),
    expiredSuppressions: sup.expired,
    unusedSuppressions: sup.unused,
    ...(input.baseline ? { baseline: { file: input.baseline.file, known: baselined } } : {}),
    skipped,
    notApplicable,
    errors,
    rules,
    counts,
  };
  return { report, unsuppressed: sortFindings(sup.active) };
}

/** What to grant (or why it cannot be read) and how to read it again. */
function howToObserve(reads: readonly NotObserved[]): string {
  const forbidden = [...new Set(reads.filter((n) => n.reason === 'forbidden').map(describeNotObserved))];
  const notServed = [...new Set(reads.filter((n) => n.reason === 'not-served').map(describeNotObserved))];
  const out: string[] = [];
  if (forbidden.length)
    out.push(
      `the server refused ${forbidden.join(', ')} (HTTP 403): grant it to the snapshot's user (\`ferry snapshot --print-clusterrole\` prints the ClusterRole) and take the snapshot again`,
    );
  if (notServed.length)
    out.push(
      `the server does not serve ${notServed.join(', ')} (HTTP 404): the rule cannot be checked against this API server`,
    );
  return out.join('; ');
}

function toFindings(
  rule: Rule,
  results: RuleFinding[],
  target: TargetSummary,
  reportError: (message: string) => void,
): Finding[] {
  const byFingerprint = new Map<string, Finding>();
  for (const r of results) {
    if (r.evidence.length === 0) reportError(`a finding without evidence: "${r.message}" (rule bug)`);
    const implied = subjectFromEvidence(r.evidence[0]);
    const subject = r.subject ?? implied.subject;
    const field = r.field ?? (r.subject ? undefined : implied.field);
    const fingerprint = fingerprintOf(rule.id, subject, field);
    const existing = byFingerprint.get(fingerprint);
    if (existing) {
      // Same rule, same object, same field: one problem. Keep one finding, all the evidence,
      // and the more severe verdict.
      existing.evidence.push(...r.evidence);
      if (r.severity && severityRank(r.severity) < severityRank(existing.severity))
        existing.severity = r.severity;
      continue;
    }
    byFingerprint.set(fingerprint, {
      ruleId: rule.id,
      family: rule.family,
      severity: r.severity ?? rule.severity,
      title: r.title ?? rule.title,
      message: r.message,
      evidence: [...r.evidence],
      remediation: r.remediation,
      fingerprint,
      artifacts: [...(r.artifacts ?? rule.artifacts ?? [])],
      subject,
      ...(field !== undefined ? { field } : {}),
      target,
      ...(rule.docs !== undefined ? { docs: rule.docs } : {}),
      ...(r.kitChecks?.length ? { kitChecks: r.kitChecks } : {}),
    });
  }
  return [...byFingerprint.values()];
}

/**
 * Findings in compareFindings order, each subject described once rather than once per comparison
 * (tens of thousands of findings on a large cluster).
 */
export function sortFindings(list: readonly Finding[]): Finding[] {
  const keyed = list.map((f) => ({ f, rank: severityRank(f.severity), subject: describeSubject(f.subject) }));
  keyed.sort(
    (a, b) =>
      a.rank - b.rank ||
      a.f.ruleId.localeCompare(b.f.ruleId) ||
      a.subject.localeCompare(b.subject) ||
      a.f.fingerprint.localeCompare(b.f.fingerprint),
  );
  return keyed.map((k) => k.f);
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) ||
    a.ruleId.localeCompare(b.ruleId) ||
    describeSubject(a.subject).localeCompare(describeSubject(b.subject)) ||
    a.fingerprint.localeCompare(b.fingerprint)
  );
}

function kitSummary(kit: KitContents, facts: Facts): NonNullable<AuditReport['kit']> {
  const other = snapshotMismatch(kit.summary, facts.snapshot, 'audit');
  return { path: kit.summary.path, generatedAt: kit.summary.generatedAt, warnings: other ? [other] : [] };
}

function summarizeSnapshot(s: Snapshot): SnapshotSummary {
  const objects: Record<string, number> = {};
  for (const k of RESOURCE_KEYS) {
    const n = s.resources[k].length;
    if (n > 0) objects[k] = n;
  }
  if (s.resources.bootstrapTokens.length) objects['bootstrapTokens'] = s.resources.bootstrapTokens.length;
  const src = s.manifest.source;
  return {
    source:
      src.kind === 'live' ? `live ${src.server}${src.context ? ` (context ${src.context})` : ''}` : src.path,
    createdAt: s.manifest.createdAt,
    parts: [...s.manifest.parts],
    warnings: [...s.manifest.warnings],
    unobserved: [...(s.manifest.unobserved ?? [])],
    partial: s.manifest.partial === true,
    objects,
  };
}

/** Exit-code policy for `--fail-on`: does the report hold a finding at or above the threshold? */
export type FailOn = Severity | 'never';

export function failsAt(report: AuditReport, failOn: FailOn): boolean {
  return findsAt(report, failOn) || unobservedAt(report, failOn).length > 0;
}

/** Does the report hold a finding at or above `failOn` (what was not observed aside)? */
export function findsAt(report: AuditReport, failOn: FailOn): boolean {
  if (failOn === 'never') return false;
  const limit = severityRank(failOn);
  return report.findings.some((f) => severityRank(f.severity) <= limit);
}

/**
 * Rules at or above `failOn` skipped because their reads were refused: what they would have found
 * is unknown, so the audit cannot pass on them (fail closed, as the run's gates do). A rule skipped
 * for an input not given is the operator's choice and does not count.
 */
export function unobservedAt(report: AuditReport, failOn: FailOn): string[] {
  if (failOn === 'never') return [];
  const limit = severityRank(failOn);
  const unread = new Set(report.skipped.filter((s) => s.because === 'not-observed').map((s) => s.ruleId));
  return report.rules.filter((r) => unread.has(r.id) && severityRank(r.severity) <= limit).map((r) => r.id);
}
