/**
 * The fleet report: each cluster's audit, side by side. A verdict per cluster, every blocker and
 * risk grouped across the fleet (one trap, the clusters it affects, the fix once), and with a
 * previous fleet report what is new and what was fixed. Pure: built from the per-cluster results.
 * A cluster that could not be read has no findings, not zero: it is never ready, and nothing it
 * had before counts as fixed.
 */
import { type AuditReport, type FailOn, findsAt, unobservedAt } from '../audit/engine.js';
import type { Finding, Severity, TargetSummary } from '../audit/findings.js';
import { severityRank } from '../audit/findings.js';
import type { ClusterSource, FleetCluster } from './config.js';

/** What auditing one cluster gave. */
export type ClusterOutcome =
  | { kind: 'audited'; report: AuditReport; reportFile: string; snapshotDir?: string }
  /** A live cluster that did not answer (or refused the credentials). */
  | { kind: 'unreachable'; reason: string }
  /** A snapshot directory that is missing or not a snapshot. */
  | { kind: 'unreadable'; reason: string };

export interface ClusterResult {
  cluster: FleetCluster;
  outcome: ClusterOutcome;
}

export type Verdict =
  | 'ready'
  /** Findings at or above --fail-on. */
  | 'blocked'
  /** Rules at or above --fail-on could not read their inputs: not passed. */
  | 'not-observed'
  | 'unreachable'
  | 'unreadable'
  /** A rule failed: ferry's bug, the report says which. */
  | 'error';

export interface ClusterRow {
  name: string;
  labels: Record<string, string>;
  source: string;
  verdict: Verdict;
  counts: Record<Severity, number>;
  /** Rules at or above --fail-on that could not read their inputs. */
  notObserved: string[];
  reason?: string;
  reportFile?: string;
  snapshotDir?: string;
}

export interface RuleGroup {
  ruleId: string;
  title: string;
  /** The most severe of its findings across the fleet. */
  severity: Severity;
  findings: number;
  clusters: { name: string; findings: number }[];
  /** The fix, once: the first finding's (it may name that cluster's objects; the others' say the same of theirs). */
  remediation: string;
  remediationFrom: string;
  docs?: string;
}

export interface FleetFinding extends Finding {
  cluster: string;
}

export interface FleetDelta {
  baseline: string;
  added: FleetFinding[];
  fixed: FleetFinding[];
  /** Clusters read in only one of the two runs: their differences are unknown, not new or fixed. */
  incomparable: string[];
}

export interface FleetReport {
  kind: 'FerryFleetReport';
  version: 1;
  generatedAt: string;
  fleet: string;
  failOn: FailOn;
  target?: TargetSummary;
  clusters: ClusterRow[];
  rules: RuleGroup[];
  totals: Record<Verdict, number> & { clusters: number };
  /** Every finding, with its cluster. */
  findings: FleetFinding[];
  delta?: FleetDelta;
}

export const VERDICTS: readonly Verdict[] = [
  'ready',
  'blocked',
  'not-observed',
  'unreachable',
  'unreadable',
  'error',
];

export function describeSource(s: ClusterSource): string {
  switch (s.kind) {
    case 'snapshot':
      return `snapshot ${s.shown}`;
    case 'kubeconfig':
      return `kubeconfig ${s.shown}${s.context ? ` (context ${s.context})` : ''}`;
    case 'capi':
      return `Cluster ${s.namespace}/${s.cluster} of management cluster ${s.management.name}`;
    case 'unlisted':
      return `the Clusters of management cluster ${s.management.name} (kubeconfig ${s.management.kubeconfig.shown})`;
  }
}

function row(r: ClusterResult, failOn: FailOn): ClusterRow {
  const base = {
    name: r.cluster.name,
    labels: r.cluster.labels,
    source: describeSource(r.cluster.source),
  };
  const o = r.outcome;
  switch (o.kind) {
    case 'unreachable':
    case 'unreadable':
      return {
        ...base,
        verdict: o.kind,
        counts: { blocker: 0, risk: 0, info: 0 },
        notObserved: [],
        reason: o.reason,
      };
    case 'audited': {
      const c = o.report.counts;
      const notObserved = unobservedAt(o.report, failOn);
      const verdict: Verdict =
        o.report.errors.length > 0
          ? 'error'
          : findsAt(o.report, failOn)
            ? 'blocked'
            : notObserved.length > 0
              ? 'not-observed'
              : 'ready';
      return {
        ...base,
        verdict,
        counts: { blocker: c.blocker, risk: c.risk, info: c.info },
        notObserved,
        reportFile: o.reportFile,
        ...(o.snapshotDir !== undefined && { snapshotDir: o.snapshotDir }),
      };
    }
  }
}

/** Clusters in the order a team reads them: by the `sortBy` label (absent last), then by name. */
function ordered(rows: ClusterRow[], sortBy: string | undefined): ClusterRow[] {
  const key = (r: ClusterRow) => (sortBy === undefined ? undefined : r.labels[sortBy]);
  return [...rows].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) {
      if (ka === undefined) return 1;
      if (kb === undefined) return -1;
      return ka.localeCompare(kb, 'en', { numeric: true });
    }
    return a.name.localeCompare(b.name);
  });
}

function groups(findings: readonly FleetFinding[]): RuleGroup[] {
  const byRule = new Map<string, RuleGroup>();
  for (const f of findings) {
    const g = byRule.get(f.ruleId) ?? {
      ruleId: f.ruleId,
      title: f.title,
      severity: f.severity,
      findings: 0,
      clusters: [],
      remediation: f.remediation,
      remediationFrom: f.cluster,
      ...(f.docs !== undefined && { docs: f.docs }),
    };
    g.findings++;
    if (severityRank(f.severity) < severityRank(g.severity)) g.severity = f.severity;
    const c = g.clusters.find((x) => x.name === f.cluster);
    if (c) c.findings++;
    else g.clusters.push({ name: f.cluster, findings: 1 });
    byRule.set(f.ruleId, g);
  }
  // Most severe first, then the rule that affects the most clusters: the fix that pays most.
  return [...byRule.values()].sort(
    (a, b) =>
      severityRank(a.severity) - severityRank(b.severity) ||
      b.clusters.length - a.clusters.length ||
      a.ruleId.localeCompare(b.ruleId),
  );
}

const keyOf = (f: Pick<FleetFinding, 'cluster' | 'fingerprint'>) => `${f.cluster}\u0000${f.fingerprint}`;

function delta(
  current: readonly FleetFinding[],
  rows: readonly ClusterRow[],
  previous: FleetReport,
  baseline: string,
): FleetDelta {
  const audited = (rs: readonly ClusterRow[]) =>
    new Set(rs.filter((r) => r.reportFile !== undefined && r.verdict !== 'error').map((r) => r.name));
  const now = audited(rows);
  const before = audited(previous.clusters);
  const both = new Set([...now].filter((n) => before.has(n)));
  const names = new Set([...rows.map((r) => r.name), ...previous.clusters.map((r) => r.name)]);
  const prev = new Set(previous.findings.map(keyOf));
  const cur = new Set(current.map(keyOf));
  return {
    baseline,
    added: current.filter((f) => both.has(f.cluster) && !prev.has(keyOf(f))),
    fixed: previous.findings.filter((f) => both.has(f.cluster) && !cur.has(keyOf(f))),
    incomparable: [...names].filter((n) => !both.has(n)).sort(),
  };
}

export function assembleFleetReport(input: {
  fleet: string;
  results: readonly ClusterResult[];
  failOn: FailOn;
  now: Date;
  sortBy?: string;
  previous?: { report: FleetReport; file: string };
}): FleetReport {
  const rows = ordered(
    input.results.map((r) => row(r, input.failOn)),
    input.sortBy,
  );
  const findings: FleetFinding[] = [];
  let target: TargetSummary | undefined;
  for (const r of input.results) {
    if (r.outcome.kind !== 'audited') continue;
    target ??= r.outcome.report.target;
    for (const f of r.outcome.report.findings) findings.push({ ...f, cluster: r.cluster.name });
  }
  const totals = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const r of rows) totals[r.verdict]++;
  return {
    kind: 'FerryFleetReport',
    version: 1,
    generatedAt: input.now.toISOString(),
    fleet: input.fleet,
    failOn: input.failOn,
    ...(target !== undefined && { target }),
    clusters: rows,
    rules: groups(findings),
    totals: { ...totals, clusters: rows.length },
    findings,
    ...(input.previous && { delta: delta(findings, rows, input.previous.report, input.previous.file) }),
  };
}

/** Exit 1 unless every cluster is ready; 4 when a rule failed anywhere. */
export function fleetExitCode(report: FleetReport): 0 | 1 | 4 {
  if (report.totals.error > 0) return 4;
  return report.totals.ready === report.totals.clusters ? 0 : 1;
}
