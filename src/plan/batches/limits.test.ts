import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import {
  DEFAULT_MAX_UNAVAILABLE,
  type MaxUnavailable,
  parseMaxUnavailable,
  resolveMaxUnavailable,
  showMaxUnavailable,
} from './limits.js';

/** The error parseMaxUnavailable throws for `text`, or a failure when it does not throw. */
function rejection(text: string): FerryError {
  try {
    parseMaxUnavailable(text);
  } catch (e) {
    expect(e).toBeInstanceOf(FerryError);
    return e as FerryError;
  }
  throw new Error(`"${text}" was accepted`);
}

describe('parseMaxUnavailable', () => {
  it('reads a count of workers and a percentage, ignoring surrounding blanks', () => {
    expect(parseMaxUnavailable('3')).toEqual({ kind: 'count', nodes: 3 });
    expect(parseMaxUnavailable('12')).toEqual({ kind: 'count', nodes: 12 });
    expect(parseMaxUnavailable(' 1\n')).toEqual({ kind: 'count', nodes: 1 });
    expect(parseMaxUnavailable('10%')).toEqual({ kind: 'percent', percent: 10 });
    expect(parseMaxUnavailable('\t25% ')).toEqual({ kind: 'percent', percent: 25 });
  });

  it('takes the bounds of the range: 1 worker, 1% and 100%', () => {
    expect(parseMaxUnavailable('1')).toEqual({ kind: 'count', nodes: 1 });
    expect(parseMaxUnavailable('1%')).toEqual({ kind: 'percent', percent: 1 });
    expect(parseMaxUnavailable('100%')).toEqual({ kind: 'percent', percent: 100 });
  });

  it('rejects zero, out-of-range percentages and anything that is not digits, as a usage error (exit 2)', () => {
    for (const bad of [
      '0',
      '00',
      '0%',
      '101%',
      '',
      ' ',
      '%',
      '-1',
      '1.5',
      '2x',
      'x2',
      '3 %',
      '10%%',
      '%10',
      'a%',
      'x10%',
      '-5%',
    ]) {
      const e = rejection(bad);
      expect(e.kind, bad).toBe('usage');
      expect(e.exitCode, bad).toBe(2);
      // The message quotes what the user typed; the remediation shows both forms.
      expect(e.message, bad).toContain(`"${bad}"`);
      expect(e.remediation, bad).toMatch(/--max-unavailable \d+\b.*--max-unavailable \d+%/);
    }
  });

  it('round-trips through showMaxUnavailable', () => {
    for (const text of ['1', '7', '1%', '33%', '100%'])
      expect(showMaxUnavailable(parseMaxUnavailable(text))).toBe(text);
  });
});

describe('resolveMaxUnavailable', () => {
  const pct = (percent: number): MaxUnavailable => ({ kind: 'percent', percent });

  it('a count is taken as is, whatever the number of workers', () => {
    expect(resolveMaxUnavailable({ kind: 'count', nodes: 3 }, 10)).toBe(3);
    expect(resolveMaxUnavailable({ kind: 'count', nodes: 5 }, 2)).toBe(5);
  });

  it('a percentage of the workers rounds down, as a Deployment does', () => {
    expect(resolveMaxUnavailable(pct(25), 10)).toBe(2); // 2.5
    expect(resolveMaxUnavailable(pct(30), 10)).toBe(3); // exact
    expect(resolveMaxUnavailable(pct(50), 7)).toBe(3); // 3.5
    expect(resolveMaxUnavailable(pct(100), 9)).toBe(9);
  });

  it('but never below one worker', () => {
    expect(resolveMaxUnavailable(pct(10), 5)).toBe(1); // 0.5
    expect(resolveMaxUnavailable(pct(1), 1)).toBe(1);
    expect(resolveMaxUnavailable(pct(25), 0)).toBe(1);
  });

  it('the default is Kubernetes 25%', () => {
    expect(showMaxUnavailable(DEFAULT_MAX_UNAVAILABLE)).toBe('25%');
    expect(resolveMaxUnavailable(DEFAULT_MAX_UNAVAILABLE, 8)).toBe(2);
    expect(resolveMaxUnavailable(DEFAULT_MAX_UNAVAILABLE, 11)).toBe(2);
  });
});
