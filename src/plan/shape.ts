/**
 * Small shape checks for JSON read back from disk: each check walks a value and records, for what
 * is wrong, the field path (e.g. `phases[2].steps[4].timeoutSeconds`), the step it belongs to and
 * what was expected. `fields` is typed by the model so that a field added to a type and not to
 * its check is a compile error.
 */

export interface Issue {
  /** Field path from the document's root. */
  path: string;
  /** The id of the step the field belongs to, when there is one. */
  step?: string;
  message: string;
}

export class Issues {
  readonly list: Issue[] = [];
  /** Set while a step is checked: every issue found meanwhile names it. */
  step: string | undefined;

  add(path: string, message: string): void {
    this.at(this.step, path, message);
  }

  /** An issue of the step `step` (or of none). */
  at(step: string | undefined, path: string, message: string): void {
    this.list.push({ path, message, ...(step !== undefined && { step }) });
  }
}

export type Check = (v: unknown, path: string, out: Issues) => void;

/** An optional field: absent is fine, present must pass `check`. */
export interface Optional {
  readonly optional: Check;
}

export function opt(check: Check): Optional {
  return { optional: check };
}

/** One check per field of T; optional fields of T take `opt(...)`. */
export type Fields<T> = { [K in keyof T]-?: Partial<Pick<T, K>> extends Pick<T, K> ? Optional : Check };

/** `a.b`, or `b` at the root (path ""). */
export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** A short rendering of a value for a message. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'an array';
  if (v !== null && typeof v === 'object') return 'an object';
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function fields<T>(spec: Fields<T>): Check {
  const entries = Object.entries(spec) as [string, Check | Optional][];
  return (v, path, out) => {
    if (!isObject(v)) return out.add(path, `must be an object; got ${show(v)}`);
    for (const [key, c] of entries) {
      const at = join(path, key);
      if (typeof c === 'function') {
        if (v[key] === undefined) out.add(at, 'missing');
        else c(v[key], at, out);
      } else if (v[key] !== undefined) c.optional(v[key], at, out);
    }
  };
}

/** Objects told apart by their `kind` field. */
export function byKind(variants: Record<string, Check>): Check {
  const kinds = Object.keys(variants);
  return (v, path, out) => {
    if (!isObject(v)) return out.add(path, `must be an object; got ${show(v)}`);
    const c = typeof v['kind'] === 'string' ? variants[v['kind']] : undefined;
    if (!c) return out.add(join(path, 'kind'), `must be one of ${kinds.join(', ')}; got ${show(v['kind'])}`);
    c(v, path, out);
  };
}

/**
 * Both checks, the second only when the first found nothing. (Not `then`: a module exporting
 * `then` is a thenable, and `await import()` of it never settles.)
 */
export function refine(first: Check, second: Check): Check {
  return (v, path, out) => {
    const before = out.list.length;
    first(v, path, out);
    if (out.list.length === before) second(v, path, out);
  };
}

export function arrayOf(item: Check): Check {
  return (v, path, out) => {
    if (!Array.isArray(v)) return out.add(path, `must be an array; got ${show(v)}`);
    v.forEach((x, i) => {
      item(x, `${path}[${i}]`, out);
    });
  };
}

export function recordOf(value: Check): Check {
  return (v, path, out) => {
    if (!isObject(v)) return out.add(path, `must be an object; got ${show(v)}`);
    for (const [k, x] of Object.entries(v)) value(x, join(path, k), out);
  };
}

export function nullable(c: Check): Check {
  return (v, path, out) => {
    if (v !== null) c(v, path, out);
  };
}

export function oneOf<T extends string | number | boolean>(values: readonly T[]): Check {
  return (v, path, out) => {
    if (!(values as readonly unknown[]).includes(v))
      out.add(
        path,
        `must be ${values.length === 1 ? show(values[0]) : `one of ${values.join(', ')}`}; got ${show(v)}`,
      );
  };
}

export const str: Check = (v, path, out) => {
  if (typeof v !== 'string') out.add(path, `must be a string; got ${show(v)}`);
};

export const name: Check = (v, path, out) => {
  if (typeof v !== 'string' || v === '') out.add(path, `must be a non-empty string; got ${show(v)}`);
};

export const bool: Check = (v, path, out) => {
  if (typeof v !== 'boolean') out.add(path, `must be true or false; got ${show(v)}`);
};

/** An integer of at least `min`. */
export function int(min: number): Check {
  return (v, path, out) => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
      out.add(path, `must be a whole number of at least ${min}; got ${show(v)}`);
  };
}

/** Seconds a step may take: a finite number greater than 0. */
export const positiveSeconds: Check = (v, path, out) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    out.add(path, `must be a number of seconds greater than 0; got ${show(v)}`);
};

/** Seconds to wait: a finite number, 0 or more. */
export const seconds: Check = (v, path, out) => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    out.add(path, `must be a number of seconds, 0 or more; got ${show(v)}`);
};

export const stringList: Check = arrayOf(str);
