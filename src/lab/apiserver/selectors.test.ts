import { describe, expect, it } from 'vitest';
import { SelectorError } from '../../util/label-selector.js';
import { fieldValue, matchesFields, parseFieldSelector } from './selectors.js';

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
