/** Every output format, each a function of the AuditReport alone. */
import type { AuditReport } from '../engine.js';
import type { RenderOptions } from './common.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './md.js';
import { renderSarif } from './sarif.js';
import { renderTable } from './table.js';
import { renderYaml } from './yaml.js';

export type ReportFormat = 'table' | 'json' | 'yaml' | 'sarif' | 'junit' | 'md' | 'html';

export const REPORT_FORMATS: readonly ReportFormat[] = [
  'table',
  'json',
  'yaml',
  'sarif',
  'junit',
  'md',
  'html',
];

const RENDERERS: Record<ReportFormat, (r: AuditReport, opts: RenderOptions) => string> = {
  table: renderTable,
  json: renderJson,
  yaml: renderYaml,
  sarif: renderSarif,
  junit: renderJunit,
  md: renderMarkdown,
  html: renderHtml,
};

export function renderReport(
  report: AuditReport,
  format: ReportFormat,
  opts: RenderOptions = { color: false },
): string {
  return RENDERERS[format](report, opts);
}

export type { RenderOptions } from './common.js';
