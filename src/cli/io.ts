/** What a command may touch of the outside world; tests pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stdout is a terminal: colour and progress only then. */
  isTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export function processIo(): Io {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stdout.isTTY) && process.env['NO_COLOR'] === undefined,
    cwd: process.cwd(),
    env: process.env,
  };
}

/** An Io that records output, for tests. */
export function memoryIo(opts: { isTTY?: boolean; cwd?: string } = {}): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    isTTY: opts.isTTY ?? false,
    cwd: opts.cwd ?? process.cwd(),
    env: {},
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
  };
  return io;
}
