/**
 * A previous fleet report (OUT/fleet.json) read back for `--baseline`: only what the comparison
 * uses is checked (which clusters were audited, and each finding's cluster and fingerprint), so a
 * report of an older ferry with more fields still compares.
 */
import { inputError } from '../errors.js';
import { isRecord } from '../util/walk.js';
import type { FleetReport } from './report.js';

const FIX = 'give --baseline the fleet.json a previous `ferry fleet audit` wrote in its --out directory';

export function parsePreviousFleetReport(text: string, file: string): FleetReport {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw inputError(`${file} is not JSON: ${(err as Error).message}`, { file }, FIX);
  }
  if (!isRecord(doc) || doc['kind'] !== 'FerryFleetReport')
    throw inputError(
      `${file} is not a ferry fleet report (kind is not FerryFleetReport)`,
      { file, field: 'kind' },
      FIX,
    );
  if (doc['version'] !== 1)
    throw inputError(
      `${file} is a fleet report of version ${JSON.stringify(doc['version'])}; this ferry reads version 1`,
      { file, field: 'version' },
      FIX,
    );
  const clusters = doc['clusters'];
  const findings = doc['findings'];
  if (!Array.isArray(clusters) || !clusters.every((c) => isRecord(c) && typeof c['name'] === 'string'))
    throw inputError(
      `${file}: clusters must be a list of clusters with a name`,
      { file, field: 'clusters' },
      FIX,
    );
  if (
    !Array.isArray(findings) ||
    !findings.every(
      (f) => isRecord(f) && typeof f['cluster'] === 'string' && typeof f['fingerprint'] === 'string',
    )
  )
    throw inputError(
      `${file}: findings must be a list of findings with a cluster and a fingerprint`,
      { file, field: 'findings' },
      FIX,
    );
  return doc as unknown as FleetReport;
}
