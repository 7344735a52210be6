import { beforeAll, expect, it } from 'vitest';
import { type AuditReport, runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { deriveFacts } from '../facts/derive.js';
import { sarifValidator } from '../lab/testing-sarif.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import type { ClusterResult } from './report.js';
import { fleetSarifLog } from './sarif.js';

let report: AuditReport;
beforeAll(async () => {
  const snapshot = await exampleSnapshot();
  const facts = deriveFacts(snapshot);
  report = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date(0) });
});

it('is one schema-valid SARIF log, a run per cluster, and an unread cluster is a failed run, not a clean one', () => {
  const results: ClusterResult[] = [
    {
      cluster: { name: 'a', labels: { wave: '1' }, source: { kind: 'snapshot', dir: '/a', shown: 'a' } },
      outcome: { kind: 'audited', report, reportFile: 'out/clusters/a/report.json' },
    },
    {
      cluster: { name: 'gone', labels: {}, source: { kind: 'kubeconfig', path: '/g', shown: 'g' } },
      outcome: { kind: 'unreachable', reason: 'connect ECONNREFUSED 127.0.0.1:1' },
    },
  ];
  const log = JSON.parse(JSON.stringify(fleetSarifLog(results)));
  const validate = sarifValidator();
  expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
  expect(log.runs.map((r: { automationDetails: { id: string } }) => r.automationDetails.id)).toEqual([
    'ferry-fleet/a',
    'ferry-fleet/gone',
  ]);
  expect(log.runs[0].results).toHaveLength(report.findings.length);
  expect(log.runs[0].properties).toMatchObject({ cluster: 'a', labels: { wave: '1' } });
  expect(log.runs[1].results).toEqual([]);
  expect(log.runs[1].invocations[0]).toEqual({
    executionSuccessful: false,
    toolExecutionNotifications: [
      { level: 'error', message: { text: 'unreachable: connect ECONNREFUSED 127.0.0.1:1' } },
    ],
  });
  // The validator bites.
  log.runs[1].invocations[0].executionSuccessful = 'no';
  expect(validate(log)).toBe(false);
});
