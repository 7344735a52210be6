import { resolve } from 'node:path';
import { describeError, type ExitCode } from '../errors.js';
import type { SignalReading } from '../ports/signals.js';
import { abortOnSignals, requirePositional } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import { parseRunFlags, type RunFlags, runSettings, usage } from './run-flags.js';

export const command: Command = {
  name: 'run',
  summary: 'execute a plan: gated, journalled, resumable, with availability probes',
  usage,
  async run(argv: string[], io: Io): Promise<ExitCode> {
    const { values, positionals } = parseRunFlags(argv);
    if (values.help) {
      io.stdout(usage);
      return 0;
    }
    const planArg = requirePositional(positionals, 'PLAN (a plan.json written by ferry plan)', usage);
    const planFile = resolve(io.cwd, planArg);
    const [{ readPlan }, { executeRun }] = await Promise.all([
      import('../plan/load.js'),
      import('../app/execute.js'),
    ]);
    const plan = await readPlan(planFile, planArg);
    const settings = {
      ...runSettings(values, plan, planFile, io),
      ...(await snapshotRecipients(values, io)),
    };
    const log = (line: string) => io.stdout(`${line}\n`);
    const interrupt = abortOnSignals({
      onSignal: (sig) => log(`${sig}: stopping after the current observation; resume with --resume`),
    });
    try {
      const r = await executeRun({ ...settings, log, signal: interrupt.signal });
      if (r.kind === 'dry-run') {
        io.stdout(`etcd: ${r.etcd.members} member(s), leader ${r.etcd.leader ?? 'none'}\n`);
        io.stdout(`API through ${r.api.server}: /readyz ${r.api.ready ? 'ok' : 'FAILS'}\n`);
        for (const sig of r.signals) io.stdout(`signal: ${signalLine(sig.name, sig.reading)}\n`);
        for (const p of plan.phases) {
          io.stdout(`phase ${p.id} ${p.name}: ${p.steps.length} step(s)\n`);
          for (const s of p.steps)
            io.stdout(
              `  ${s.id}  ${s.action.performer}${s.destructive ? '  DESTRUCTIVE' : ''}  ${s.title}\n`,
            );
        }
        io.stdout('dry run: nothing was changed\n');
        return 0;
      }
      const s = r.session;
      for (const { summary: x } of s.probes) {
        const lost = x.extra?.['lost'];
        log(
          `probe ${x.name}: ${x.failures}/${x.attempts} failed, longest failure window ${x.longestFailureWindowMs} ms, longest gap ${x.longestGapMs} ms${lost !== undefined ? `, acknowledged writes lost ${lost}` : ''}`,
        );
      }
      if (s.result.status === 'completed') {
        log(`run completed: ${s.result.steps.length} step(s) this run; journal ${s.journalFile}`);
        return 0;
      }
      io.stderr(`${describeError(s.result.error)}\n`);
      io.stderr(
        `stopped at ${s.result.stoppedAt ?? '?'}; journal ${s.journalFile}; continue with: ferry run ${planArg} … --resume\n`,
      );
      return s.result.error?.exitCode ?? 3;
    } finally {
      interrupt.dispose();
    }
  },
};

function signalLine(name: string, r: SignalReading): string {
  switch (r.kind) {
    case 'clear':
      return `${name}: clear`;
    case 'firing':
      return `${name}: ${r.items.length} not holding, the run would stop at its first gate: ${r.items.join('; ')}`;
    case 'unobserved':
      return `${name}: NOT READ (${r.reason}): the run would stop at its first gate`;
  }
}

/** `--snapshot-recipient` and `--snapshot-recipients-file`, read before anything connects. */
async function snapshotRecipients(values: RunFlags, io: Io): Promise<{ snapshotRecipients?: string[] }> {
  const flags = values['snapshot-recipient'] ?? [];
  const files = (values['snapshot-recipients-file'] ?? []).map((f) => resolve(io.cwd, f));
  if (flags.length === 0 && files.length === 0) return {};
  const { loadRecipients } = await import('../mgmt/age.js');
  const names = {
    flag: '--snapshot-recipient',
    file: '--snapshot-recipients-file',
    why: 'the run encrypts its etcd snapshots when asked',
  };
  return { snapshotRecipients: await loadRecipients(flags, files, names) };
}
