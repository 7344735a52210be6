import { describe, expect, it } from 'vitest';
import {
  fieldValue,
  fromLabelSelector,
  labelSelectorString,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from './selectors.js';

const sel = (s: string, labels: Record<string, string>) => matchesLabels(parseLabelSelector(s), labels);

describe('label selectors', () => {
  it('supports =, ==, !=, in, notin, exists, !exists, gt and lt', () => {
    const l = { app: 'web', tier: 'front', n: '5' };
    expect(sel('app=web', l)).toBe(true);
    expect(sel('app==web', l)).toBe(true);
    expect(sel('app=db', l)).toBe(false);
    expect(sel('app!=db', l)).toBe(true);
    expect(sel('missing!=x', l)).toBe(true);
    expect(sel('app in (db, web)', l)).toBe(true);
    expect(sel('app in (db)', l)).toBe(false);
    expect(sel('app notin (db,cache)', l)).toBe(true);
    expect(sel('missing notin (a)', l)).toBe(true);
    expect(sel('tier', l)).toBe(true);
    expect(sel('!tier', l)).toBe(false);
    expect(sel('!missing', l)).toBe(true);
    expect(sel('n>4,n<6', l)).toBe(true);
    expect(sel('n>5', l)).toBe(false);
  });

  it('ANDs requirements, with commas inside parentheses belonging to the set', () => {
    expect(sel('app in (web,db),tier=front', { app: 'db', tier: 'front' })).toBe(true);
    expect(sel('app in (web,db),tier=back', { app: 'db', tier: 'front' })).toBe(false);
    expect(parseLabelSelector('a in (x,y), b')).toEqual([
      { key: 'a', op: 'in', values: ['x', 'y'] },
      { key: 'b', op: 'exists' },
    ]);
  });

  it('accepts prefixed keys and rejects malformed selectors', () => {
    expect(
      sel('node-role.kubernetes.io/control-plane', { 'node-role.kubernetes.io/control-plane': '' }),
    ).toBe(true);
    expect(() => parseLabelSelector('app in (a')).toThrow(SelectorError);
    expect(() => parseLabelSelector('app=a b')).toThrow(SelectorError);
    expect(() => parseLabelSelector('-bad=x')).toThrow(/invalid label key/);
    expect(() => parseLabelSelector('a,,b')).toThrow(/empty requirement/);
  });

  it('converts metav1.LabelSelector, where {} selects all and absent selects nothing', () => {
    expect(fromLabelSelector(undefined)).toBeUndefined();
    expect(fromLabelSelector({})).toEqual([]);
    const reqs = fromLabelSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    })!;
    expect(matchesLabels(reqs, { app: 'web', tier: 'b' })).toBe(true);
    expect(matchesLabels(reqs, { app: 'web', tier: 'b', legacy: '1' })).toBe(false);
    expect(() => fromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Near' }] })).toThrow(
      /not a valid/,
    );
    expect(
      labelSelectorString({
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 't', operator: 'NotIn', values: ['b', 'a'] }],
      }),
    ).toBe('app=web,t notin (a,b)');
  });
});

describe('field selectors', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1', unschedulable: true },
    status: { phase: 'Running' },
  };

  it('matches =, == and != on object fields, absent fields being empty', () => {
    expect(matchesFields(parseFieldSelector('spec.nodeName=n1,status.phase!=Pending'), pod)).toBe(true);
    expect(matchesFields(parseFieldSelector('metadata.name==q'), pod)).toBe(false);
    expect(matchesFields(parseFieldSelector('spec.schedulerName='), pod)).toBe(true);
    expect(fieldValue(pod, 'spec.unschedulable')).toBe('true');
  });

  it('honours escapes and rejects garbage', () => {
    expect(parseFieldSelector('metadata.name=a\\,b')).toEqual([
      { field: 'metadata.name', op: 'eq', value: 'a,b' },
    ]);
    expect(() => parseFieldSelector('nonsense')).toThrow(SelectorError);
  });
});
