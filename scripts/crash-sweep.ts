/**
 * Crash sweep: for every step kind of the example's rehearsal plan (examples/lab-cluster, the plan
 * `prepareLabRun` builds, the phases `ferry rehearse` runs), SIGKILL `ferry run` in the middle of a
 * step of that kind, `--resume` until the plan completes, and check the invariants (no destructive
 * action twice, no node left cordoned the plan did not cordon, the rehearsal's checks). Each kind
 * gets a fresh lab and runs phases 0,2,4, or 0,2,3,4 for a kind only the workers' phase has
 * (`sweepPhases`). The harness is src/run/testing-crash-sweep.ts; docs/crash-sweep.md has the table.
 *
 *   npx tsx scripts/crash-sweep.ts [--kinds a,b,c] [--sample N] [--json FILE] [--md FILE]
 *                                  [--subnet N] [--dir DIR] [--keep]
 *
 * Exit 0 when every kind kept every invariant, 1 otherwise, 2 on bad usage.
 */
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { missingReason } from '../src/lab/etcd/binaries.js';
import { disposeAllLabs } from '../src/lab/etcd/cluster.js';
import { STEP_KINDS, type StepKind } from '../src/plan/model.js';
import {
  type CrashResult,
  crashRun,
  disposeAllCrashLabs,
  kindsOf,
  renderTable,
  SWEEP_ALL_PHASES,
  startSweepLab,
  sweepPhases,
  sweepRows,
} from '../src/run/testing-crash-sweep.js';

const { values } = parseArgs({
  options: {
    kinds: { type: 'string' },
    sample: { type: 'string' },
    json: { type: 'string' },
    md: { type: 'string' },
    subnet: { type: 'string' },
    dir: { type: 'string' },
    keep: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});

const usage =
  'usage: npx tsx scripts/crash-sweep.ts [--kinds a,b,c] [--sample N] [--json FILE] [--md FILE] [--subnet N] [--dir DIR] [--keep]\n';
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const bad = (m: string): never => {
  process.stderr.write(`crash-sweep: ${m}\n${usage}`);
  process.exit(2);
};

const subnet = values.subnet === undefined ? 52 : Number(values.subnet);
if (!Number.isInteger(subnet) || subnet < 1 || subnet > 254) bad(`--subnet must be 1–254`);
const asked = values.kinds?.split(',').map((k) => k.trim()) as StepKind[] | undefined;
for (const k of asked ?? [])
  if (!(STEP_KINDS as readonly string[]).includes(k)) bad(`unknown step kind ${k}`);
const sample = values.sample === undefined ? undefined : Number(values.sample);
if (sample !== undefined && (!Number.isInteger(sample) || sample < 1))
  bad('--sample must be a positive integer');

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));
if (missing) {
  process.stderr.write(`crash-sweep: ${missing}\n`);
  process.exit(2);
}

process.once('SIGINT', () => {
  process.stderr.write('crash-sweep: interrupted; stopping the runs and the labs\n');
  void disposeAllCrashLabs()
    .then(() => disposeAllLabs())
    .finally(() => process.exit(130));
});

const root = resolve(values.dir ?? join(tmpdir(), `ferry-crash-sweep-${process.pid}`));
const t0 = Date.now();
const log = (l: string) =>
  process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1).padStart(7)}  ${l}\n`);

// The first lab tells which kinds the plan has; it serves the first kind too.
const first = await startSweepLab({ dir: join(root, 'lab-1'), subnet, log: (l) => log(`  ${l}`) });
const planKinds = kindsOf(first.plan, SWEEP_ALL_PHASES);
let kinds = asked ? planKinds.filter((k) => asked.includes(k)) : planKinds;
for (const k of asked ?? [])
  if (!planKinds.includes(k)) log(`not in the rehearsal plan (phases ${SWEEP_ALL_PHASES.join(',')}): ${k}`);
if (sample !== undefined && sample < kinds.length) {
  const pick = [...kinds].sort(() => Math.random() - 0.5).slice(0, sample);
  kinds = kinds.filter((k) => pick.includes(k));
}
log(`kinds (${kinds.length}): ${kinds.join(', ')}`);

const results: CrashResult[] = [];
for (const [i, kind] of kinds.entries()) {
  const dir = join(root, `lab-${i + 1}`);
  // crashRun gives the lab these phases before its first run (the first lab's included).
  const phases = sweepPhases(first.plan, [kind]);
  log(`── ${kind} (${i + 1}/${kinds.length}, phases ${phases.join(',')})`);
  const crashLab =
    i === 0
      ? first
      : await startSweepLab({ dir, subnet, phases, log: (l) => log(`  ${l}`) }).catch((err: Error) => err);
  if (crashLab instanceof Error) {
    log(`lab did not start: ${crashLab.message}`);
    results.push({
      kinds: [kind],
      targets: [{ kind, resumes: 0, operator: [], stops: [], passed: [], error: `lab: ${crashLab.message}` }],
      completed: false,
      invariants: [],
      ok: false,
      durationMs: 0,
      runs: 0,
      dir,
      probeFailures: [],
    });
    continue;
  }
  let r: CrashResult;
  try {
    r = await crashRun({ dir, subnet, kinds: [kind], crashLab, log: (l) => log(`  ${l}`) });
  } finally {
    await crashLab.dispose();
  }
  results.push(r);
  if (r.ok && !values.keep) await rm(dir, { recursive: true, force: true });
  for (const inv of r.invariants) if (!inv.ok) log(`  FAILED ${inv.name}: ${inv.detail}`);
  log(
    `   ${r.ok ? 'ok' : 'FAILED'} in ${(r.durationMs / 1000).toFixed(1)} s, ${r.runs} runs${r.ok && !values.keep ? '' : `; journal, plan and run logs (runs.log) kept in ${dir}`}`,
  );
}
if (kinds.length === 0) await first.dispose();
await disposeAllLabs();

const rows = sweepRows(results);
const table = renderTable(rows);
process.stdout.write(`\n${table}`);
const failed = rows.filter((r) => !r.ok);
process.stdout.write(
  `\n${rows.length - failed.length}/${rows.length} kinds ok; total ${((Date.now() - t0) / 1000).toFixed(0)} s\n`,
);
if (values.json) await writeFile(resolve(values.json), `${JSON.stringify({ rows, results }, null, 2)}\n`);
if (values.md) await writeFile(resolve(values.md), table);
if (!values.keep && !values.dir && failed.length === 0) await rm(root, { recursive: true, force: true });
else log(`work directories in ${root}`);
process.exit(failed.length ? 1 : 0);
