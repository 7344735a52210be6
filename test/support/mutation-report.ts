/**
 * Summary of a Stryker JSON report (mutation-testing-report-schema): the score per file and the
 * mutants that survived, as docs/mutation.md lists them. Stryker's score: detected (killed or timed
 * out) over valid (detected, survived, no coverage); compile and runtime errors and ignored mutants
 * are not counted.
 */
export type MutantStatus =
  | 'Killed'
  | 'Survived'
  | 'NoCoverage'
  | 'Timeout'
  | 'CompileError'
  | 'RuntimeError'
  | 'Ignored'
  | 'Pending';

export interface ReportMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

export interface MutationReport {
  files: Record<string, { source: string; mutants: ReportMutant[] }>;
}

export interface FileScore {
  file: string;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  invalid: number;
  /** Percentage, one decimal; undefined when the file has no valid mutant. */
  score: number | undefined;
}

export interface Survivor {
  file: string;
  line: number;
  mutator: string;
  original: string;
  replacement: string;
  status: 'Survived' | 'NoCoverage';
}

/** Only source files: an incremental report may still carry results for test files mutated before. */
const sourceFiles = (report: MutationReport) =>
  Object.entries(report.files).filter(([file]) => !/\.test\.ts$/.test(file));

const pct = (detected: number, valid: number) =>
  valid === 0 ? undefined : Math.round((1000 * detected) / valid) / 10;

export function fileScores(report: MutationReport): { files: FileScore[]; total: FileScore } {
  const files = sourceFiles(report)
    .map(([file, f]) => score(file, f.mutants))
    .sort((a, b) => a.file.localeCompare(b.file));
  return {
    files,
    total: score(
      'total',
      sourceFiles(report).flatMap(([, f]) => f.mutants),
    ),
  };
}

function score(file: string, mutants: ReportMutant[]): FileScore {
  const n = (s: MutantStatus) => mutants.filter((m) => m.status === s).length;
  const s = {
    file,
    killed: n('Killed'),
    timeout: n('Timeout'),
    survived: n('Survived'),
    noCoverage: n('NoCoverage'),
    invalid: n('CompileError') + n('RuntimeError'),
  };
  return { ...s, score: pct(s.killed + s.timeout, s.killed + s.timeout + s.survived + s.noCoverage) };
}

/** The code a mutant replaced, on one line, shortened. */
function originalText(source: string, m: ReportMutant): string {
  const lines = source.split('\n');
  const { start, end } = m.location;
  const text =
    start.line === end.line
      ? (lines[start.line - 1] ?? '').slice(start.column - 1, end.column - 1)
      : [
          (lines[start.line - 1] ?? '').slice(start.column - 1),
          ...lines.slice(start.line, end.line - 1),
          (lines[end.line - 1] ?? '').slice(0, end.column - 1),
        ].join(' ');
  return shorten(text);
}

const shorten = (s: string, max = 70) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
};

export function survivors(report: MutationReport): Survivor[] {
  const out: Survivor[] = [];
  for (const [file, f] of sourceFiles(report))
    for (const m of f.mutants)
      if (m.status === 'Survived' || m.status === 'NoCoverage')
        out.push({
          file,
          line: m.location.start.line,
          mutator: m.mutatorName,
          original: originalText(f.source, m),
          replacement: shorten(m.replacement ?? ''),
          status: m.status,
        });
  return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

const cell = (s: string) => `\`${s.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;

export function renderScores(report: MutationReport): string {
  const { files, total } = fileScores(report);
  const row = (f: FileScore) =>
    `| ${f.file === 'total' ? '**total**' : f.file} | ${f.score === undefined ? '–' : `${f.score}%`} | ${f.killed} | ${f.timeout} | ${f.survived} | ${f.noCoverage} |`;
  return [
    '| file | score | killed | timed out | survived | no coverage |',
    '|---|---|---|---|---|---|',
    ...files.map(row),
    row(total),
  ].join('\n');
}

export function renderSurvivors(report: MutationReport): string {
  const rows = survivors(report);
  if (rows.length === 0) return 'No mutant survived.';
  return [
    '| where | mutator | code | became |',
    '|---|---|---|---|',
    ...rows.map(
      (s) =>
        `| ${s.file}:${s.line}${s.status === 'NoCoverage' ? ' (no test runs it)' : ''} | ${s.mutator} | ${cell(s.original)} | ${cell(s.replacement)} |`,
    ),
  ].join('\n');
}

/**
 * Several runs' reports as one (Stryker runs a part of the scope at a time on two cores): a file
 * is taken from the last report that holds it, whole, never mixed from two runs.
 */
export function mergeReports(reports: readonly MutationReport[]): MutationReport {
  const files: MutationReport['files'] = {};
  for (const r of reports) for (const [name, f] of Object.entries(r.files)) files[name] = f;
  return { files };
}
