import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type ExitCode, FerryError, usageError } from '../errors.js';
import type { HolderCommand } from '../lab/holder.js';
import { LAB_SPEED } from '../lab/provisioner/clock.js';
import { abortOnSignals, noPositionals, oneOf, onlyOne, parseFlags, parseSubnet } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import { LAB_CLOCK_OPTIONS, parseLabClock } from './lab-clock.js';

const usage = `usage: ferry lab up SNAPSHOT [--dir DIR] [--subnet N] [CLOCK] [-o text|json]
       ferry lab status [--dir DIR] [-o text|json]
       ferry lab down [--dir DIR]
       ferry lab serve SNAPSHOT [--dir DIR] [--subnet N] [CLOCK]
  CLOCK: [--boot-seconds S] [--decommission-seconds S] [--jitter F]

The lab is a local stand-in for a cluster, for rehearsals and tests (it is never a real cluster):
real etcd members for the snapshot's control planes, one lab API server per control plane backed
by its own member, a load balancer on the endpoint, and a controller playing kubelets, scheduler
and controllers. Every address of the snapshot is mapped to a loopback address 127.0.N.x; the lab
never connects to the snapshot's addresses.

  up       load SNAPSHOT into a lab running in the background; prints the kubeconfig and the etcd
           client settings once nodes and workloads are up
  status   what runs in DIR: processes, API instances, load balancer, nodes
  down     stop the lab in DIR and everything it started; removes its data and credentials
  serve    run the lab in the foreground (what \`up\` starts in the background); Ctrl-C stops it

  --dir DIR                 lab state directory (default ${'.ferry/lab'})
  --subnet N                third octet of the lab's loopback addresses, 1-254 (default 60)
  --boot-seconds S          how long a machine ferry provisions takes to boot, Talos install
                            included, before its etcd member or Node joins (default 0: at once;
                            production takes minutes)
  --decommission-seconds S  how long a machine told to power off keeps answering (default 0; a
                            run through --lab-socket waits up to 120 s for each call)
  --jitter F                each machine's times vary by up to ±F of those, 0 ≤ F < 1 (default 0;
                            0.1: ±10 %)
  -o, --output F            text (default) | json

Exit codes: 0 ok; 2 bad usage or input (no lab in DIR for status); 4 the lab failed to start.
`;

const options = {
  dir: { type: 'string' },
  subnet: { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

/** What `up` and `serve` take besides those. */
const labOptions = { ...options, ...LAB_CLOCK_OPTIONS } as const;

const DEFAULT_SUBNET = 60;

/** How `up` starts the holder: this CLI again, with `lab serve` (tsx when running from source). */
export const defaultHolderCommand: HolderCommand = (args) => {
  const here = dirname(fileURLToPath(import.meta.url));
  const js = join(here, 'main.js');
  if (existsSync(js)) return { command: process.execPath, args: [js, ...args] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { command: process.execPath, args: ['--import', tsx, join(here, 'main.ts'), ...args] };
};

/** SNAPSHOT, --dir, --subnet and the clock, as `up` and `serve` take them. */
function labArgs(argv: string[], io: Io) {
  const { values, positionals } = parseFlags(argv, labOptions, usage);
  return {
    values,
    snapshot: resolve(io.cwd, onlyOne(positionals, 'SNAPSHOT (a snapshot directory)', usage)),
    dir: resolve(io.cwd, values.dir ?? '.ferry/lab'),
    subnet: parseSubnet(values.subnet, DEFAULT_SUBNET),
    clock: parseLabClock(values, LAB_SPEED),
  };
}

async function up(argv: string[], io: Io, holder: HolderCommand): Promise<ExitCode> {
  const { values, snapshot, dir, subnet, clock } = labArgs(argv, io);
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const [{ startHolder }, { renderLab }] = await Promise.all([
    import('../lab/holder.js'),
    import('../lab/render.js'),
  ]);
  let started = Date.now();
  const state = await startHolder({
    snapshot,
    dir,
    subnet,
    clock,
    holder,
    cwd: io.cwd,
    env: io.env,
    started: (pid, log) => {
      started = Date.now();
      io.stderr(`starting the lab from ${snapshot} (holder pid ${pid}, log ${log})...\n`);
    },
  });
  if (format === 'json') io.stdout(`${JSON.stringify(state, null, 2)}\n`);
  else io.stdout(renderLab(state, [`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`]));
  return 0;
}

async function serve(argv: string[], io: Io): Promise<ExitCode> {
  const { snapshot, dir, subnet, clock } = labArgs(argv, io);
  const { serveLab } = await import('../lab/holder.js');
  const log = (line: string) => io.stdout(`${new Date().toISOString()} ${line}\n`);
  // Bound before the lab starts, and kept: a second signal must not cut the orderly stop short.
  const stop = abortOnSignals({ signals: ['SIGTERM', 'SIGINT', 'SIGHUP'], again: 'ignore' });
  try {
    await serveLab({ snapshot, dir, subnet, clock, log, stop: stop.signal });
    return 0;
  } finally {
    stop.dispose();
  }
}

async function status(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  noPositionals(positionals, usage);
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const dir = resolve(io.cwd, values.dir ?? '.ferry/lab');
  const { holderAlive, readLabState } = await import('../lab/state.js');
  const state = await readLabState(dir);
  if (!state) {
    throw new FerryError('usage', `no lab in ${dir}`, {
      remediation: 'start one with `ferry lab up SNAPSHOT`, or pass the --dir it was started with',
    });
  }
  const alive = holderAlive(state);
  const { liveStatus } = await import('../lab/live.js');
  const live = state.phase === 'ready' && alive && state.lab ? await liveStatus(state.lab) : undefined;
  if (format === 'json') io.stdout(`${JSON.stringify({ ...state, holderAlive: alive, live }, null, 2)}\n`);
  else io.stdout((await import('../lab/render.js')).renderStatus(state, alive, live));
  return 0;
}

async function down(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  noPositionals(positionals, usage);
  const dir = resolve(io.cwd, values.dir ?? '.ferry/lab');
  const { readLabState, stopLab } = await import('../lab/state.js');
  const before = await readLabState(dir);
  const r = await stopLab(dir);
  if (!before) {
    io.stdout(
      `no lab in ${dir}${r.orphansKilled.length > 0 ? `; killed ${r.orphansKilled.length} leftover etcd processes` : ''}\n`,
    );
    return 0;
  }
  const how = {
    'not-running': 'was not running',
    stopped: 'stopped',
    killed: 'did not stop on SIGTERM and was killed',
  }[r.holder];
  io.stdout(
    `lab in ${dir}: holder ${before.holder.pid} ${how}${r.orphansKilled.length > 0 ? `; killed leftover etcd processes ${r.orphansKilled.join(', ')}` : ''}; data and credentials removed\n`,
  );
  return 0;
}

export function makeLabCommand(opts: { holder?: HolderCommand } = {}): Command {
  const holder = opts.holder ?? defaultHolderCommand;
  return {
    name: 'lab',
    summary: 'run a local lab cluster from a snapshot (real etcd, lab API servers, load balancer, nodes)',
    usage,
    async run(argv: string[], io: Io): Promise<ExitCode> {
      const [sub, ...rest] = argv;
      switch (sub) {
        case 'up':
          return up(rest, io, holder);
        case 'serve':
          return serve(rest, io);
        case 'status':
          return status(rest, io);
        case 'down':
          return down(rest, io);
        default:
          throw usageError(
            sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`,
            `see usage:\n${usage.trim()}`,
          );
      }
    },
  };
}

export const command: Command = makeLabCommand();
