import { describe, expect, it } from 'vitest';
import { formatMatcher, matches, parseMatcherGroup } from './label-match.js';

const group = (t: string) => {
  const g = parseMatcherGroup(t);
  if ('error' in g) throw new Error(g.error);
  return g;
};

describe('label matchers', () => {
  it('parses the four operators, quoted or not, and a braced group', () => {
    expect(group('severity=critical')).toEqual([
      { name: 'severity', value: 'critical', isRegex: false, isEqual: true },
    ]);
    expect(group('{severity!="warning", node=~"w-.*",team!~ops}')).toEqual([
      { name: 'severity', value: 'warning', isRegex: false, isEqual: false },
      { name: 'node', value: 'w-.*', isRegex: true, isEqual: true },
      { name: 'team', value: 'ops', isRegex: true, isEqual: false },
    ]);
    expect(group('msg="a, b \\"c\\""')).toEqual([
      { name: 'msg', value: 'a, b "c"', isRegex: false, isEqual: true },
    ]);
  });

  it('refuses what is not a matcher, naming it', () => {
    expect(parseMatcherGroup('')).toEqual({ error: 'no matcher given' });
    expect(parseMatcherGroup('severity')).toEqual({
      error: expect.stringContaining('"severity" is not NAME=VALUE'),
    });
    expect(parseMatcherGroup('a=b,9x=c')).toEqual({ error: expect.stringContaining('"9x=c"') });
    expect(parseMatcherGroup('node=~"w-("')).toEqual({ error: expect.stringContaining('node=~"w-("') });
  });

  it('matches every matcher of a group; regexes anchored; a missing label is empty', () => {
    const labels = { alertname: 'KubeNodeNotReady', severity: 'critical', node: 'w-12' };
    expect(matches(labels, group('severity=critical'))).toBe(true);
    expect(matches(labels, group('severity=critical,node=w-1'))).toBe(false);
    expect(matches(labels, group('node=~"w-1"'))).toBe(false);
    expect(matches(labels, group('node=~"w-1.*"'))).toBe(true);
    expect(matches(labels, group('node!~"w-.*"'))).toBe(false);
    expect(matches(labels, group('team!=ops'))).toBe(true);
    expect(matches(labels, group('team=""'))).toBe(true);
    expect(matches(labels, group('severity!=critical'))).toBe(false);
  });

  it('prints a matcher as Alertmanager does', () => {
    expect(group('a!~"x.*",b=c').map(formatMatcher)).toEqual(['a!~"x.*"', 'b="c"']);
  });
});
