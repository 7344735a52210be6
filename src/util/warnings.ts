/**
 * grpc-js (inside etcd3) gives an etcd member's IP address as the TLS server name. Node ignores
 * an IP there and warns (DEP0123) on every connection, which would litter the output of every
 * `ferry run` (the CLI and the etcd probe's process install this). The certificate is still
 * checked against the IP address. Only that warning is dropped.
 */
type Emit = NodeJS.Process['emitWarning'];

export function dropServernameWarning(proc: { emitWarning: Emit } = process): void {
  const emit = proc.emitWarning.bind(proc) as (...args: unknown[]) => void;
  proc.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const [typeOrOptions, code] = rest;
    const c =
      typeof typeOrOptions === 'object' && typeOrOptions !== null
        ? (typeOrOptions as { code?: unknown }).code
        : code;
    if (c === 'DEP0123') return;
    emit(warning, ...rest);
  }) as Emit;
}
