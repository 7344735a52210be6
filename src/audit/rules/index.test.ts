import { describe, expect, it } from 'vitest';
import { CATALOG_IDS, RULE_CATALOG } from '../../knowledge/rule-catalog.js';
import { validateRules } from '../rule.js';
import { ALL_RULES } from './index.js';

describe('the rule set', () => {
  it('is well formed (unique kebab-case ids, family prefix, inputs, explicit needs for node input)', () => {
    expect(validateRules(ALL_RULES)).toEqual([]);
  });

  it('uses only ids from the blockers.md catalog, with its input tags', () => {
    for (const r of ALL_RULES) {
      expect(CATALOG_IDS.has(r.id), r.id).toBe(true);
      const entry = RULE_CATALOG.find((e) => e.id === r.id)!;
      expect([...r.inputs].sort(), r.id).toEqual([...entry.inputs].sort());
    }
  });

  it('catches malformed rule definitions', () => {
    const base = ALL_RULES[0]!;
    expect(
      validateRules([
        base,
        base,
        { ...base, id: 'Bad_Id' },
        { ...base, id: 'other.thing' },
        { ...base, id: 'bootstrap.x', inputs: ['node'] },
      ]),
    ).toEqual([
      `rule id "${base.id}" is defined twice`,
      'rule id "Bad_Id" is not <family>.<name> in kebab-case',
      'rule Bad_Id: family "bootstrap" does not match its id',
      'rule other.thing: family "bootstrap" does not match its id',
      "rule bootstrap.x: input 'node' needs an explicit 'requires' list",
    ]);
  });
});
