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

/**
 * The AWS SDK warns once per process, on its first client, that releases after January 2027 need
 * Node 22. ferry pins a release that runs on Node 20 (package.json), the version the README names,
 * so the warning is noise on every S3 command. Only that warning is switched off, through the
 * SDK's own variable, and only when the operator has not set it.
 */
export function quietAwsSdkNodeWarning(env: NodeJS.ProcessEnv = process.env): void {
  env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
}
