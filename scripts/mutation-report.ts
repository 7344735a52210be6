/**
 * Writes the score and the surviving mutants of the last `npm run mutate` into docs/mutation.md,
 * between its <!-- scores --> and <!-- survivors --> markers (the prose around them stays).
 * Several reports (runs over parts of the scope) are merged, a file taken from the last that holds it.
 *
 *   npx tsx scripts/mutation-report.ts [REPORT.json ...]   (default .ferry-cache/mutation/mutation.json)
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  type MutationReport,
  mergeReports,
  renderScores,
  renderSurvivors,
} from '../test/support/mutation-report.js';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const reportFiles = (args.length > 0 ? args : [`${root}/.ferry-cache/mutation/mutation.json`]).map((f) =>
  resolve(f),
);
const doc = `${root}/docs/mutation.md`;

for (const f of reportFiles)
  if (!existsSync(f)) {
    console.error(`error: no mutation report at ${f}\n  fix: run \`npm run mutate\` first`);
    process.exit(2);
  }
const report = mergeReports(reportFiles.map((f) => JSON.parse(readFileSync(f, 'utf8')) as MutationReport));
const reportFile = reportFiles.join(', ');
let text = readFileSync(doc, 'utf8');
for (const [name, body] of [
  ['scores', renderScores(report)],
  ['survivors', renderSurvivors(report)],
] as const) {
  const re = new RegExp(`(<!-- ${name} -->\\n)[\\s\\S]*?(\\n<!-- /${name} -->)`);
  if (!re.test(text)) {
    console.error(
      `error: docs/mutation.md has no <!-- ${name} --> … <!-- /${name} --> block\n  fix: restore the markers`,
    );
    process.exit(2);
  }
  text = text.replace(re, (_m, open: string, close: string) => `${open}${body}${close}`);
}
writeFileSync(`${doc}.tmp`, text);
renameSync(`${doc}.tmp`, doc);
console.log(`docs/mutation.md: scores and survivors from ${reportFile}`);
