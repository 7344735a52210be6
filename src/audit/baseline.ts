/**
 * Baseline: "report only what is new". A baseline file lists finding fingerprints (rule id +
 * object identity + field path, never the message), so rewording a message or re-running on a
 * new snapshot of the same cluster does not resurface known findings (lessons.md, kubescape
 * `--baseline`). A `-o json` audit report is accepted as a baseline too: it has the same
 * `findings[].fingerprint` shape.
 */
import { inputError } from '../errors.js';
import { jsonError } from '../snapshot/yaml.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { readTextFile } from '../util/input-file.js';
import { describeSubject, type Finding } from './findings.js';

export const BASELINE_FORMAT_VERSION = 1;

export interface BaselineEntry {
  fingerprint: string;
  ruleId: string;
  /** For humans reading a diff of the file; not used for matching. */
  subject: string;
}

export interface BaselineFile {
  kind: 'ferry-baseline';
  formatVersion: number;
  createdAt: string;
  findings: BaselineEntry[];
}

export function baselineOf(findings: readonly Finding[], now: Date): BaselineFile {
  const entries = findings.map((f) => ({
    fingerprint: f.fingerprint,
    ruleId: f.ruleId,
    subject: describeSubject(f.subject),
  }));
  // Sorted so that a baseline committed to git diffs cleanly between runs.
  entries.sort((a, b) => a.ruleId.localeCompare(b.ruleId) || a.fingerprint.localeCompare(b.fingerprint));
  return {
    kind: 'ferry-baseline',
    formatVersion: BASELINE_FORMAT_VERSION,
    createdAt: now.toISOString(),
    findings: entries,
  };
}

export async function writeBaseline(
  path: string,
  findings: readonly Finding[],
  now: Date,
  shown: string = path,
): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(baselineOf(findings, now), null, 2)}\n`, {
    origin: { flag: '--write-baseline', shown },
  });
}

const REMEDIATION =
  'pass a file written by `ferry audit --write-baseline FILE` (or a `ferry audit -o json` report)';

export function parseBaseline(text: string, file: string): Set<string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw jsonError(text, err as Error, { file }, REMEDIATION);
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { findings?: unknown }).findings))
    throw inputError('baseline has no "findings" list', { file, field: 'findings' }, REMEDIATION);
  const d = doc as { kind?: unknown; formatVersion?: unknown; findings: unknown[]; resolved?: unknown };
  if (d.kind === 'ferry-baseline' && d.formatVersion !== BASELINE_FORMAT_VERSION)
    throw inputError(
      `baseline format version ${String(d.formatVersion)} is not supported (this ferry reads version ${BASELINE_FORMAT_VERSION})`,
      { file, field: 'formatVersion' },
      'write the baseline again with this version of ferry',
    );
  const out = new Set<string>();
  // An `audit --kit` report lists the findings its kit resolves apart: they are known findings too.
  const lists: [string, unknown[]][] = [['findings', d.findings]];
  if (d.kind === 'ferry-audit-report' && Array.isArray(d.resolved)) lists.push(['resolved', d.resolved]);
  for (const [name, list] of lists)
    list.forEach((f, i) => {
      const fp = (f as { fingerprint?: unknown } | null)?.fingerprint;
      if (typeof fp !== 'string' || !/^[0-9a-f]{16,64}$/.test(fp))
        throw inputError(
          `${name}[${i}].fingerprint is missing or malformed`,
          { file, field: `${name}[${i}].fingerprint` },
          REMEDIATION,
        );
      out.add(fp);
    });
  return out;
}

/** `shown`: the path as the user typed it, for messages. */
export async function loadBaseline(path: string, shown: string = path): Promise<Set<string>> {
  const text = await readTextFile(path, {
    shown,
    flag: '--baseline',
    provide: 'pass --baseline a file written by `ferry audit --write-baseline FILE`',
  });
  return parseBaseline(text, shown);
}

/** Splits findings into those not in the baseline (reported) and those already known. */
export function applyBaseline(
  findings: readonly Finding[],
  known: ReadonlySet<string>,
): { fresh: Finding[]; known: Finding[] } {
  const fresh: Finding[] = [];
  const old: Finding[] = [];
  for (const f of findings) (known.has(f.fingerprint) ? old : fresh).push(f);
  return { fresh, known: old };
}
