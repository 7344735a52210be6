/**
 * A rule skipped because its input was not observed (the server refused the list) is rendered as
 * skipped, with that reason, by every format; never as passed. The human formats say what was not
 * observed before any finding.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deriveFacts } from '../../facts/derive.js';
import { type AuditReport, runAudit } from '../engine.js';
import type { Rule } from '../rule.js';
import { makeSnapshot, obj } from '../testing.js';
import { REPORT_FORMATS, type ReportFormat, renderReport } from './index.js';

const PDB_REFUSED =
  'poddisruptionbudgets.policy is forbidden: User "view-user" cannot list resource "poddisruptionbudgets" in API group "policy" at the cluster scope';

function report(): AuditReport {
  const readsPdbs: Rule = {
    id: 'workload.pdb-example',
    family: 'workload',
    severity: 'blocker',
    title: 'PDB example',
    inputs: ['api'],
    reads: ['pods', 'poddisruptionbudgets'],
    check: () => [],
  };
  const perNode: Rule = {
    id: 'nodes.example',
    family: 'nodes',
    severity: 'risk',
    title: 'Node example',
    inputs: ['api'],
    reads: ['nodes'],
    check: (ctx) =>
      ctx.snapshot.resources.nodes.map((n) => ({
        message: `node ${n.metadata.name}`,
        evidence: [{ kind: 'node', node: n.metadata.name }],
        remediation: 'fix it',
      })),
  };
  const snapshot = makeSnapshot({ resources: { nodes: [obj('Node', 'cp-1')] } });
  snapshot.manifest.partial = true;
  snapshot.manifest.unobserved = [
    {
      input: 'poddisruptionbudgets',
      reason: 'forbidden',
      verb: 'list',
      group: 'policy',
      resource: 'poddisruptionbudgets',
      message: PDB_REFUSED,
    },
  ];
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  return runAudit({
    snapshot,
    facts,
    target: facts.target,
    rules: [readsPdbs, perNode],
    now: new Date('2026-08-20T10:00:00Z'),
  });
}

const r = report();
const REASON = 'not observed: poddisruptionbudgets (list poddisruptionbudgets.policy forbidden (HTTP 403))';

describe('a rule skipped because its input was not observed', () => {
  it('is skipped, not passed, in the report every format renders', () => {
    expect(r.rules.map((m) => [m.id, m.outcome])).toEqual([
      ['workload.pdb-example', 'skipped'],
      ['nodes.example', 'failed'],
    ]);
    expect(r.counts).toMatchObject({ passed: 0, skipped: 1, failed: 1 });
  });

  it('is checked below in every format there is', () => {
    expect([...REPORT_FORMATS].sort()).toEqual(['html', 'json', 'junit', 'md', 'sarif', 'table', 'yaml']);
  });

  const render = (f: ReportFormat) => renderReport(r, f, { color: false });

  it.each(['json', 'yaml'] as const)('%s: the skip, its reason and the refused read', (f) => {
    const text = render(f);
    const doc = (f === 'json' ? JSON.parse(text) : parseYaml(text)) as AuditReport;
    expect(doc.skipped).toEqual([
      expect.objectContaining({
        ruleId: 'workload.pdb-example',
        because: 'not-observed',
        missing: ['poddisruptionbudgets'],
        notObserved: [expect.objectContaining({ message: PDB_REFUSED })],
      }),
    ]);
    expect(doc.snapshot.unobserved).toEqual(r.snapshot.unobserved);
    expect(doc.snapshot.partial).toBe(true);
  });

  it('sarif: a warning notification naming the rule and why, no result for it', () => {
    const doc = JSON.parse(render('sarif'));
    const run = doc.runs[0];
    expect(run.invocations[0].toolConfigurationNotifications).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        descriptor: expect.objectContaining({ id: 'workload.pdb-example' }),
        message: { text: expect.stringContaining(`skipped: ${REASON}.`) },
      }),
    );
    expect(run.results.filter((x: { ruleId: string }) => x.ruleId === 'workload.pdb-example')).toEqual([]);
  });

  it('junit: a <skipped> test case with the reason', () => {
    const xml = render('junit');
    const tc = xml.slice(xml.indexOf('name="workload.pdb-example'));
    expect(tc.slice(0, tc.indexOf('</testcase>'))).toContain(`<skipped message="${REASON}:`);
  });

  it.each(['table', 'md', 'html'] as const)(
    '%s: the reason in the skipped rules, what was not observed first',
    (f) => {
      const text = render(f);
      expect(text).toContain(REASON);
      const notObserved = text.indexOf('Not observed (1)');
      expect(notObserved).toBeGreaterThan(0);
      expect(notObserved).toBeLessThan(text.indexOf('node cp-1'));
      expect(text).toContain(PDB_REFUSED.replace(/"/g, f === 'html' ? '&quot;' : '"'));
      expect(text).toContain('taken with --allow-partial');
    },
  );
});
