import { resolve } from 'node:path';
import { explain, sourcesOf } from '../audit/explain.js';
import { inputError, usageError } from '../errors.js';
import { type ErrorSignature, SIGNATURES } from '../knowledge/signatures.js';
import { notText, readTextFile } from '../util/input-file.js';
import { oneOf, parseFlags } from './args.js';
import type { Command } from './command.js';

const usage = `usage: ferry explain "ERROR TEXT" [-o table|json]
       ferry explain --log FILE [-o table|json]
       ferry explain --list

Explains an error seen during a migration: which audit rule predicts it, the cause and the fix.
--log scans a whole log and reports each matching line with its line number.
`;

const options = {
  log: { type: 'string' },
  list: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
} as const;

const NO_MATCH =
  'No known migration error matches this text. Run `ferry audit SNAPSHOT` (or `ferry audit --kubeconfig FILE`) to check the cluster for the known blockers; `ferry explain --list` shows the errors ferry recognises.';

export const command: Command = {
  name: 'explain',
  summary: 'explain an error message or a log from a migration: rule, cause, fix',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseFlags(argv, options, usage);
    const format = oneOf('output', values.output, ['table', 'json'] as const, 'table');

    if (values.list) {
      if (format === 'json') io.stdout(`${JSON.stringify(SIGNATURES.map(describe), null, 2)}\n`);
      else
        for (const s of SIGNATURES)
          io.stdout(`${s.id.padEnd(38)} ${(s.ruleId ?? '-').padEnd(36)} ${s.title}\n`);
      return 0;
    }

    let text: string;
    const isLog = values.log !== undefined;
    if (isLog) {
      if (positionals.length > 0)
        throw usageError('give either TEXT or --log FILE, not both', `see usage:\n${usage.trim()}`);
      text = await readTextFile(resolve(io.cwd, values.log!), {
        shown: values.log!,
        flag: '--log',
        provide: 'pass --log a log file saved from the migration',
      });
      const why = notText(text);
      if (why !== undefined)
        throw inputError(
          `not a text log: ${why}`,
          { file: values.log! },
          why.startsWith('it is gzip')
            ? `decompress it first: zcat ${values.log} > log.txt && ferry explain --log log.txt`
            : 'pass --log a text log saved from the migration (kubectl logs, journalctl, ferry run output)',
        );
    } else {
      if (positionals.length === 0)
        throw usageError('missing the error text to explain', `see usage:\n${usage.trim()}`);
      text = positionals.join(' ');
    }

    const result = explain(text, { foldLines: !isLog });
    if (format === 'json') {
      const doc = {
        matched: result.signatures.length > 0,
        matches: result.signatures.map((s) => ({
          ...describe(s),
          lines: result.lines.filter((l) => l.signatures.includes(s)).map((l) => l.line),
        })),
        ...(isLog
          ? {
              lines: result.lines.map((l) => ({
                line: l.line,
                text: l.text,
                signatures: l.signatures.map((s) => s.id),
              })),
            }
          : {}),
        ...(result.signatures.length === 0 ? { hint: NO_MATCH } : {}),
      };
      io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
      return 0;
    }

    if (result.signatures.length === 0) {
      io.stdout(`${NO_MATCH}\n`);
      return 0;
    }
    const out: string[] = [];
    if (isLog) {
      out.push(
        `${values.log}: ${result.lines.length} matching line(s), ${result.signatures.length} known error(s)`,
        '',
      );
      for (const l of result.lines) {
        const excerpt = l.text.trim().length > 140 ? `${l.text.trim().slice(0, 137)}...` : l.text.trim();
        out.push(
          `  line ${l.line}: ${l.signatures.map((s) => s.ruleId ?? s.id).join(', ')}`,
          `    ${excerpt}`,
        );
      }
      out.push('');
    }
    for (const s of result.signatures) out.push(...block(s), '');
    io.stdout(`${out.join('\n').trimEnd()}\n`);
    return 0;
  },
};

function describe(s: ErrorSignature) {
  return {
    signature: s.id,
    ruleId: s.ruleId,
    related: s.related ?? [],
    title: s.title,
    cause: s.cause,
    fix: s.fix,
    sources: sourcesOf(s),
  };
}

function block(s: ErrorSignature): string[] {
  const lines = [`${s.ruleId ?? s.id}: ${s.title}`, `  cause: ${s.cause}`, `  fix:   ${s.fix}`];
  if (s.ruleId)
    lines.push(
      `  check: ferry audit reports this as ${s.ruleId}${s.related?.length ? ` (see also ${s.related.join(', ')})` : ''}`,
    );
  else if (s.related?.length) lines.push(`  see also: ${s.related.join(', ')}`);
  lines.push(`  source: ${sourcesOf(s).join('; ')}`);
  return lines;
}
