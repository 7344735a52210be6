/** How a run stops at a gate: a FerryError of kind 'gate' (exit 3, resumable) with a remediation. */
import { FerryError } from '../errors.js';

export function gateError(message: string, remediation: string, cause?: unknown): FerryError {
  return new FerryError('gate', message, { remediation, ...(cause !== undefined && { cause }) });
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
