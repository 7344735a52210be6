/**
 * The core (audit, plan, facts, generate, knowledge, snapshot) never imports the lab; the lab may
 * import the core. What both need, such as label selectors, lives in src/util.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const CORE = ['audit', 'plan', 'facts', 'generate', 'knowledge', 'snapshot'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

const folderOf = (f: string) => relative(SRC, f).split('/')[0]!;

it('no core module imports the lab (tests may: they run against a lab)', () => {
  const files = CORE.flatMap((d) => tsFiles(join(SRC, d))).filter(
    (f) => !f.endsWith('.test.ts') && !/\/testing[^/]*$/.test(f),
  );
  expect(files.length).toBeGreaterThan(50);
  const bad = files.flatMap((f) =>
    ts
      .preProcessFile(readFileSync(f, 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((s) => s.startsWith('.') && folderOf(resolve(dirname(f), s)) === 'lab')
      .map((s) => `${relative(SRC, f)} → ${s}`),
  );
  expect(bad).toEqual([]);
});
