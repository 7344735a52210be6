/** How a run stops at a gate: a FerryError of kind 'gate' (exit 3, resumable) with a remediation. */
import { FerryError } from '../errors.js';
import type { Step } from '../plan/model.js';

export function gateError(message: string, remediation: string, cause?: unknown): FerryError {
  return new FerryError('gate', message, { remediation, ...(cause !== undefined && { cause }) });
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a step's failure stops the run with: a gate, usage or input error as it is; an interruption,
 * or anything an action throws, as a gate at this step: resumable, never half-forgotten.
 */
export function stepStop(step: Step, err: unknown, interrupted: boolean): FerryError {
  if (interrupted) {
    return gateError(
      `${step.id} was interrupted`,
      'run ferry run --resume to continue; the step is re-observed first',
      err,
    );
  }
  if (err instanceof FerryError && (err.kind === 'gate' || err.kind === 'usage' || err.kind === 'input'))
    return err;
  return gateError(
    `${step.id} (${step.title}) failed: ${errText(err)}`,
    err instanceof FerryError && err.remediation
      ? err.remediation
      : 'fix the cause, then run ferry run --resume (the step is re-observed first)',
    err,
  );
}

/** What stops the run as a whole: a FerryError as it is, an interruption as a gate, anything else as internal. */
export function runStop(err: unknown, interrupted: boolean): FerryError {
  if (err instanceof FerryError) return err;
  if (interrupted) return gateError('the run was interrupted', 'run ferry run --resume to continue', err);
  return new FerryError('internal', errText(err), {
    cause: err,
    remediation: 'run ferry run --resume once the cause is fixed',
  });
}
