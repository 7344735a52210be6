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

/**
 * A writer to a stream whose reader may go away (`ferry audit -o json | head`): once the pipe is
 * closed (EPIPE) the rest of the output is dropped quietly, and the command goes on to its own
 * end and exit code: a run must not stop mid-step because nobody reads its log any more. Any other
 * write error is said once on stderr.
 */
export function pipeWriter(stream: NodeJS.WritableStream, name: string): (text: string) => void {
  let closed = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (closed) return;
    closed = true;
    if (err.code !== 'EPIPE' && stream !== process.stderr)
      process.stderr.write(
        `ferry: writing to ${name} failed (${err.code ?? err.message}); the rest of its output is dropped\n`,
      );
  });
  return (text) => {
    if (!closed) stream.write(text);
  };
}

export function processIo(): Io {
  return {
    stdout: pipeWriter(process.stdout, 'stdout'),
    stderr: pipeWriter(process.stderr, 'stderr'),
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
