import { createHash } from 'node:crypto';

/**
 * sha256 over a canonical JSON form (object keys sorted, undefined dropped): the same data gives
 * the same digest whatever order its keys were built in. Used to tie a plan to its snapshot/facts.
 */
export function digestOf(value: unknown): string {
  const h = createHash('sha256');
  write(value, (s) => h.update(s));
  return `sha256:${h.digest('hex')}`;
}

function write(v: unknown, out: (s: string) => void): void {
  if (v === null || typeof v !== 'object') {
    out(v === undefined ? 'null' : JSON.stringify(v));
    return;
  }
  if (Array.isArray(v)) {
    out('[');
    v.forEach((x, i) => {
      if (i > 0) out(',');
      write(x, out);
    });
    out(']');
    return;
  }
  const o = v as Record<string, unknown>;
  out('{');
  let first = true;
  for (const k of Object.keys(o).sort()) {
    if (o[k] === undefined) continue;
    if (!first) out(',');
    first = false;
    out(JSON.stringify(k));
    out(':');
    write(o[k], out);
  }
  out('}');
}
