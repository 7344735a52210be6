/**
 * Writes the malformed inputs of the fuzz suite (test/fuzz/cases.ts) to a directory, one
 * directory per case, so a person can look at them and replay each command by hand:
 *
 *   npx tsx scripts/fuzz-inputs.ts OUTDIR
 *
 * OUTDIR/bases/ holds the well-formed inputs the cases start from (the example cluster, its saved
 * snapshot, kit and plan); OUTDIR/NNN-name/ holds one case. One line per case and command is
 * printed: the command to run from that directory, which must exit 2 (test/fuzz/fuzz.test.ts runs
 * the same and checks the rest). OUTDIR must not exist yet.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { buildBases } from '../test/fuzz/bases.js';
import { fuzzCases, writeCase } from '../test/fuzz/cases.js';
import { argvFor, caseDirName, replayLine } from '../test/fuzz/harness.js';

async function main(argv: string[]): Promise<number> {
  const [out, ...rest] = argv;
  if (out === undefined || out === '-h' || out === '--help' || rest.length > 0) {
    process.stderr.write('usage: npx tsx scripts/fuzz-inputs.ts OUTDIR   (OUTDIR must not exist)\n');
    return out === '-h' || out === '--help' ? 0 : 2;
  }
  const root = resolve(out);
  if (existsSync(root)) {
    process.stderr.write(`error: ${out} exists; give a new directory\n`);
    return 2;
  }
  await mkdir(join(root, 'bases'), { recursive: true });
  const bases = await buildBases(join(root, 'bases'));
  const cases = fuzzCases();
  for (const [i, c] of cases.entries()) {
    const name = caseDirName(i, c.name);
    const dir = join(root, name);
    await mkdir(dir);
    await writeCase(c, bases, dir);
    for (const command of c.commands)
      process.stdout.write(
        `${c.name} [${command}]: (cd ${join(out, name)} && ${replayLine(argvFor(c, command))})\n`,
      );
  }
  process.stderr.write(`${cases.length} cases written to ${out}; each command above must exit 2\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
