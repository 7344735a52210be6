import { resolve } from 'node:path';
import type { RehearseResult } from '../app/rehearse.js';
import { describeError, type ExitCode, usageError } from '../errors.js';
import {
  abortOnSignals,
  oneOf,
  parseFlags,
  parsePhases,
  parseProbeFlag,
  parseSubnet,
  requirePositional,
} from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry rehearse SNAPSHOT [--dir DIR] [--subnet N] [--strategy surge|replace] [--phases LIST] [--keep]
       [--provisioner lab|capi] [--infra proxmox]

Rehearses the migration of the cluster in SNAPSHOT on a lab: starts the lab (real etcd members on
loopback, one lab API server per control plane, a load balancer, simulated kubelets), generates the
kit, builds the plan (with --surge-replicas, so that a workload whose PodDisruptionBudget allows no
disruption is scaled up by one around its drains), runs it with the lab provisioner while probing
the API through the endpoint, etcd writes, and the lab's canary Service (an HTTP request every
10 ms to real listeners on loopback, as the apps' users would see the roll), watches every
workload's Ready pods against its PDB, writes a report (DIR/rehearsal.md, .html with a timeline
and a plot of the probes, and .json), and stops the lab. The lab is never presented as a real cluster: the report says which
etcd binaries stand in for the versions the snapshot names (kubeadm members on etcd 3.4, Talos
members on 3.5), and which phases a lab cannot rehearse (node-side preparation, after-care).

  --dir DIR          work directory (default .ferry/rehearse): lab/, kit/, plan.json, journal, reports
  --subnet N         third octet of the lab's loopback addresses 127.0.N.x (default 30)
  --strategy S       surge (default) | replace
  --phases LIST      phases to run (default 0,2,3,4: preflight, control planes, workers, last
                     control plane)
  --provisioner P    lab (default) | capi: the lab also runs a stand-in for Cluster API (its API
                     server is the management cluster), the kit is made for Cluster API, ferry
                     adopts the cluster, adds every node through Cluster API (the lab decommissions
                     the old ones) and hands the TalosControlPlane over; the report also checks that
                     no etcd member was removed and that the TalosControlPlane is unpaused and ready
  --infra I          capi: proxmox (default; the lab stands in for it)
  --probe URL[,OPTION…]  one of your own HTTP(S) endpoints, as \`ferry run --probe\` takes it:
                     requested throughout, in the report, and a gate on its failure budget
  --keep             leave the lab's files (etcd data, PKI, logs) in DIR/lab when it stops (its
                     processes always stop); the data then lives there rather than on /dev/shm.
                     See them with \`ferry lab status --dir DIR/lab\`, remove them with
                     \`ferry lab down --dir DIR/lab\` (the next rehearsal in DIR also replaces them)

Exit codes: 0 the run completed and every check passed; 1 the run completed but a check failed
(API errors, a lost write, a violated PodDisruptionBudget, a long etcd write gap, a failed canary
request, a workload below its PDB's minimum Ready); 2 bad usage or
input; 3 the run stopped at a gate; 4 internal error (in ferry, the lab or a step).
`;

const options = {
  dir: { type: 'string' },
  subnet: { type: 'string' },
  strategy: { type: 'string' },
  phases: { type: 'string' },
  keep: { type: 'boolean' },
  provisioner: { type: 'string' },
  infra: { type: 'string' },
  probe: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

export const command: Command = {
  name: 'rehearse',
  summary: 'rehearse the migration on a lab: lab up, generate, plan, run, report, lab down',
  usage,
  async run(argv: string[], io: Io): Promise<ExitCode> {
    const { values, positionals } = parseFlags(argv, options, usage);
    if (values.help) {
      io.stdout(usage);
      return 0;
    }
    const snapshot = resolve(
      io.cwd,
      requirePositional(positionals, 'SNAPSHOT (a snapshot directory)', usage),
    );
    const subnet = parseSubnet(values.subnet, 30);
    const phases = parsePhases(values.phases);
    const strategy = oneOf('strategy', values.strategy, ['surge', 'replace'] as const, 'surge');
    const provisioner = oneOf('provisioner', values.provisioner, ['lab', 'capi'] as const, 'lab');
    if (values.infra !== undefined && provisioner !== 'capi')
      throw usageError('--infra is for --provisioner capi', 'add --provisioner capi, or leave --infra out');
    const infra = oneOf('infra', values.infra, ['proxmox'] as const, 'proxmox');
    const { rehearse, rehearsalLabDir } = await import('../app/rehearse.js');
    const dir = resolve(io.cwd, values.dir ?? '.ferry/rehearse');
    const t0 = Date.now();
    const log = (l: string) => io.stdout(`${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}  ${l}\n`);
    const interrupt = abortOnSignals({ signals: ['SIGINT'] });
    try {
      const r = await rehearse({
        snapshotPath: snapshot,
        dir,
        subnet,
        strategy,
        ...(phases && { phases }),
        ...(values.keep && { keepData: true }),
        ...(provisioner === 'capi' && { provisioner, infra }),
        ...(values.probe && { userProbes: values.probe.map(parseProbeFlag) }),
        log,
        signal: interrupt.signal,
      });
      io.stdout('\nchecks:\n');
      for (const c of r.checks) io.stdout(`  ${c.ok ? 'pass' : 'FAIL'}  ${c.name}: ${c.detail}\n`);
      for (const n of r.notes) io.stdout(`note: ${n}\n`);
      if (r.result.status !== 'completed') io.stderr(`${describeError(r.result.error)}\n`);
      return rehearsalExitCode(r);
    } finally {
      interrupt.dispose();
      // Also after a failure: what was kept is what there is to inspect.
      if (values.keep) await sayKept(rehearsalLabDir(dir), io);
    }
  },
};

/**
 * A rehearsal's exit code: a run that stopped keeps its own (3 at a gate, 4 an internal error,
 * 2 bad input); a completed run is 0 when every check passed, else 1.
 */
export function rehearsalExitCode(r: Pick<RehearseResult, 'result' | 'checks'>): ExitCode {
  if (r.result.status !== 'completed') return r.result.error?.exitCode ?? 3;
  return r.checks.every((c) => c.ok) ? 0 : 1;
}

/** How to see and remove a kept lab, as commands that run as printed. */
export function keptLabHint(labDir: string): string {
  const d = shellWord(labDir);
  return [
    `lab files kept in ${labDir} (its processes have stopped):`,
    `  see them:    ferry lab status --dir ${d}`,
    `  remove them: ferry lab down --dir ${d}`,
    '',
  ].join('\n');
}

async function sayKept(labDir: string, io: Io): Promise<void> {
  const { rehearsalKeptLab } = await import('../app/rehearse.js');
  if (await rehearsalKeptLab(labDir)) io.stdout(`\n${keptLabHint(labDir)}`);
}

/** A path as one shell word. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}
