/** Machine-readable report: the AuditReport itself, tagged with a kind and format version. */
import type { AuditReport } from '../engine.js';

export const REPORT_FORMAT_VERSION = 1;

/** The document JSON and YAML both emit; a JSON report doubles as a `--baseline` file. */
export function reportDocument(
  r: AuditReport,
): { kind: 'ferry-audit-report'; formatVersion: number } & AuditReport {
  return { kind: 'ferry-audit-report', formatVersion: REPORT_FORMAT_VERSION, ...r };
}

export function renderJson(r: AuditReport): string {
  return `${JSON.stringify(reportDocument(r), null, 2)}\n`;
}
