/**
 * `dist` holds what ferry runs, not how it is tested: the build compiles no test and no test
 * fixture (`src/**\/testing*.ts`, colocated with the tests that use them), and no production module
 * imports one, which would drag it into the build whatever the build config excludes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

const isTest = (f: string) => f.endsWith('.test.ts');
const isFixture = (f: string) => /^testing([.-]|$)/.test(basename(f));
const testOnly = (f: string) =>
  isTest(f) || isFixture(f) || !relative(join(ROOT, 'test'), f).startsWith('..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The files tsconfig.build.json compiles, as tsc reads it. */
function buildFiles(): string[] {
  const file = join(ROOT, 'tsconfig.build.json');
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  return ts
    .parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, file)
    .fileNames.map((f) => resolve(f));
}

/** Relative imports of a module (static, re-exports and dynamic `import()`), resolved to .ts files. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

const production = tsFiles(SRC).filter((f) => !testOnly(f));

it('the build config compiles the production modules and no test or test fixture', () => {
  const built = buildFiles();
  expect(built).toContain(join(SRC, 'cli', 'main.ts'));
  expect(built.filter(testOnly).map((f) => relative(ROOT, f))).toEqual([]);
  // The fixtures this guards against exist: the exclusion is not vacuous.
  expect(tsFiles(SRC).filter(isFixture).length).toBeGreaterThan(0);
});

it('no production module imports a test, a test fixture or test support', () => {
  const bad = production.flatMap((f) =>
    importsOf(f)
      .filter(testOnly)
      .map((t) => `${relative(ROOT, f)} → ${relative(ROOT, t)}`),
  );
  expect(bad).toEqual([]);
  // The walk does see imports, dynamic ones included.
  expect(importsOf(join(SRC, 'cli', 'registry.ts'))).toContain(join(SRC, 'cli', 'explain.ts'));
});

/** Modules that touch the file system, or read a snapshot from it. */
const FILE_IO = [/^node:fs(\/promises)?$/, /\/snapshot\/load\.js$/, /\/util\/atomic-write\.js$/];
const CORE = ['audit', 'plan', 'facts', 'generate', 'knowledge'].map((d) => join(SRC, d));

it('the test fixtures of the core folders are pure: file I/O for tests lives in the testing files of the I/O folders (snapshot, adapters, lab, mgmt, run)', () => {
  const fixtures = tsFiles(SRC).filter(
    (f) => isFixture(f) && CORE.some((c) => !relative(c, f).startsWith('..')),
  );
  expect(fixtures.length).toBeGreaterThan(0);
  const io = fixtures.flatMap((f) =>
    ts
      .preProcessFile(readFileSync(f, 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((s) => FILE_IO.some((re) => re.test(s)))
      .map((s) => `${relative(ROOT, f)} → ${s}`),
  );
  expect(io).toEqual([]);
});
