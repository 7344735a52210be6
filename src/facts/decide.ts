/**
 * Turning candidate values from several sources into one fact: agreement gives a value with all
 * sources as provenance; disagreement gives a conflict that lists every candidate and says which
 * one ferry believes and why. Never a silent pick.
 */
import type { SourceRef } from '../snapshot/model.js';
import type { Candidate, Fact } from './model.js';

export interface DecideSpec<T> {
  key: string;
  title: string;
  /** Candidates in order of belief: by default the first one wins a conflict. */
  candidates: Candidate<T>[];
  /** Why the believed candidate wins, shown on a conflict. */
  reason: string;
  /** What to provide when there is no candidate at all. */
  missing: string;
  /** Picks the believed candidate on a conflict (default: the first). */
  believe?: (candidates: Candidate<T>[]) => Candidate<T>;
  equals?: (a: T, b: T) => boolean;
  note?: string;
}

export function decide<T>(spec: DecideSpec<T>): Fact<T> {
  const { key, title, candidates } = spec;
  const base = spec.note === undefined ? { key, title } : { key, title, note: spec.note };
  const first = candidates[0];
  if (first === undefined) return { ...base, value: undefined, provenance: [], missing: spec.missing };
  const equals = spec.equals ?? sameValue;
  if (candidates.every((c) => equals(c.value, first.value))) {
    return { ...base, value: first.value, provenance: candidates.map((c) => c.source) };
  }
  const believed = spec.believe ? spec.believe(candidates) : first;
  return {
    ...base,
    value: believed.value,
    provenance: candidates.filter((c) => equals(c.value, believed.value)).map((c) => c.source),
    conflict: { candidates, believed: believed.value, reason: spec.reason },
  };
}

/** A fact with one known value (no competing sources). */
export function known<T>(
  key: string,
  title: string,
  value: T,
  provenance: SourceRef[],
  note?: string,
): Fact<T> {
  return note === undefined ? { key, title, value, provenance } : { key, title, value, provenance, note };
}

/** A fact ferry cannot derive from this snapshot. */
export function missingFact<T>(key: string, title: string, missing: string): Fact<T> {
  return { key, title, value: undefined, provenance: [], missing };
}

/** Structural equality for plain data (JSON-like values): what "the sources agree" means. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => sameValue(ao[k], bo[k]));
}
