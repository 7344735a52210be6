/**
 * A typed walk over one parsed YAML document: each accessor either returns a value of the asked
 * type or throws an input error naming the file, the line and the field, with the fix.
 */
import { inputError } from '../../errors.js';
import type { FieldPath, ParsedDoc } from '../../snapshot/yaml.js';
import { formatPath } from '../../snapshot/yaml.js';

export class Fields {
  constructor(
    private readonly doc: ParsedDoc,
    private readonly file: string,
  ) {}

  /** Throws the input error for `path`, at the line of the nearest node that exists. */
  fail(path: FieldPath, message: string, fix: string): never {
    let at: { line: number; column: number } | undefined;
    for (let n = path.length; n >= 0 && !at; n--) at = this.doc.locate(path.slice(0, n));
    throw inputError(
      message,
      { file: this.file, line: at?.line ?? this.doc.line, field: formatPath(path) || '(document)' },
      fix,
    );
  }

  raw(path: FieldPath): unknown {
    let cur: unknown = this.doc.value;
    for (const k of path) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string | number, unknown>)[k];
    }
    return cur;
  }

  has(path: FieldPath): boolean {
    return this.raw(path) !== undefined && this.raw(path) !== null;
  }

  /** A mapping; only the keys in `allowed` may appear (a typo is an error, not a silent default). */
  object(path: FieldPath, allowed: readonly string[], required = true): Record<string, unknown> | undefined {
    const v = this.raw(path);
    if (v === undefined || v === null) {
      if (required)
        this.fail(path, `${formatPath(path) || 'the document'} is missing`, `add ${formatPath(path)}`);
      return undefined;
    }
    if (typeof v !== 'object' || Array.isArray(v))
      this.fail(
        path,
        `${formatPath(path) || 'the document'} must be a mapping`,
        'write it as key: value lines',
      );
    for (const k of Object.keys(v)) {
      if (!allowed.includes(k))
        this.fail([...path, k], `unknown field "${k}"`, `remove it, or use one of: ${allowed.join(', ')}`);
    }
    return v as Record<string, unknown>;
  }

  string(path: FieldPath, opts: { dflt?: string; pattern?: RegExp; hint?: string } = {}): string {
    const v = this.raw(path);
    if (v === undefined || v === null) {
      if (opts.dflt !== undefined) return opts.dflt;
      this.fail(
        path,
        `${formatPath(path)} is missing`,
        `set ${formatPath(path)}${opts.hint ? ` (${opts.hint})` : ''}`,
      );
    }
    if (typeof v !== 'string' || v.trim() === '')
      this.fail(path, `${formatPath(path)} must be a non-empty string`, opts.hint ?? 'quote the value');
    if (opts.pattern && !opts.pattern.test(v))
      this.fail(path, `${formatPath(path)}: "${v}" is not valid`, opts.hint ?? `match ${opts.pattern}`);
    return v;
  }

  optionalString(path: FieldPath, opts: { pattern?: RegExp; hint?: string } = {}): string | undefined {
    return this.has(path) ? this.string(path, opts) : undefined;
  }

  int(path: FieldPath, opts: { dflt?: number; min: number; max: number }): number {
    const v = this.raw(path);
    if (v === undefined || v === null) {
      if (opts.dflt !== undefined) return opts.dflt;
      this.fail(path, `${formatPath(path)} is missing`, `set ${formatPath(path)} to a whole number`);
    }
    if (typeof v !== 'number' || !Number.isInteger(v) || v < opts.min || v > opts.max)
      this.fail(
        path,
        `${formatPath(path)} must be a whole number from ${opts.min} to ${opts.max}; got ${JSON.stringify(v)}`,
        `set ${formatPath(path)} to a whole number from ${opts.min} to ${opts.max}`,
      );
    return v;
  }

  bool(path: FieldPath, dflt: boolean): boolean {
    const v = this.raw(path);
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean')
      this.fail(
        path,
        `${formatPath(path)} must be true or false; got ${JSON.stringify(v)}`,
        'write true or false',
      );
    return v;
  }

  strings(path: FieldPath, opts: { min: number; pattern?: RegExp; hint?: string }): string[] {
    const v = this.raw(path);
    if (!Array.isArray(v) || v.length < opts.min)
      this.fail(
        path,
        `${formatPath(path)} must be a list of at least ${opts.min} item(s)`,
        opts.hint ?? `list them under ${formatPath(path)}`,
      );
    return v.map((_, i) => this.string([...path, i], opts));
  }

  oneOf<T extends string>(path: FieldPath, allowed: readonly T[], dflt?: T): T {
    const v = this.raw(path);
    if ((v === undefined || v === null) && dflt !== undefined) return dflt;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
      this.fail(
        path,
        `${formatPath(path)} must be one of ${allowed.join(', ')}; got ${JSON.stringify(v ?? null)}`,
        `set ${formatPath(path)} to one of ${allowed.join(', ')}`,
      );
    return v as T;
  }
}
