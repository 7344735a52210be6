/**
 * `npm run bench [-- NAME [flags]]`: runs every benchmark (bench/<name>.ts exporting `bench`), or
 * the one named, with the flags after its name. Benchmarks print figures; they are not tests and
 * `npm test` never runs them.
 */
import { readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench } from './lib/bench.js';

const HERE = dirname(fileURLToPath(import.meta.url));

async function discover(): Promise<Bench[]> {
  const files = (await readdir(HERE)).filter((f) => f.endsWith('.ts') && f !== 'run.ts').sort();
  const out: Bench[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(`${HERE}/${f}`).href)) as { bench?: Bench };
    if (mod.bench) out.push(mod.bench);
  }
  return out;
}

async function main(argv: string[]): Promise<number> {
  const benches = await discover();
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h') {
    console.log('usage: npm run bench [-- NAME [flags]]\n');
    for (const b of benches) console.log(`  ${b.name.padEnd(16)} ${b.summary}`);
    return 0;
  }
  const chosen = name === undefined ? benches : benches.filter((b) => b.name === name);
  if (chosen.length === 0) {
    console.error(`no benchmark named "${name}"; known: ${benches.map((b) => b.name).join(', ')}`);
    return 2;
  }
  for (const b of chosen) {
    console.log(`== ${b.name}: ${b.summary}`);
    await b.run(name === undefined ? [] : rest);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(4);
  },
);
