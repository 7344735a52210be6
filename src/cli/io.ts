/** What a command may touch of the outside world; tests pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** True when stdout is a terminal: colour and progress only then. */
  isTTY: boolean;
  /** True when stderr is a terminal: the live progress line (it goes to stderr) only then. */
  stderrIsTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export function processIo(): Io {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    isTTY: Boolean(process.stdout.isTTY) && process.env['NO_COLOR'] === undefined,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
    env: process.env,
  };
}

/** An Io that records output, for tests. */
export function memoryIo(
  opts: { isTTY?: boolean; stderrIsTTY?: boolean; cwd?: string } = {},
): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    isTTY: opts.isTTY ?? false,
    // Both streams on the same terminal unless a test says otherwise.
    stderrIsTTY: opts.stderrIsTTY ?? opts.isTTY ?? false,
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
