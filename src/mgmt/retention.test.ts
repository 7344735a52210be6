import { describe, expect, it } from 'vitest';
import { applyRetention, isoWeek } from './retention.js';

const at = (id: string, iso: string) => ({ versionId: id, lastModified: new Date(iso) });

describe('applyRetention', () => {
  const versions = [
    at('a', '2026-12-01T10:00:00Z'),
    at('b', '2026-12-01T08:00:00Z'),
    at('c', '2026-11-30T23:00:00Z'),
    at('d', '2026-11-29T12:00:00Z'), // Sunday: ISO week 48
    at('e', '2026-11-23T12:00:00Z'), // Monday of week 48
    at('f', '2026-11-16T12:00:00Z'), // week 47
  ];

  it('deletes nothing without a policy', () => {
    expect(applyRetention(versions, {}).remove).toEqual([]);
  });

  it('keeps the newest N', () => {
    expect(applyRetention(versions, { keep: 2 }).remove.map((v) => v.versionId)).toEqual([
      'c',
      'd',
      'e',
      'f',
    ]);
  });

  it('keeps the newest of each of the last D days that have a backup', () => {
    expect(applyRetention(versions, { keepDaily: 3 }).remove.map((v) => v.versionId)).toEqual([
      'b',
      'e',
      'f',
    ]);
  });

  it('keeps the newest of each of the last W ISO weeks', () => {
    const r = applyRetention(versions, { keepWeekly: 3 });
    expect(r.remove.map((v) => v.versionId)).toEqual(['b', 'c', 'e']);
    expect(r.keep.get('d')).toEqual(['weekly 2026-W48']);
  });

  it('combines rules and always keeps the newest', () => {
    const r = applyRetention(versions, { keep: 1, keepDaily: 1, keepWeekly: 1 });
    expect(r.remove.map((v) => v.versionId)).toEqual(['b', 'c', 'd', 'e', 'f']);
    expect(r.keep.get('a')).toEqual(['newest', 'keep 1/1', 'daily 2026-12-01', 'weekly 2026-W49']);
  });

  it('keeps the given order on equal times (S3 lists newest first)', () => {
    const same = [at('x', '2026-12-01T10:00:00Z'), at('y', '2026-12-01T10:00:00Z')];
    expect(applyRetention(same, { keep: 1 }).remove.map((v) => v.versionId)).toEqual(['y']);
  });
});

describe('isoWeek', () => {
  it('follows ISO 8601 at year boundaries', () => {
    expect(isoWeek(new Date('2026-01-01T00:00:00Z'))).toBe('2026-W01');
    expect(isoWeek(new Date('2027-01-01T00:00:00Z'))).toBe('2026-W53');
    expect(isoWeek(new Date('2026-12-28T00:00:00Z'))).toBe('2026-W53');
  });
});
