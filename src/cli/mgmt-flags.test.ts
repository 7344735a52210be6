import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { Io } from './io.js';
import { providerTimeoutSeconds } from './mgmt-flags.js';
import { kindTarget } from './mgmt-restore-kind.js';

const io = { cwd: '/tmp/x', env: {} } as unknown as Io;

describe('--provider-timeout', () => {
  it('is 600 s when not given and rounds a fraction up to the whole seconds clusterctl takes', () => {
    expect(providerTimeoutSeconds(undefined)).toBe(600);
    expect(providerTimeoutSeconds('90')).toBe(90);
    expect(providerTimeoutSeconds('0.2')).toBe(1);
  });

  it('refuses 0, signs, exponents and words as a usage error naming the flag', () => {
    for (const bad of ['0', '-5', '1e3', 'ten', '']) {
      let err: unknown;
      try {
        providerTimeoutSeconds(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(FerryError);
      expect((err as FerryError).exitCode, bad).toBe(2);
      expect((err as Error).message, bad).toContain('--provider-timeout');
    }
  });

  it('means the same for a restore into kind as for bootstrap', () => {
    expect(kindTarget({ 'provider-timeout': '2.5' }, io, undefined).providerTimeoutSeconds).toBe(3);
    expect(kindTarget({}, io, undefined).providerTimeoutSeconds).toBe(600);
    expect(() => kindTarget({ 'provider-timeout': '0' }, io, undefined)).toThrow(/--provider-timeout/);
  });
});
