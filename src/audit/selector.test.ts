import { describe, expect, it } from 'vitest';
import { fromLabelSelector, fromMap, matches, parseSelector, SelectorSyntaxError } from './selector.js';

describe('label selectors', () => {
  const web = { app: 'web', tier: 'front' };

  it('parses and matches the string form', () => {
    expect(matches(parseSelector('app=web'), web)).toBe(true);
    expect(matches(parseSelector('app==web,tier=front'), web)).toBe(true);
    expect(matches(parseSelector('app!=web'), web)).toBe(false);
    expect(matches(parseSelector('app!=db'), web)).toBe(true);
    expect(matches(parseSelector('tier in (front, back)'), web)).toBe(true);
    expect(matches(parseSelector('tier notin (front)'), web)).toBe(false);
    expect(matches(parseSelector('app,!canary'), web)).toBe(true);
    expect(matches(parseSelector('canary'), web)).toBe(false);
    expect(matches(parseSelector('example.com/team=a'), { 'example.com/team': 'a' })).toBe(true);
  });

  it('rejects malformed selectors with the bad term', () => {
    expect(() => parseSelector('app=web,')).toThrow(SelectorSyntaxError);
    expect(() => parseSelector('app in web')).toThrow(/cannot parse "app in web"/);
    expect(() => parseSelector('bad key=x')).toThrow(SelectorSyntaxError);
  });

  it('follows API semantics for structured selectors', () => {
    expect(matches(fromLabelSelector(undefined), web)).toBe(false); // null selector: nothing
    expect(matches(fromLabelSelector({}), web)).toBe(true); // empty selector: everything
    expect(matches(fromLabelSelector({ matchLabels: { app: 'web' } }), web)).toBe(true);
    expect(
      matches(
        fromLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }),
        web,
      ),
    ).toBe(false);
    expect(
      matches(fromLabelSelector({ matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] }), web),
    ).toBe(true);
    expect(matches(fromLabelSelector({ matchExpressions: [{ key: 'x', operator: 'Bogus' }] }), web)).toBe(
      false,
    );
    expect(matches(fromMap({}), web)).toBe(false);
    expect(matches(fromMap({ app: 'web' }), web)).toBe(true);
  });
});
