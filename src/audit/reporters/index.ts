/**
 * The registry of output formats, each a function of the AuditReport alone. `ferry audit -o`
 * takes its list, its error message and its help from here, so a format registered here is one
 * the command line offers.
 */
import type { AuditReport } from '../engine.js';
import type { RenderOptions } from './common.js';
import { renderHtml } from './html.js';
import { renderJson } from './json.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './md.js';
import { renderSarif } from './sarif.js';
import { renderTable } from './table.js';
import { renderYaml } from './yaml.js';

export interface Reporter {
  render: (r: AuditReport, opts: RenderOptions) => string;
  /** A few words for `ferry audit --help`. */
  what: string;
}

/** In the order `--help` lists them; the first is the default. */
export const REPORTERS = {
  table: { render: renderTable, what: 'findings by severity, for a terminal' },
  json: { render: renderJson, what: 'the report itself (doubles as a --baseline file)' },
  yaml: { render: renderYaml, what: 'the same document as json' },
  sarif: { render: renderSarif, what: 'SARIF 2.1.0, for code-scanning UIs' },
  junit: { render: renderJunit, what: 'JUnit XML, one testcase per rule, for CI dashboards' },
  md: { render: renderMarkdown, what: 'Markdown, for pull requests and tickets' },
  html: { render: renderHtml, what: 'one self-contained HTML page' },
} as const satisfies Record<string, Reporter>;

export type ReportFormat = keyof typeof REPORTERS;

export const REPORT_FORMATS = Object.keys(REPORTERS) as ReportFormat[];

export const DEFAULT_REPORT_FORMAT: ReportFormat = REPORT_FORMATS[0]!;

export function renderReport(
  report: AuditReport,
  format: ReportFormat,
  opts: RenderOptions = { color: false },
): string {
  return REPORTERS[format].render(report, opts);
}
