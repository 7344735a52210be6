/**
 * Writes the score and the surviving mutants of the last `npm run mutate` into docs/mutation.md,
 * between its <!-- scores --> and <!-- survivors --> markers (the prose around them stays).
 *
 *   npx tsx scripts/mutation-report.ts [REPORT.json]   (default .ferry-cache/mutation/mutation.json)
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type MutationReport, renderScores, renderSurvivors } from '../test/support/mutation-report.js';

const root = resolve(import.meta.dirname, '..');
const reportFile = resolve(process.argv[2] ?? `${root}/.ferry-cache/mutation/mutation.json`);
const doc = `${root}/docs/mutation.md`;

if (!existsSync(reportFile)) {
  console.error(`error: no mutation report at ${reportFile}\n  fix: run \`npm run mutate\` first`);
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as MutationReport;
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
