import { describe, expect, it } from 'vitest';
import {
  fromLabelSelector,
  labelSelectorString,
  matchesLabels,
  nodeSelectorRequirement,
  parseLabelSelector,
  readLabelSelector,
  SelectorError,
  selects,
} from './label-selector.js';

const web = { app: 'web', tier: 'front', n: '5' };
const sel = (s: string, labels: Record<string, string>) => matchesLabels(parseLabelSelector(s), labels);
const structured = (s: unknown, labels: Record<string, string> | undefined) =>
  selects(fromLabelSelector(s), labels);

describe('the string form', () => {
  it('supports =, ==, !=, in, notin, exists, !exists, gt and lt', () => {
    expect(sel('app=web', web)).toBe(true);
    expect(sel('app==web', web)).toBe(true);
    expect(sel('app=db', web)).toBe(false);
    expect(sel('app!=db', web)).toBe(true);
    expect(sel('app!=web', web)).toBe(false);
    // A key the object does not carry: != and notin hold, = and in do not.
    expect(sel('missing!=x', web)).toBe(true);
    expect(sel('missing notin (a)', web)).toBe(true);
    expect(sel('missing in (a)', web)).toBe(false);
    expect(sel('app in (db, web)', web)).toBe(true);
    expect(sel('app in (db)', web)).toBe(false);
    expect(sel('app notin (db,cache)', web)).toBe(true);
    expect(sel('tier notin (front)', web)).toBe(false);
    expect(sel('tier', web)).toBe(true);
    expect(sel('!tier', web)).toBe(false);
    expect(sel('!missing', web)).toBe(true);
    expect(sel('app,!canary', web)).toBe(true);
    expect(sel('n>4,n<6', web)).toBe(true);
    expect(sel('n>5', web)).toBe(false);
    expect(sel('app>1', web)).toBe(false); // not a number: no match
  });

  it('ANDs requirements, commas inside parentheses belonging to the set; "" selects everything', () => {
    expect(sel('app in (web,db),tier=front', { app: 'db', tier: 'front' })).toBe(true);
    expect(sel('app in (web,db),tier=back', { app: 'db', tier: 'front' })).toBe(false);
    expect(parseLabelSelector('a in (x,y), b')).toEqual([
      { key: 'a', op: 'in', values: ['x', 'y'] },
      { key: 'b', op: 'exists' },
    ]);
    expect(parseLabelSelector('  ')).toEqual([]);
    expect(sel('', {})).toBe(true);
  });

  it('accepts prefixed keys and rejects malformed selectors, naming the term', () => {
    expect(sel('example.com/team=a', { 'example.com/team': 'a' })).toBe(true);
    expect(
      sel('node-role.kubernetes.io/control-plane', { 'node-role.kubernetes.io/control-plane': '' }),
    ).toBe(true);
    expect(() => parseLabelSelector('app in (a')).toThrow(SelectorError);
    expect(() => parseLabelSelector('app in ()')).toThrow(/values set can't be empty/);
    expect(() => parseLabelSelector('app=a b')).toThrow(SelectorError);
    expect(() => parseLabelSelector('-bad=x')).toThrow(/invalid label key "-bad"/);
    expect(() => parseLabelSelector('a,,b')).toThrow(/empty requirement/);
    expect(() => parseLabelSelector('app=web,')).toThrow(/empty requirement/);
    expect(() => parseLabelSelector('app in web')).toThrow(/found 'app in web'/);
    expect(() => parseLabelSelector('n>x')).toThrow(/must be an integer/);
  });
});

describe('metav1.LabelSelector', () => {
  it('selects nothing when absent, everything when empty', () => {
    expect(fromLabelSelector(undefined)).toBeNull();
    expect(fromLabelSelector(null)).toBeNull();
    expect(structured(undefined, web)).toBe(false);
    expect(structured({}, web)).toBe(true);
    expect(structured({}, undefined)).toBe(true);
    expect(structured({ matchLabels: {}, matchExpressions: [] }, {})).toBe(true);
  });

  it('ANDs matchLabels and matchExpressions with In, NotIn, Exists and DoesNotExist', () => {
    const s = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'back'] },
        { key: 'track', operator: 'NotIn', values: ['canary'] },
        { key: 'n', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    expect(structured(s, web)).toBe(true);
    expect(structured(s, { ...web, app: 'db' })).toBe(false);
    expect(structured(s, { ...web, tier: 'batch' })).toBe(false);
    expect(structured(s, { ...web, track: 'canary' })).toBe(false);
    expect(structured(s, { ...web, track: 'stable' })).toBe(true);
    expect(structured(s, { app: 'web', tier: 'front' })).toBe(false);
    expect(structured(s, { ...web, legacy: '' })).toBe(false);
    // A label inherited from Object.prototype is no label.
    expect(structured({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {})).toBe(false);
  });

  it('refuses what the API refuses; read from a cluster, such a selector selects nothing', () => {
    const bad = [
      { matchExpressions: [{ key: 'a', operator: 'Near' }] },
      { matchExpressions: [{ key: 'a', operator: 'In' }] },
      { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
      { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
      { matchExpressions: [{ operator: 'Exists' }] },
      { matchLabels: { 'bad key': 'x' } },
      { matchLabels: { app: 7 } },
      'app=web',
    ];
    for (const b of bad) {
      expect(() => fromLabelSelector(b), JSON.stringify(b)).toThrow(SelectorError);
      expect(readLabelSelector(b), JSON.stringify(b)).toBeNull();
      expect(selects(readLabelSelector(b), web)).toBe(false);
    }
    expect(() => fromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Near' }] })).toThrow(
      '"Near" is not a valid label selector operator',
    );
    expect(readLabelSelector({ matchLabels: { app: 'web' } })).toEqual([
      { key: 'app', op: 'eq', value: 'web' },
    ]);
  });

  it('has a string form', () => {
    expect(
      labelSelectorString({
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 't', operator: 'NotIn', values: ['b', 'a'] },
          { key: 'x', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=web,t notin (a,b),!x');
    expect(labelSelectorString({})).toBe('');
  });
});

describe('node selector requirements', () => {
  it('take the label operators and Gt/Lt with one integer', () => {
    const node = { 'node.kubernetes.io/instance-type': 'm5', cores: '8' };
    const m = (r: unknown) => matchesLabels([nodeSelectorRequirement(r)], node);
    expect(m({ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5', 'm6'] })).toBe(true);
    expect(m({ key: 'node.kubernetes.io/instance-type', operator: 'NotIn', values: ['m5'] })).toBe(false);
    expect(m({ key: 'gpu', operator: 'DoesNotExist' })).toBe(true);
    expect(m({ key: 'cores', operator: 'Gt', values: ['4'] })).toBe(true);
    expect(m({ key: 'cores', operator: 'Lt', values: ['4'] })).toBe(false);
    expect(() => nodeSelectorRequirement({ key: 'cores', operator: 'Gt', values: ['4', '5'] })).toThrow(
      SelectorError,
    );
    expect(() => nodeSelectorRequirement({ key: 'cores', operator: 'Gt', values: ['four'] })).toThrow(
      /integer/,
    );
  });
});
