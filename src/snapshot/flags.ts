import type { Flag } from './model.js';

/**
 * Splits a component command line the way Go's flag/pflag packages read it: `--a=b`, `-a=b`,
 * `--a b` (only when `b` does not start with "-", otherwise `--a` is a bare boolean), repeated
 * flags kept in order, bare booleans as "true", and `--` ending the flags.
 */
export function parseCommandLine(argv: string[]): { binary: string; flags: Flag[]; positionals: string[] } {
  const binary = argv[0] ?? '';
  const flags: Flag[] = [];
  const positionals: string[] = [];
  let i = 1;
  while (i < argv.length) {
    const tok = argv[i] as string;
    i++;
    if (tok === '--') {
      positionals.push(...argv.slice(i));
      break;
    }
    if (!tok.startsWith('-') || tok === '-') {
      positionals.push(tok);
      continue;
    }
    const body = tok.startsWith('--') ? tok.slice(2) : tok.slice(1);
    const eq = body.indexOf('=');
    if (eq >= 0) {
      flags.push({ name: body.slice(0, eq), value: body.slice(eq + 1) });
      continue;
    }
    const next = argv[i];
    if (next !== undefined && !next.startsWith('-')) {
      flags.push({ name: body, value: next });
      i++;
    } else {
      flags.push({ name: body, value: 'true' });
    }
  }
  return { binary, flags, positionals };
}

/** Every value given for `name`, in order (repeatable flags such as --service-account-issuer). */
export function flagValues(flags: Flag[], name: string): string[] {
  const out: string[] = [];
  for (const f of flags) if (f.name === name) out.push(f.value);
  return out;
}

/** The value that takes effect for a scalar flag: the last one wins in Go's flag packages. */
export function lastFlag(flags: Flag[], name: string): string | undefined {
  for (let i = flags.length - 1; i >= 0; i--) {
    const f = flags[i] as Flag;
    if (f.name === name) return f.value;
  }
  return undefined;
}
