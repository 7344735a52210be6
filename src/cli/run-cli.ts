import { describeError, type ExitCode, FerryError } from '../errors.js';
import { VERSION } from '../version.js';
import type { Io } from './io.js';
import { COMMANDS } from './registry.js';

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = [
    'ferry: move a live kubeadm cluster onto Talos Linux nodes in place, with zero downtime',
    '',
    'usage: ferry <command> [flags]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `ferry <command> --help` for a command's flags.",
    'Exit codes: 0 ok; 1 findings at or above --fail-on; 2 bad usage or input; 3 stopped at a gate; 4 internal error.',
  ];
  return `${lines.join('\n')}\n`;
}

export async function runCli(argv: string[], io: Io): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(helpText());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version') {
    io.stdout(`ferry ${VERSION}\n`);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.stderr(`error: unknown command "${name}"\n\n${helpText()}`);
    return 2;
  }
  try {
    const command = await entry.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(`${command.usage.trimEnd()}\n`);
      return 0;
    }
    return await command.run(rest, io);
  } catch (err) {
    io.stderr(`${describeError(err, { stack: io.env['FERRY_DEBUG'] === '1' })}\n`);
    if (err instanceof FerryError) return err.exitCode;
    return 4;
  }
}
