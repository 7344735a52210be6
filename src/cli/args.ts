import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { UserProbe } from '../app/user-probes.js';
import { usageError } from '../errors.js';
import { PHASE_NAMES, type PhaseId, STEP_KINDS } from '../plan/model.js';

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

/**
 * The settings a command was given: keys whose value is undefined (a flag left out) are dropped,
 * so that the defaults of what receives them apply.
 */
export function present<T extends Record<string, unknown>>(
  o: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export function requirePositional(positionals: string[], what: string, usage: string): string {
  const v = positionals[0];
  if (v === undefined) throw usageError(`missing ${what}`, `see usage:\n${usage.trim()}`);
  return v;
}

/** Exactly one positional argument: `what` when it is missing, the first extra one otherwise. */
export function onlyOne(positionals: string[], what: string, usage: string): string {
  const v = requirePositional(positionals, what, usage);
  noPositionals(positionals.slice(1), usage);
  return v;
}

export function noPositionals(positionals: string[], usage: string): void {
  if (positionals.length > 0)
    throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
}

/** A flag without which the command cannot start; an empty value is as missing as none. */
export function required(flag: string, value: string | undefined, remediation: string): string {
  if (value === undefined || value === '') throw usageError(`missing --${flag}`, remediation);
  return value;
}

/**
 * A count, a port octet, a number of milliseconds: digits only (no sign, no fraction, no 1e3 or
 * 0x10, which Number() would take), within [min, max]. `unit` names what is counted in the message.
 */
/** A duration flag such as --max-age 26h: a whole number with a unit s, m, h, d or w; in seconds. */
export function parseDuration(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+)(s|m|h|d|w)$/.exec(v);
  if (!m) throw usageError(`--${flag} must be a number with a unit s, m, h, d or w (e.g. 26h); got "${v}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
}

export function wholeNumber(
  flag: string,
  value: string | undefined,
  range: { min: number; max?: number; unit?: string },
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const { min, max, unit } = range;
  if (!/^\d+$/.test(value.trim()) || n < min || (max !== undefined && n > max)) {
    const bounds = max !== undefined ? ` from ${min} to ${max}` : unit ? `, ${min} or more` : ` ≥ ${min}`;
    throw usageError(`--${flag} must be a whole number${unit ? ` of ${unit}` : ''}${bounds}; got "${value}"`);
  }
  return n;
}

/**
 * A duration or an interval: a plain decimal number (no sign, no exponent, no hex, not empty),
 * 0 or more, or more than 0 when `positive` (a wait of 0 s would fail at once).
 */
export function seconds(
  flag: string,
  value: string | undefined,
  opts: { positive?: boolean; unit?: string } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || (opts.positive === true && n === 0))
    throw usageError(
      `--${flag} must be a number of ${opts.unit ?? 'seconds'}, ${opts.positive ? 'more than 0' : '0 or more'}; got "${value}"`,
    );
  return n;
}

/** A fraction from 0 to less than 1: a plain decimal number (no sign, no exponent, no percent sign). */
export function fraction(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) >= 1)
    throw usageError(`--${flag} must be a fraction from 0 to less than 1 (0.1 for ±10 %); got "${value}"`);
  return Number(value);
}

/** The third octet N of a lab's loopback addresses 127.0.N.x. */
export function parseSubnet(value: string | undefined, dflt: number): number {
  return wholeNumber('subnet', value, { min: 1, max: 254 }) ?? dflt;
}

/** More than 64 parallel drains buys nothing: the batches' budgets bound them long before. */
export const MAX_DRAIN_CONCURRENCY = 64;

export function parseDrainConcurrency(value: string | undefined): number | undefined {
  return wholeNumber('drain-concurrency', value, { min: 1, max: MAX_DRAIN_CONCURRENCY, unit: 'nodes' });
}

/** `--provision-concurrency N`: exec provision commands of one worker batch at once. */
export function parseProvisionConcurrency(value: string | undefined): number | undefined {
  return wholeNumber('provision-concurrency', value, { min: 1, max: 64, unit: 'commands' });
}

/**
 * `--step-timeout KIND=SECONDS`, repeatable: a timeout per step kind. A missing or zero timeout
 * would fail the step at once: it is refused rather than guessed.
 */
export function parseStepTimeouts(items: readonly string[] | undefined): Record<string, number> {
  const timeouts: Record<string, number> = {};
  for (const kv of items ?? []) {
    const eq = kv.indexOf('=');
    const k = eq < 0 ? kv : kv.slice(0, eq);
    if (!k || !(STEP_KINDS as readonly string[]).includes(k))
      throw usageError(`--step-timeout ${kv}: unknown step kind ${k}`, `kinds: ${STEP_KINDS.join(', ')}`);
    const v = eq < 0 ? '' : kv.slice(eq + 1);
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
      throw usageError(
        `--step-timeout ${kv}: give the seconds as KIND=SECONDS, more than 0`,
        `e.g. --step-timeout ${k}=600`,
      );
    timeouts[k] = n;
  }
  return timeouts;
}

export interface SignalScope {
  /** Aborted, with the signal's name as the reason's message, when the first signal arrives. */
  readonly signal: AbortSignal;
  /** Removes the listeners; call it in a `finally`. */
  dispose(): void;
}

/**
 * Process signals abort a controller instead of killing the process, so that what was started
 * stops in order (a run after its current observation, a backup unpausing what it paused).
 * `again`: after the first signal, `default` gives the next one its usual effect (a second
 * Ctrl-C ends the process), `ignore` keeps catching them until `dispose`.
 */
export function abortOnSignals(
  o: {
    signals?: readonly NodeJS.Signals[];
    again?: 'default' | 'ignore';
    onSignal?: (sig: NodeJS.Signals) => void;
  } = {},
): SignalScope {
  const signals = o.signals ?? (['SIGINT', 'SIGTERM'] as const);
  const ctl = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (o.again !== 'ignore') dispose();
    if (ctl.signal.aborted) return;
    o.onSignal?.(sig);
    ctl.abort(new Error(sig));
  };
  const dispose = () => {
    for (const s of signals) process.off(s, handler);
  };
  for (const s of signals) process.on(s, handler);
  return { signal: ctl.signal, dispose };
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

/** `--probe URL[,expect=200][,max-fail=0.1%][,interval=MS][,timeout=MS]`; a bad part names itself. */
export function parseProbeFlag(text: string): UserProbe {
  const [url = '', ...opts] = text.split(',');
  const bad = (what: string) =>
    usageError(
      `--probe ${text}: ${what}`,
      'write it as --probe https://shop.example.com/healthz,expect=200,max-fail=0.1%,interval=250,timeout=2000 (options optional)',
    );
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw bad(`"${url}" is not an http:// or https:// URL`);
  const p: UserProbe = { url, expectStatus: 200, maxFailRatio: 0, intervalMs: 250, timeoutMs: 2000 };
  for (const o of opts) {
    const [k, v = ''] = o.split('=', 2) as [string, string?];
    const whole = (min: number, max: number) => {
      const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
      if (!(n >= min && n <= max)) throw bad(`${k}=${v}: a whole number from ${min} to ${max}`);
      return n;
    };
    switch (k.trim()) {
      case 'expect':
        p.expectStatus = whole(100, 599);
        break;
      case 'max-fail': {
        const m = /^(\d+(?:\.\d+)?)%$/.exec(v);
        const r = m ? Number(m[1]) / 100 : Number.NaN;
        if (!(r >= 0 && r <= 1)) throw bad(`max-fail=${v}: a percentage from 0% to 100%, e.g. max-fail=0.1%`);
        p.maxFailRatio = r;
        break;
      }
      case 'interval':
        p.intervalMs = whole(10, 3_600_000);
        break;
      case 'timeout':
        p.timeoutMs = whole(10, 600_000);
        break;
      default:
        throw bad(`unknown option "${o}" (expect, max-fail, interval, timeout)`);
    }
  }
  return p;
}
