/**
 * Declarative checks over a walk (walk.ts): each check looks at one place and reports what is wrong
 * there, so a whole document is checked at once and every problem is listed. `fields` is typed by
 * the model, so a field added to a type and not to its check is a compile error.
 */
import { isRecord, type Walk } from './walk.js';

/** Checks the place it is given; a failed check has reported and goes on (or the report threw). */
export type Check = (w: Walk<undefined>) => void;

/** An optional field: absent is fine, present must pass `check`. */
export interface Optional {
  readonly optional: Check;
}

export function opt(check: Check): Optional {
  return { optional: check };
}

/** One check per field of T; optional fields of T take `opt(...)`. */
export type Fields<T> = { [K in keyof T]-?: Partial<Pick<T, K>> extends Pick<T, K> ? Optional : Check };

/** An object with the fields of `spec` (others are let through: the readers ignore them). */
export function fields<T>(spec: Fields<T>): Check {
  const entries = Object.entries(spec) as [string, Check | Optional][];
  return (w) => {
    if (!isRecord(w.object())) return;
    for (const [key, c] of entries) {
      const f = w.at(key);
      if (typeof c === 'function') {
        if (f.absent) f.missing();
        else c(f);
      } else if (!f.absent) c.optional(f);
    }
  };
}

/** Objects told apart by their `kind` field. */
export function byKind(variants: Record<string, Check>): Check {
  const kinds = Object.keys(variants);
  return (w) => {
    const o = w.object();
    if (!isRecord(o)) return;
    const kind = w.at('kind').oneOf(kinds, { expected: `one of ${kinds.join(', ')}` });
    if (kind !== undefined) variants[kind]?.(w);
  };
}

/**
 * Both checks, the second only when the first found nothing. (Not `then`: a module exporting
 * `then` is a thenable, and `await import()` of it never settles.)
 */
export function refine(first: Check, second: Check): Check {
  return (w) => {
    const { walk, problems } = w.counted();
    first(walk);
    if (problems() === 0) second(w);
  };
}

export function arrayOf(item: Check): Check {
  return (w) => {
    for (const x of w.items()) item(x);
  };
}

export function recordOf(value: Check): Check {
  return (w) => {
    for (const [, x] of w.entries()) value(x);
  };
}

export function nullable(c: Check): Check {
  return (w) => {
    if (w.value !== null) c(w);
  };
}

export function oneOf<T extends string | number | boolean>(values: readonly T[]): Check {
  return (w) => {
    w.oneOf(values);
  };
}

export const str: Check = (w) => {
  w.string();
};

export const name: Check = (w) => {
  w.string({ nonEmpty: true });
};

export const bool: Check = (w) => {
  w.bool();
};

/** An integer of at least `min`. */
export function int(min: number): Check {
  return (w) => {
    w.int({ min });
  };
}

export const stringList: Check = arrayOf(str);
