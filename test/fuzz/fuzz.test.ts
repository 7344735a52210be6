/**
 * The malformed-input fuzz suite (docs/fuzz.md): every case of cases.ts, against every command it
 * names, through the real CLI in process. Each must exit 2 with an error naming the file (and the
 * line or object), write nothing, print nothing on stdout and no key material anywhere.
 * `npx tsx scripts/fuzz-inputs.ts OUTDIR` writes the same inputs to replay by hand.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaled } from '../../src/util/testing-slowness.js';
import { type Bases, buildBases } from './bases.js';
import { type Category, type CommandId, fuzzCases, writeCase } from './cases.js';
import { caseDirName, caseSecrets, headline, type Outcome, runCase, treeChanges, treeOf } from './harness.js';

const cases = fuzzCases();
const failures: { name: string; outcome: Outcome }[] = [];
const outcomes: { name: string; outcome: Outcome }[] = [];
let root: string;
let bases: Bases;
let pristine: Awaited<ReturnType<typeof treeOf>>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-fuzz-'));
  await mkdir(join(root, 'bases'));
  bases = await buildBases(join(root, 'bases'));
  pristine = await treeOf(bases.root, { content: true });
});

afterAll(async () => {
  // FERRY_FUZZ_REPORT=FILE: every outcome, passing or not, one JSON line each (to review the messages).
  const report = process.env['FERRY_FUZZ_REPORT'];
  if (report)
    await writeFile(
      report,
      outcomes
        .map(({ name, outcome: o }) =>
          JSON.stringify({
            name,
            command: o.command,
            code: o.code,
            error: headline(o),
            problems: o.problems,
          }),
        )
        .join('\n'),
    );
  if (failures.length > 0) {
    const lines = failures.map(
      ({ name, outcome: o }) =>
        `  ${name} [${o.command}] exit ${o.code}: ${headline(o)}\n      ${o.problems.join('; ')}`,
    );
    console.log(`fuzz: ${failures.length} failing case command(s):\n${lines.join('\n')}`);
  }
  await rm(root, { recursive: true, force: true });
});

const CATEGORIES: Category[] = [
  'truncated',
  'empty',
  'binary',
  'wrong-kind',
  'bad-pem',
  'key-mismatch',
  'api-version',
  'missing-part',
  'plan-edit',
  'journal',
  'wrong-type',
  'bad-value',
];
const COMMANDS: CommandId[] = ['facts', 'audit', 'generate', 'plan', 'run-dry', 'run'];

describe('malformed inputs: exit 2, the file named, nothing written, no key material', () => {
  it('has at least 100 cases, of every input category (docs/fuzz.md), across every command', () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    expect(new Set(cases.map((c) => c.category))).toEqual(new Set(CATEGORIES));
    expect(new Set(cases.flatMap((c) => c.commands))).toEqual(new Set(COMMANDS));
  });

  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      const dir = join(root, caseDirName(i, c.name));
      await mkdir(dir);
      // Hard links to the bases: the last test checks that no command wrote into them.
      const touched = await writeCase(c, bases, dir, { link: true });
      const secrets = await caseSecrets(bases, c.base, dir, touched);
      const results: Outcome[] = [];
      for (const command of c.commands)
        results.push(await runCase(c, command, dir, { timeoutMs: scaled(30_000), secrets }));
      await rm(dir, { recursive: true, force: true });
      for (const outcome of results) outcomes.push({ name: c.name, outcome });
      const failed = results.filter((o) => o.problems.length > 0);
      for (const outcome of failed) failures.push({ name: c.name, outcome });
      const summary = failed
        .map((o) => `[${o.command}] exit ${o.code}: ${headline(o)}: ${o.problems.join('; ')}`)
        .join('\n');
      expect(
        failed.map((o) => o.command),
        summary,
      ).toEqual([]);
    });
  }

  it('left the bases as they were (the cases share their files)', async () => {
    expect(treeChanges(pristine, await treeOf(bases.root, { content: true }))).toEqual([]);
  });
});
