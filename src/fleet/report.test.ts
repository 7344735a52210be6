import { beforeAll, describe, expect, it } from 'vitest';
import { type AuditReport, runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { deriveFacts } from '../facts/derive.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import type { FleetCluster } from './config.js';
import { renderFleetReport } from './render.js';
import { assembleFleetReport, type ClusterResult, fleetExitCode } from './report.js';

let example: AuditReport;
let clean: AuditReport;

beforeAll(async () => {
  const snapshot = await exampleSnapshot();
  const facts = deriveFacts(snapshot);
  example = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date(0) });
  // The same cluster with every finding gone: what a cluster that is ready reports.
  clean = { ...example, findings: [], counts: { ...example.counts, blocker: 0, risk: 0, info: 0, total: 0 } };
});

const cluster = (name: string, labels: Record<string, string> = {}): FleetCluster => ({
  name,
  labels,
  source: { kind: 'snapshot', dir: `/f/${name}`, shown: name },
});
const audited = (name: string, report: AuditReport, labels: Record<string, string> = {}): ClusterResult => ({
  cluster: cluster(name, labels),
  outcome: { kind: 'audited', report, reportFile: `out/clusters/${name}/report.json` },
});

describe('the fleet report', () => {
  it('gives each cluster its verdict, ordered by wave, and groups each rule across the clusters it affects', () => {
    const r = assembleFleetReport({
      fleet: 'fleet.yaml',
      failOn: 'blocker',
      now: new Date(0),
      sortBy: 'wave',
      results: [
        audited('b-prod', example, { wave: '10' }),
        audited('a-prod', example, { wave: '2' }),
        audited('ready', clean, { wave: '1' }),
        {
          cluster: cluster('gone'),
          outcome: { kind: 'unreachable', reason: 'connect ECONNREFUSED 127.0.0.1:1' },
        },
      ],
    });
    expect(r.clusters.map((c) => [c.name, c.verdict])).toEqual([
      ['ready', 'ready'],
      ['a-prod', 'blocked'],
      ['b-prod', 'blocked'],
      ['gone', 'unreachable'],
    ]);
    expect(r.totals).toMatchObject({ clusters: 4, ready: 1, blocked: 2, unreachable: 1 });
    expect(r.findings).toHaveLength(2 * example.findings.length);
    const blockers = new Set(example.findings.filter((f) => f.severity === 'blocker').map((f) => f.ruleId));
    const first = r.rules[0]!;
    expect(blockers.has(first.ruleId)).toBe(true);
    expect(first.clusters.map((c) => c.name)).toEqual(['b-prod', 'a-prod']);
    expect(first.findings).toBe(2 * example.findings.filter((f) => f.ruleId === first.ruleId).length);
    expect(r.rules.map((g) => g.ruleId)).toEqual([...new Set(r.rules.map((g) => g.ruleId))]);
    expect(fleetExitCode(r)).toBe(1);
    expect(fleetExitCode({ ...r, totals: { ...r.totals, ready: 4 } })).toBe(0);
  });

  it('calls a cluster whose rules could not read their inputs not observed, never ready', () => {
    const rule = example.rules.find((x) => x.severity === 'blocker')!;
    const unread: AuditReport = {
      ...clean,
      skipped: [
        {
          ruleId: rule.id,
          because: 'not-observed',
          missing: ['pods'],
          howToProvide: 'grant list pods',
          notObserved: [],
        },
      ],
    };
    const r = assembleFleetReport({
      fleet: 'f',
      failOn: 'blocker',
      now: new Date(0),
      results: [audited('x', unread)],
    });
    expect(r.clusters[0]).toMatchObject({ verdict: 'not-observed', notObserved: [rule.id] });
    expect(fleetExitCode(r)).toBe(1);
    // --fail-on never: nothing at or above it, so nothing unobserved counts.
    const never = assembleFleetReport({
      fleet: 'f',
      failOn: 'never',
      now: new Date(0),
      results: [audited('x', unread)],
    });
    expect(never.clusters[0]!.verdict).toBe('ready');
  });

  it('against a previous report: new and fixed per cluster, and clusters read in only one run not compared', () => {
    const before = assembleFleetReport({
      fleet: 'f',
      failOn: 'blocker',
      now: new Date(0),
      results: [audited('a', example), audited('b', example), audited('c', example)],
    });
    const [dropped, ...rest] = example.findings;
    const fewer = { ...example, findings: rest };
    const r = assembleFleetReport({
      fleet: 'f',
      failOn: 'blocker',
      now: new Date(1),
      previous: { report: before, file: 'old/fleet.json' },
      results: [
        audited('a', fewer),
        audited('b', example),
        { cluster: cluster('c'), outcome: { kind: 'unreachable', reason: 'timeout' } },
        audited('d', example),
      ],
    });
    expect(r.delta!.fixed.map((f) => [f.cluster, f.fingerprint])).toEqual([['a', dropped!.fingerprint]]);
    expect(r.delta!.added).toEqual([]);
    // c was not read now, d was not read before: neither is "fixed" or "new".
    expect(r.delta!.incomparable).toEqual(['c', 'd']);
    const text = renderFleetReport(r, 'table');
    expect(text).toContain('Since old/fleet.json: 0 new, 1 fixed.');
    expect(text).toContain('not compared (read in only one run): c, d');
  });

  it('renders the same report as table, Markdown and JSON', () => {
    const r = assembleFleetReport({
      fleet: 'fleet.yaml',
      failOn: 'blocker',
      now: new Date(0),
      results: [
        audited('a', example, { env: 'prod' }),
        { cluster: cluster('z'), outcome: { kind: 'unreadable', reason: 'no such directory' } },
      ],
    });
    const table = renderFleetReport(r, 'table');
    expect(table.split('\n')[0]).toBe(
      `Fleet fleet.yaml, target ${table.split('target ')[1]!.split(':')[0]}: 0 of 2 cluster(s) ready, 1 blocked, 1 unreadable`,
    );
    expect(table).toMatch(/^a +env=prod +\d+ blocker\(s\)/m);
    expect(table).toContain('unreadable: no such directory');
    const md = renderFleetReport(r, 'md');
    expect(md).toContain('| a | env=prod |');
    expect(md).toContain(`### blocker: \`${r.rules[0]!.ruleId}\``);
    expect(JSON.parse(renderFleetReport(r, 'json'))).toEqual(JSON.parse(JSON.stringify(r)));
  });
});
