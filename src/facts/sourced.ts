/** A derived value with the sources it was derived from (and why, where the choice needs saying). */
import type { SourceRef } from '../snapshot/model.js';

export interface Sourced<T> {
  value: T;
  sources: SourceRef[];
  why?: string;
}

export function sourced<T>(value: T, sources: SourceRef[], why?: string): Sourced<T> {
  return why === undefined ? { value, sources } : { value, sources, why };
}
