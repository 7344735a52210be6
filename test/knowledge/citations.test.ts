/**
 * What ferry prints, writes into a kit or a runbook points at documents its users have:
 * docs/rules.md (by anchors that exist) and public upstream threads. The knowledge notes in
 * docs/knowledge/ are the maintainers' sources: code comments cite them, user-visible text does not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NOTES = readdirSync(join(ROOT, 'docs', 'knowledge')).filter(
  (f) => f.endsWith('.md') && f !== 'README.md',
);
const NOTE = new RegExp(`\\b(${NOTES.map((n) => n.replace(/[.-]/g, '\\$&')).join('|')})\\b`);
const ANCHORS = new Set(
  [...readFileSync(join(ROOT, 'docs', 'rules.md'), 'utf8').matchAll(/<a id="([^"]+)"><\/a>/g)].map(
    (m) => m[1]!,
  ),
);

/** Production modules: not tests, not test fixtures. */
function productionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return productionFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.startsWith('testing') ? [p] : [];
  });
}

/** The text of every string and template literal of a module (template parts without their expressions). */
function literals(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateLiteralToken(n))
      out.push(n.text);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const files = productionFiles(join(ROOT, 'src'));
const cache = new Map<string, string[]>();
const literalsOf = (f: string): string[] => cache.get(f) ?? cache.set(f, literals(f)).get(f)!;

it('finds the knowledge notes and the modules it checks', () => {
  expect(NOTES).toEqual(expect.arrayContaining(['blockers.md', 'talos.md', 'etcd.md', 'capi.md']));
  expect(files.length).toBeGreaterThan(100);
  // The walk sees template parts: a line of the plan's runbook.
  expect(
    literals(join(ROOT, 'src/plan/swap.ts')).some((t) => t.includes('docs/rules.md#capi.tcp-etcd-audit')),
  ).toBe(true);
});

it('user-visible text cites no knowledge note', () => {
  const hits = files.flatMap((f) =>
    literalsOf(f)
      .filter((t) => NOTE.test(t))
      .map((t) => `${relative(ROOT, f)}: ${t.slice(0, 120)}`),
  );
  expect(hits).toEqual([]);
});

it('user-visible text cites sections of docs/rules.md that exist', () => {
  const broken = files.flatMap((f) =>
    literalsOf(f).flatMap((t) =>
      [...t.matchAll(/docs\/rules\.md#([\w.-]+)/g)]
        .map((m) => m[1]!.replace(/\.$/, ''))
        .filter((id) => !ANCHORS.has(id))
        .map((id) => `${relative(ROOT, f)}: docs/rules.md#${id}`),
    ),
  );
  expect(broken).toEqual([]);
});
