import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { SIGNATURES } from '../knowledge/signatures.js';
import { ruleDocsRef, ruleDocsUri } from './docs-link.js';
import { sourcesOf } from './explain.js';
import { ALL_RULES } from './rules/index.js';

const DOC = fileURLToPath(new URL('../../docs/rules.md', import.meta.url));
const ANCHORS = new Set([...readFileSync(DOC, 'utf8').matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));

it('every rule links to the same section by reference (explain, docs) and by URI (SARIF, html)', () => {
  for (const rule of ALL_RULES) {
    expect(rule.docs, rule.id).toBe(ruleDocsRef(rule.id));
    const uri = new URL(ruleDocsUri(rule.id, rule.docs));
    expect(uri.protocol).toBe('file:');
    expect(fileURLToPath(uri)).toBe(DOC);
    expect(existsSync(fileURLToPath(uri))).toBe(true);
    expect(uri.hash).toBe(`#${rule.id}`);
    expect(ANCHORS.has(rule.id), rule.id).toBe(true);
  }
  // explain cites the very reference the rule carries.
  for (const s of SIGNATURES.filter((x) => x.ruleId)) expect(sourcesOf(s)[0]).toBe(ruleDocsRef(s.ruleId!));
});

it('an http(s) documentation link is kept as it is', () => {
  expect(ruleDocsUri('x.y', 'https://example.org/rules#x.y')).toBe('https://example.org/rules#x.y');
});
