import { type ParseArgsConfig, parseArgs } from 'node:util';
import { usageError } from '../errors.js';
import { PHASE_NAMES, type PhaseId } from '../plan/model.js';

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

const PHASE_IDS = Object.keys(PHASE_NAMES).map(Number) as PhaseId[];

/**
 * `--phases 0,2,4`: the phases to run, each once, in plan order. Anything but a phase number
 * between the commas is a usage error (an empty item must not become phase 0, as Number('') is).
 */
export function parsePhases(value: string | undefined): PhaseId[] | undefined {
  if (value === undefined) return undefined;
  const out = new Set<PhaseId>();
  for (const item of value.split(',')) {
    const id = PHASE_IDS.find((i) => String(i) === item.trim());
    if (id === undefined)
      throw usageError(
        `--phases: "${item}" is not a phase`,
        `give phase numbers separated by commas, e.g. --phases 0,2,4 (${PHASE_IDS.map((i) => `${i} ${PHASE_NAMES[i]}`).join(', ')})`,
      );
    out.add(id);
  }
  return [...out].sort((a, b) => a - b);
}
