import { type ExitCode, usageError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import { FACTS_OUTPUTS, renderFacts } from '../facts/render.js';
import { TARGET_FLAG_OPTIONS, TARGET_FLAGS_USAGE, targetInputFromFlags } from '../facts/target.js';
import type { Snapshot } from '../snapshot/model.js';
import { oneOf, parseFlags, requirePositional } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry facts SNAPSHOT [-o table|json|yaml] [target flags]

Prints every fact ferry derives from a snapshot (a saved snapshot or a files directory, see
docs/snapshot-layout.md), each with its provenance. When sources disagree the fact is marked
CONFLICT and lists every candidate and which one ferry believes; a fact that cannot be derived is
marked MISSING and says what to provide. The target (Talos version, ...) is printed with the
origin of each value.

  -o, --output FORMAT      table (default) | json | yaml
${TARGET_FLAGS_USAGE}

Exit codes: 0 ok (conflicts and missing facts are reported, not errors); 2 bad usage or input.
`;

const options = {
  output: { type: 'string', short: 'o' },
  ...TARGET_FLAG_OPTIONS,
} as const;

/** Loads `path` as the user typed it, reading relative to `cwd`. */
export type SnapshotLoader = (path: string, cwd: string) => Promise<Snapshot>;

/**
 * The PKI is not a fact source, so a broken PKI must not hide the facts: load without the strict
 * PKI check (the audit reports PKI problems).
 */
const defaultLoader: SnapshotLoader = async (path, cwd) => {
  const { loadSnapshot } = await import('../snapshot/load.js');
  return loadSnapshot(path, { strictPki: false, cwd });
};

export function makeFactsCommand(load: SnapshotLoader = defaultLoader): Command {
  return {
    name: 'facts',
    summary: 'print the facts derived from a snapshot, each with its provenance',
    usage,
    async run(argv: string[], io: Io): Promise<ExitCode> {
      const { values, positionals } = parseFlags(argv, options, usage);
      const format = oneOf('output', values.output, FACTS_OUTPUTS, 'table');
      const target = targetInputFromFlags(values);
      const path = requirePositional(positionals, 'SNAPSHOT (a snapshot directory)', usage);
      if (positionals.length > 1) {
        throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${usage.trim()}`);
      }
      const snapshot = await load(path, io.cwd);
      const { refuseUnobserved } = await import('../snapshot/unobserved.js');
      refuseUnobserved(snapshot, 'ferry facts', path);
      io.stdout(renderFacts(deriveFacts(snapshot, target), format));
      return 0;
    },
  };
}

export const command: Command = makeFactsCommand();
