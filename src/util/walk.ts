/**
 * One walk over untrusted parsed input (JSON or YAML read back from a file): a cursor that knows
 * where it stands (the field path from the document's root), checks the value it finds there, and
 * hands every problem, with its path and the value found, to the caller's `report`. A loader's
 * report throws the input error at the first problem (the cursor then returns typed values); the
 * plan check's report collects them all (the cursor then returns `undefined` where a check failed).
 * The walk and the checks are shared; how a problem is worded (and whether the value found may be
 * shown: it can be key material) stays with each caller.
 */

/** A field name or a list index. */
export type Key = string | number;
export type Path = readonly Key[];

/** `a.b[2].c`; the root is "". */
export function formatPath(path: Path): string {
  let s = '';
  for (const k of path) s += typeof k === 'number' ? `[${k}]` : s === '' ? k : `.${k}`;
  return s;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a check asked for: lets a caller word (and show or hide) each kind its own way. */
export type Want = 'object' | 'array' | 'string' | 'pattern' | 'number' | 'int' | 'bool' | 'one-of';

export type Problem =
  /** Nothing where a value is required; `expected` is unset when any value would have done. */
  | { kind: 'missing'; path: Path; subject?: string; want?: Want; expected?: string; hint?: string }
  /** A value that is not what was expected (`expected`: "a string", "one of a, b"). */
  | {
      kind: 'wrong';
      path: Path;
      subject?: string;
      want: Want;
      expected: string;
      found: unknown;
      hint?: string;
    }
  /** A key of a mapping that only takes `allowed` (a typo is an error, not a silent default). */
  | { kind: 'unknown-field'; path: Path; subject?: string; allowed: readonly string[] }
  /** A rule of the caller's, in the caller's words. */
  | { kind: 'invalid'; path: Path; subject?: string; message: string; fix?: string };

/** Throws (returns `never`) to stop at the first problem, or records it and returns `undefined`. */
export type Report<F> = (problem: Problem) => F;

interface Context<F> {
  report: Report<F>;
  /** YAML's `key:` (null) means the key is not given; in JSON null is a value. */
  nullIsAbsent: boolean;
  /** What the problems found from here on belong to (a plan step's id): named with each. */
  subject?: string;
}

/** Option shared by the checks: a fix in the caller's words, given with the problem. */
interface Hinted {
  hint?: string;
}

/**
 * A place in the input. `F` is what a failed check returns: `never` when `report` throws (a
 * `Walk<never>` is also a `Walk<undefined>`, so checks written for collecting serve both).
 */
export class Walk<F = never> {
  private constructor(
    readonly value: unknown,
    readonly path: Path,
    private readonly ctx: Context<F>,
  ) {}

  /** The walk of a document (`at`: where it sits, when it is one item of a larger file). */
  static root<F>(
    value: unknown,
    report: Report<F>,
    opts: { nullIsAbsent?: boolean; at?: Path } = {},
  ): Walk<F> {
    return new Walk(value, opts.at ?? [], { report, nullIsAbsent: opts.nullIsAbsent ?? false });
  }

  /** The place under `keys` (its value `undefined` where the input has nothing there). */
  at(...keys: Key[]): Walk<F> {
    let v = this.value;
    // Own keys only: `constructor` is not a field of `{}`.
    for (const k of keys)
      v =
        v !== null && typeof v === 'object' && Object.hasOwn(v, k)
          ? (v as Record<Key, unknown>)[k]
          : undefined;
    return new Walk(v, [...this.path, ...keys], this.ctx);
  }

  /** The same place, its problems naming `subject`. */
  about(subject: string | undefined): Walk<F> {
    const { subject: _, ...rest } = this.ctx;
    return new Walk(this.value, this.path, subject === undefined ? rest : { ...rest, subject });
  }

  /** The same place, and a count of the problems reported through it (and the places under it). */
  counted(): { walk: Walk<F>; problems: () => number } {
    let n = 0;
    const report: Report<F> = (p) => {
      n++;
      return this.ctx.report(p);
    };
    return { walk: new Walk(this.value, this.path, { ...this.ctx, report }), problems: () => n };
  }

  /** This place when the input has something here: `w.at('port').given()?.int(...) ?? 6443`. */
  given(): Walk<F> | undefined {
    return this.absent ? undefined : this;
  }

  /** Nothing here: `undefined` (and `null` when the input is YAML). */
  get absent(): boolean {
    return this.value === undefined || (this.ctx.nullIsAbsent && this.value === null);
  }

  get field(): string {
    return formatPath(this.path);
  }

  private send(p: DistributiveOmit<Problem, 'path' | 'subject'>): F {
    const subject = this.ctx.subject;
    return this.ctx.report({ ...p, path: this.path, ...(subject !== undefined && { subject }) } as Problem);
  }

  /** Reports a rule of the caller's broken here. */
  invalid(message: string, fix?: string): F {
    return this.send({ kind: 'invalid', message, ...(fix !== undefined && { fix }) });
  }

  /** Reports that a value is required here (and what it should be). */
  missing(want?: Want, expected?: string, hint?: string): F {
    return this.send({
      kind: 'missing',
      ...(want !== undefined && { want }),
      ...(expected !== undefined && { expected }),
      ...(hint !== undefined && { hint }),
    });
  }

  /** Reports the value here as not `expected`. */
  wrong(want: Want, expected: string, hint?: string): F {
    return this.send({
      kind: 'wrong',
      want,
      expected,
      found: this.value,
      ...(hint !== undefined && { hint }),
    });
  }

  private expect<T>(ok: (v: unknown) => v is T, want: Want, expected: string, hint?: string): T | F {
    if (this.absent) return this.missing(want, expected, hint);
    return ok(this.value) ? this.value : this.wrong(want, expected, hint);
  }

  /** A mapping; with `allowed`, no other key may appear. */
  object(opts: { allowed?: readonly string[] } & Hinted = {}): Record<string, unknown> | F {
    const o = this.expect(isRecord, 'object', 'an object', opts.hint);
    if (!isRecord(o) || !opts.allowed) return o;
    for (const k of Object.keys(o))
      if (!opts.allowed.includes(k)) this.at(k).send({ kind: 'unknown-field', allowed: opts.allowed });
    return o;
  }

  /** A list of at least `min` items (default 0). */
  array(opts: { min?: number } & Hinted = {}): unknown[] | F {
    const min = opts.min ?? 0;
    const expected = min > 0 ? `a list of at least ${min} item(s)` : 'an array';
    return this.expect(
      (v): v is unknown[] => Array.isArray(v) && v.length >= min,
      'array',
      expected,
      opts.hint,
    );
  }

  /** The places of a list's items (none when this is not a list, once that is reported). */
  items(opts: { min?: number } & Hinted = {}): Walk<F>[] {
    const a = this.array(opts);
    return Array.isArray(a) ? a.map((_, i) => this.at(i)) : [];
  }

  /** The places of a mapping's values, by key (none when this is not a mapping, once that is reported). */
  entries(): [string, Walk<F>][] {
    const o = this.object();
    return isRecord(o) ? Object.keys(o).map((k) => [k, this.at(k)]) : [];
  }

  /**
   * A string; `nonEmpty`: not "", `nonBlank`: not only white space either; `pattern`: one it
   * matches (`expected` words what that is: "a decimal uint64 string").
   */
  string(
    opts: { nonEmpty?: boolean; nonBlank?: boolean; pattern?: RegExp; expected?: string } & Hinted = {},
  ): string | F {
    const { nonEmpty = false, nonBlank = false } = opts;
    const s = this.expect(
      (v): v is string =>
        typeof v === 'string' && !((nonEmpty || nonBlank) && v === '') && !(nonBlank && v.trim() === ''),
      'string',
      nonEmpty || nonBlank ? 'a non-empty string' : 'a string',
      opts.hint,
    );
    if (typeof s !== 'string' || !opts.pattern || opts.pattern.test(s)) return s;
    return this.wrong('pattern', opts.expected ?? `a string matching ${opts.pattern}`, opts.hint);
  }

  /** A finite number; `min`: at least, `above`: greater than (`expected` words the range). */
  number(opts: { min?: number; above?: number; expected?: string } & Hinted = {}): number | F {
    const { min = -Infinity, above = -Infinity } = opts;
    return this.expect(
      (v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min && v > above,
      'number',
      opts.expected ?? 'a number',
      opts.hint,
    );
  }

  /** A whole number from `min` to `max` (a safe integer when there is no `max`). */
  int(opts: { min: number; max?: number } & Hinted): number | F {
    const { min, max } = opts;
    return this.expect(
      (v): v is number =>
        typeof v === 'number' && Number.isSafeInteger(v) && v >= min && (max === undefined || v <= max),
      'int',
      max === undefined ? `a whole number of at least ${min}` : `a whole number from ${min} to ${max}`,
      opts.hint,
    );
  }

  bool(opts: Hinted = {}): boolean | F {
    return this.expect((v): v is boolean => typeof v === 'boolean', 'bool', 'true or false', opts.hint);
  }

  /** One of `values` (`expected` words them when a list would not read well). */
  oneOf<T extends string | number | boolean>(
    values: readonly T[],
    opts: { expected?: string } & Hinted = {},
  ): T | F {
    const expected =
      opts.expected ?? (values.length === 1 ? quote(values[0]) : `one of ${values.join(', ')}`);
    return this.expect(
      (v): v is T => (values as readonly unknown[]).includes(v),
      'one-of',
      expected,
      opts.hint,
    );
  }
}

function quote(v: unknown): string {
  return JSON.stringify(v);
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
