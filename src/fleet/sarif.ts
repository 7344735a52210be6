/**
 * The fleet as one SARIF log: a run per cluster (its audit's run, as `ferry audit -o sarif` writes
 * it, named by `automationDetails.id` = ferry-fleet/CLUSTER), so code-scanning UIs and dashboards
 * see every finding with its cluster. A cluster that could not be read is a run without results
 * whose invocation did not succeed, with the reason: no results there means not read, not clean.
 */
import type { Log, Run } from 'sarif';
import { sarifLog } from '../audit/reporters/sarif.js';
import { VERSION } from '../version.js';
import type { ClusterResult } from './report.js';

export function fleetSarifLog(results: readonly ClusterResult[]): Log {
  const runs: Run[] = results.map((r) => {
    const id = { id: `ferry-fleet/${r.cluster.name}` };
    const properties = { cluster: r.cluster.name, labels: r.cluster.labels };
    const o = r.outcome;
    if (o.kind === 'audited') {
      const run = sarifLog(o.report).runs[0]!;
      return { ...run, automationDetails: id, properties: { ...run.properties, ...properties } };
    }
    return {
      tool: { driver: { name: 'ferry', version: VERSION, semanticVersion: VERSION, rules: [] } },
      automationDetails: id,
      invocations: [
        {
          executionSuccessful: false,
          toolExecutionNotifications: [{ level: 'error', message: { text: `${o.kind}: ${o.reason}` } }],
        },
      ],
      results: [],
      properties,
    };
  });
  return { $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs };
}

export function renderFleetSarif(results: readonly ClusterResult[]): string {
  return `${JSON.stringify(fleetSarifLog(results), null, 2)}\n`;
}
