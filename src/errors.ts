/**
 * Typed errors with a cause chain and a remediation. The CLI maps each kind to an exit code
 * (design.md): 2 bad usage or bad input, 3 a run stopped at a gate, 4 internal error.
 */
export type ExitCode = 0 | 1 | 2 | 3 | 4;

export type Location = {
  /** File the problem is in, relative to the input the user gave when possible. */
  file?: string;
  line?: number;
  column?: number;
  /** Kubernetes object or logical object, e.g. "ConfigMap kube-system/kubeadm-config". */
  object?: string;
  /** Field path inside the object or document, e.g. "networking.podSubnet". */
  field?: string;
};

export type FerryErrorKind = 'usage' | 'input' | 'gate' | 'internal' | 'unreachable';

export class FerryError extends Error {
  readonly kind: FerryErrorKind;
  readonly remediation: string | undefined;
  readonly location: Location | undefined;

  constructor(
    kind: FerryErrorKind,
    message: string,
    opts: { remediation?: string; location?: Location; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'FerryError';
    this.kind = kind;
    this.remediation = opts.remediation;
    this.location = opts.location;
  }

  get exitCode(): ExitCode {
    switch (this.kind) {
      case 'usage':
      case 'input':
      case 'unreachable':
        return 2;
      case 'gate':
        return 3;
      default:
        return 4;
    }
  }
}

/** Bad input: a file, flag value or object ferry cannot use. Exit code 2. */
export function inputError(
  message: string,
  location: Location,
  remediation: string,
  cause?: unknown,
): FerryError {
  return new FerryError('input', message, { location, remediation, cause });
}

export function usageError(message: string, remediation?: string): FerryError {
  return new FerryError('usage', message, remediation === undefined ? {} : { remediation });
}

export function formatLocation(loc: Location | undefined): string {
  if (!loc) return '';
  const parts: string[] = [];
  if (loc.file) {
    let f = loc.file;
    if (loc.line !== undefined) f += `:${loc.line}`;
    if (loc.line !== undefined && loc.column !== undefined) f += `:${loc.column}`;
    parts.push(f);
  }
  if (loc.object) parts.push(loc.object);
  if (loc.field) parts.push(`field ${loc.field}`);
  return parts.join(', ');
}

/** Renders an error and its cause chain for a human, without stack traces unless asked. */
export function describeError(err: unknown, opts: { stack?: boolean } = {}): string {
  const lines: string[] = [];
  let cur: unknown = err;
  let depth = 0;
  while (cur !== undefined && cur !== null && depth < 8) {
    const prefix = depth === 0 ? 'error: ' : '  caused by: ';
    if (cur instanceof FerryError) {
      const where = formatLocation(cur.location);
      lines.push(`${prefix}${where ? `${where}: ` : ''}${cur.message}`);
    } else if (cur instanceof Error) {
      lines.push(`${prefix}${cur.message}`);
      if (opts.stack && cur.stack) lines.push(cur.stack);
    } else {
      lines.push(`${prefix}${String(cur)}`);
    }
    cur = cur instanceof Error ? cur.cause : undefined;
    depth++;
  }
  if (err instanceof FerryError && err.remediation) lines.push(`  fix: ${err.remediation}`);
  return lines.join('\n');
}
