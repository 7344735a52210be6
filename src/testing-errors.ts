/**
 * The FerryError a call throws or a promise rejects with, for tests of error paths: the test fails
 * when there is none, or when it is another kind of error.
 */
import { expect } from 'vitest';
import { type ExitCode, FerryError } from './errors.js';

export function thrown(fn: () => unknown, exitCode?: ExitCode): FerryError {
  try {
    fn();
  } catch (err) {
    return checked(err, exitCode);
  }
  throw new Error('expected an error');
}

export async function rejected(p: Promise<unknown>, exitCode?: ExitCode): Promise<FerryError> {
  try {
    await p;
  } catch (err) {
    return checked(err, exitCode);
  }
  throw new Error('expected a failure');
}

function checked(err: unknown, exitCode: ExitCode | undefined): FerryError {
  expect(err).toBeInstanceOf(FerryError);
  if (exitCode !== undefined) expect((err as FerryError).exitCode).toBe(exitCode);
  return err as FerryError;
}
