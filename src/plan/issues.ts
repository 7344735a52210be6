/**
 * What is wrong with a plan read back from plan.json, in the words the loader prints: the field
 * path (e.g. `phases[2].steps[4].timeoutSeconds`), the step it belongs to, and what was expected.
 * The shape check (validate.ts) finds them by walking the document (util/walk.ts); the rules
 * between steps (invariants.ts) add theirs directly.
 */
import { formatPath, type Problem, type Report } from '../util/walk.js';

export interface Issue {
  /** Field path from the document's root. */
  path: string;
  /** The id of the step the field belongs to, when there is one. */
  step?: string;
  message: string;
}

export class Issues {
  readonly list: Issue[] = [];

  /** An issue of no step. */
  add(path: string, message: string): void {
    this.at(undefined, path, message);
  }

  /** An issue of the step `step` (or of none). */
  at(step: string | undefined, path: string, message: string): void {
    this.list.push({ path, message, ...(step !== undefined && { step }) });
  }

  /** A walk's report that records each problem as an issue, and goes on. */
  readonly report: Report<undefined> = (p) => {
    this.at(p.subject, formatPath(p.path), message(p));
    return undefined;
  };
}

function message(p: Problem): string {
  switch (p.kind) {
    case 'missing':
      return p.expected === undefined ? 'missing' : `must be ${p.expected}; got ${show(undefined)}`;
    case 'wrong':
      return `must be ${p.expected}; got ${show(p.found)}`;
    case 'unknown-field':
      return `is not a field of a plan; the fields here are ${p.allowed.join(', ')}`;
    case 'invalid':
      return p.message;
  }
}

/** A short rendering of a value for a message. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}
