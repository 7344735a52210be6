/**
 * docs/rules.md stays the one index of the catalog: every catalog id (implemented or not) has an
 * anchor and an index row, and every rule's `docs` link lands on an anchor.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ALL_RULES } from '../../src/audit/rules/index.js';
import { RULE_CATALOG } from '../../src/knowledge/rule-catalog.js';

const DOC = readFileSync(
  join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'docs', 'rules.md'),
  'utf8',
);
const anchors = new Set([...DOC.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));
const rows = new Set([...DOC.matchAll(/^\| \[`([^`]+)`\]\(#\1\) \|/gm)].map((m) => m[1]!));

it('docs/rules.md indexes and anchors every catalog id, and every rule links to its anchor', () => {
  expect(RULE_CATALOG.filter((e) => !anchors.has(e.id)).map((e) => e.id)).toEqual([]);
  expect(RULE_CATALOG.filter((e) => !rows.has(e.id)).map((e) => e.id)).toEqual([]);
  expect([...rows].filter((id) => !RULE_CATALOG.some((e) => e.id === id))).toEqual([]);
  const broken = ALL_RULES.filter((r) => r.docs !== `docs/rules.md#${r.id}` || !anchors.has(r.id));
  expect(broken.map((r) => `${r.id}: ${r.docs}`)).toEqual([]);
  // The index says which ids are not implemented, and why.
  for (const e of RULE_CATALOG) {
    const implemented = ALL_RULES.some((r) => r.id === e.id);
    const row = DOC.split('\n').find((l) => l.startsWith(`| [\`${e.id}\`]`))!;
    expect(row.includes('not implemented'), e.id).toBe(!implemented);
  }
});
