import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import {
  abortOnSignals,
  MAX_DRAIN_CONCURRENCY,
  noPositionals,
  onlyOne,
  parseDrainConcurrency,
  parsePhases,
  parseStepTimeouts,
  parseSubnet,
  required,
  seconds,
  wholeNumber,
} from './args.js';

describe('parsePhases', () => {
  it('reads a comma-separated list of phases, each once, in plan order', () => {
    expect(parsePhases(undefined)).toBeUndefined();
    expect(parsePhases('0,2,4')).toEqual([0, 2, 4]);
    expect(parsePhases('4, 2,2,0')).toEqual([0, 2, 4]);
    expect(parsePhases('5')).toEqual([5]);
  });

  it('refuses anything else as a usage error naming the item, never as phase 0', () => {
    for (const bad of ['', '0,,2', '2,', '6', '-1', '1.0', '0x1', 'two', '0 2']) {
      let err: unknown;
      try {
        parsePhases(bad);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(bad)).toBeInstanceOf(FerryError);
      expect((err as FerryError).exitCode).toBe(2);
      expect((err as FerryError).message).toMatch(/^--phases: ".*" is not a phase$/);
      expect((err as FerryError).remediation).toContain('0 preflight');
    }
  });
});

/** The usage error a call throws (exit 2), or a failure when it throws none. */
function refusal(f: () => unknown): FerryError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FerryError);
    expect((e as FerryError).exitCode).toBe(2);
    return e as FerryError;
  }
  throw new Error('expected a usage error');
}

describe('wholeNumber', () => {
  it('takes digits within the range, and nothing for an absent flag', () => {
    expect(wholeNumber('n', undefined, { min: 1 })).toBeUndefined();
    expect(wholeNumber('n', '1', { min: 1 })).toBe(1);
    expect(wholeNumber('n', '0', { min: 0 })).toBe(0);
    expect(wholeNumber('n', '64', { min: 1, max: 64 })).toBe(64);
    expect(wholeNumber('n', '007', { min: 1 })).toBe(7);
  });

  it('refuses a sign, a fraction, an exponent, hex, an empty value and anything out of range', () => {
    for (const bad of ['', ' ', '-1', '+2', '1.5', '1e3', '0x10', 'four', 'Infinity', '0', '65'])
      expect(refusal(() => wholeNumber('n', bad, { min: 1, max: 64 })).message).toBe(
        `--n must be a whole number from 1 to 64; got "${bad}"`,
      );
    expect(refusal(() => wholeNumber('keep', '0', { min: 1 })).message).toBe(
      '--keep must be a whole number ≥ 1; got "0"',
    );
    expect(refusal(() => wholeNumber('poll-ms', '5', { min: 10, unit: 'milliseconds' })).message).toBe(
      '--poll-ms must be a whole number of milliseconds, 10 or more; got "5"',
    );
  });
});

describe('seconds', () => {
  it('takes a plain decimal number, 0 included unless positive', () => {
    expect(seconds('t', undefined)).toBeUndefined();
    expect(seconds('t', '0')).toBe(0);
    expect(seconds('t', '2.5')).toBe(2.5);
    expect(seconds('t', '600', { positive: true })).toBe(600);
  });

  it('refuses a negative, an empty, an exponent or hex value, and 0 when positive', () => {
    for (const bad of ['', '-1', '1e3', '0x10', '.5', '5.', 'ten', 'Infinity', 'NaN'])
      expect(refusal(() => seconds('gate-grace', bad)).message).toBe(
        `--gate-grace must be a number of seconds, 0 or more; got "${bad}"`,
      );
    expect(refusal(() => seconds('wait-timeout', '0', { positive: true })).message).toBe(
      '--wait-timeout must be a number of seconds, more than 0; got "0"',
    );
    expect(refusal(() => seconds('probe-interval-ms', '-5', { unit: 'milliseconds' })).message).toContain(
      'a number of milliseconds, 0 or more',
    );
  });
});

describe('parseSubnet and parseDrainConcurrency', () => {
  it('take 1..254 and 1..64, defaults when absent', () => {
    expect(parseSubnet(undefined, 60)).toBe(60);
    expect(parseSubnet('1', 60)).toBe(1);
    expect(parseSubnet('254', 60)).toBe(254);
    expect(parseDrainConcurrency(undefined)).toBeUndefined();
    expect(parseDrainConcurrency('64')).toBe(64);
  });

  it('refuse what is out of range or not a whole number', () => {
    for (const bad of ['0', '255', '1.5', '-3', 'x'])
      expect(refusal(() => parseSubnet(bad, 60)).message).toBe(
        `--subnet must be a whole number from 1 to 254; got "${bad}"`,
      );
    for (const bad of ['0', '65', '1.5', ''])
      expect(refusal(() => parseDrainConcurrency(bad)).message).toBe(
        `--drain-concurrency must be a whole number of nodes from 1 to ${MAX_DRAIN_CONCURRENCY}; got "${bad}"`,
      );
  });
});

describe('parseStepTimeouts', () => {
  it('reads KIND=SECONDS per known step kind', () => {
    expect(parseStepTimeouts(undefined)).toEqual({});
    expect(parseStepTimeouts(['drain=600', 'cordon=1.5'])).toEqual({ drain: 600, cordon: 1.5 });
  });

  it('refuses an unknown kind, and a missing, zero or negative timeout', () => {
    expect(refusal(() => parseStepTimeouts(['reboot=10'])).message).toBe(
      '--step-timeout reboot=10: unknown step kind reboot',
    );
    for (const bad of ['drain', 'drain=', 'drain=0', 'drain=-5', 'drain=ten', 'drain=5=6'])
      expect(refusal(() => parseStepTimeouts([bad])).message).toBe(
        `--step-timeout ${bad}: give the seconds as KIND=SECONDS, more than 0`,
      );
  });
});

describe('required, onlyOne, noPositionals', () => {
  const usage = 'usage: ferry x ARG';

  it('return the value given', () => {
    expect(required('kubeconfig', 'k', 'pass it')).toBe('k');
    expect(onlyOne(['a'], 'ARG', usage)).toBe('a');
    expect(() => noPositionals([], usage)).not.toThrow();
  });

  it('refuse a missing or empty flag, a missing or extra argument', () => {
    for (const v of [undefined, '']) {
      const e = refusal(() => required('kubeconfig', v, 'pass --kubeconfig FILE'));
      expect(e.message).toBe('missing --kubeconfig');
      expect(e.remediation).toBe('pass --kubeconfig FILE');
    }
    expect(refusal(() => onlyOne([], 'ARG', usage)).message).toBe('missing ARG');
    expect(refusal(() => onlyOne(['a', 'b'], 'ARG', usage)).message).toBe('unexpected argument "b"');
    const extra = refusal(() => noPositionals(['c'], usage));
    expect(extra.message).toBe('unexpected argument "c"');
    expect(extra.remediation).toContain(usage);
  });
});

describe('abortOnSignals', () => {
  const listeners = () => ({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') });

  it('aborts its signal on SIGINT or SIGTERM, naming it, and removes its listeners on dispose', () => {
    const before = listeners();
    const seen: string[] = [];
    const scope = abortOnSignals({ again: 'ignore', onSignal: (s) => seen.push(s) });
    expect(listeners()).toEqual({ int: before.int + 1, term: before.term + 1 });
    expect(scope.signal.aborted).toBe(false);
    process.emit('SIGTERM', 'SIGTERM');
    expect(scope.signal.aborted).toBe(true);
    expect((scope.signal.reason as Error).message).toBe('SIGTERM');
    // `ignore`: still listening, so a second signal cannot end the process mid-cleanup; told once.
    expect(listeners()).toEqual({ int: before.int + 1, term: before.term + 1 });
    process.emit('SIGINT', 'SIGINT');
    expect(seen).toEqual(['SIGTERM']);
    scope.dispose();
    expect(listeners()).toEqual(before);
  });

  it('by default lets a second signal have its usual effect: the listeners go with the first', () => {
    const before = listeners();
    const scope = abortOnSignals();
    process.emit('SIGINT', 'SIGINT');
    expect(scope.signal.aborted).toBe(true);
    expect((scope.signal.reason as Error).message).toBe('SIGINT');
    expect(listeners()).toEqual(before);
    scope.dispose(); // harmless again
    expect(listeners()).toEqual(before);
  });

  it('listens to the signals it is given only', () => {
    const hup = process.listenerCount('SIGHUP');
    const term = process.listenerCount('SIGTERM');
    const scope = abortOnSignals({ signals: ['SIGHUP'] });
    expect(process.listenerCount('SIGHUP')).toBe(hup + 1);
    expect(process.listenerCount('SIGTERM')).toBe(term);
    scope.dispose();
    expect(process.listenerCount('SIGHUP')).toBe(hup);
    expect(scope.signal.aborted).toBe(false);
  });
});
