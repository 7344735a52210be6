import { type ParseArgsConfig, parseArgs } from 'node:util';
import { usageError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Thin wrapper over node:util parseArgs that turns its errors into usage errors (exit 2) and
 * checks enumerated values.
 */
export function parseFlags<O extends Options>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError((err as Error).message, `see usage:\n${usage.trim()}`);
  }
}

export function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
  dflt: T,
): T {
  if (value === undefined) return dflt;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw usageError(`--${flag} must be one of ${allowed.join(', ')}; got "${value}"`);
}

export function requirePositional(positionals: string[], what: string, usage: string): string {
  const v = positionals[0];
  if (v === undefined) throw usageError(`missing ${what}`, `see usage:\n${usage.trim()}`);
  return v;
}
