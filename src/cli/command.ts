import type { ExitCode } from '../errors.js';
import type { Io } from './io.js';

/** A command only translates flags, calls the core and renders. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[], io: Io): Promise<ExitCode>;
}
