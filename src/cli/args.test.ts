import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { parsePhases } from './args.js';

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
