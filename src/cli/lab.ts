import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeError, type ExitCode, FerryError, usageError } from '../errors.js';
import type { LabCluster, LabInfo } from '../lab/cluster.js';
import type { LabState } from '../lab/state.js';
import { oneOf, parseFlags, requirePositional } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry lab up SNAPSHOT [--dir DIR] [--subnet N] [-o text|json]
       ferry lab status [--dir DIR] [-o text|json]
       ferry lab down [--dir DIR]
       ferry lab serve SNAPSHOT [--dir DIR] [--subnet N]

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

  --dir DIR        lab state directory (default ${'.ferry/lab'})
  --subnet N       third octet of the lab's loopback addresses, 1-254 (default 60)
  -o, --output F   text (default) | json

Exit codes: 0 ok; 2 bad usage or input (no lab in DIR for status); 4 the lab failed to start.
`;

const options = {
  dir: { type: 'string' },
  subnet: { type: 'string' },
  output: { type: 'string', short: 'o' },
} as const;

const DEFAULT_SUBNET = 60;
const UP_TIMEOUT_MS = 120_000;

/** How `up` starts the holder: this CLI again, with `lab serve` (tsx when running from source). */
export type HolderCommand = (args: string[]) => { command: string; args: string[] };

export const defaultHolderCommand: HolderCommand = (args) => {
  const here = dirname(fileURLToPath(import.meta.url));
  const js = join(here, 'main.js');
  if (existsSync(js)) return { command: process.execPath, args: [js, ...args] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { command: process.execPath, args: ['--import', tsx, join(here, 'main.ts'), ...args] };
};

function parseSubnet(v: string | undefined): number {
  if (v === undefined) return DEFAULT_SUBNET;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 254)
    throw usageError(`--subnet must be an integer in 1..254; got "${v}"`);
  return n;
}

function onlyOne(positionals: string[], what: string): string {
  const v = requirePositional(positionals, what, usage);
  if (positionals.length > 1)
    throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${usage.trim()}`);
  return v;
}

async function logTail(file: string, lines = 25): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

// ---- rendering ---------------------------------------------------------------------------------

function etcdFlags(e: LabInfo['etcd']): string {
  return `--endpoints=${e.endpoints.join(',')} --cacert=${e.caFile} --cert=${e.certFile} --key=${e.keyFile}`;
}

export function renderLab(state: LabState, extra: string[] = []): string {
  const out: string[] = [];
  const lab = state.lab;
  out.push(
    `lab ${state.phase} (holder pid ${state.holder.pid}, state in ${state.dir}, snapshot ${state.snapshot})`,
  );
  if (state.error) out.push(`  error: ${state.error}`);
  if (lab) {
    // A stopped lab serves nothing: no connection details, only what it was.
    if (state.phase !== 'stopped') {
      out.push(`  kubeconfig:  ${lab.kubeconfig}`, `               export KUBECONFIG=${lab.kubeconfig}`);
      out.push(
        `  endpoint:    ${lab.endpoint.url}${lab.endpoint.real ? `  (stands in for ${lab.endpoint.real})` : ''}`,
      );
      if (lab.canary)
        out.push(
          `  canary:      curl ${lab.canary.url}/   (Service ${lab.canary.service}: ${lab.canary.replicas} lab-owned HTTP listeners)`,
        );
      out.push(
        `  etcd:        etcdctl ${etcdFlags(lab.etcd)}`,
        `               (or: set -a; . ${state.dir}/etcdctl.env; set +a; etcdctl member list)`,
        `               ${lab.etcd.standIn.note}`,
        `               ${lab.etcd.storage}`,
      );
    }
    out.push('  nodes:');
    const width = Math.max(...lab.nodes.map((n) => n.name.length), 4);
    for (const n of lab.nodes) {
      const api = lab.apiServers.find((a) => a.node === n.name);
      out.push(
        `    ${n.name.padEnd(width)}  ${`${n.flavor} ${n.role}`.padEnd(22)} ${(n.realAddress ?? '-').padEnd(15)} → ${n.labAddress.padEnd(15)} ${n.state}${api ? `  API ${api.url}` : ''}`,
      );
    }
    if (state.controlSocket)
      out.push(`  run:         ferry run PLAN --provisioner lab --lab-socket ${state.controlSocket} …`);
    for (const l of lab.notLoaded) out.push(`  not loaded:  ${l}`);
    for (const w of lab.warnings) out.push(`  warning:     ${w}`);
  }
  if (state.settled && !state.settled.settled) {
    out.push('  not settled when it reported ready:');
    for (const p of state.settled.pending) out.push(`    ${p}`);
  }
  if (state.kept?.length) {
    out.push(
      ...state.kept.map((k) => `  kept:        ${k}`),
      `               etcd data, PKI and logs of the stopped lab; remove them with \`ferry lab down --dir ${state.dir}\``,
    );
  }
  out.push(...extra);
  if (state.phase === 'ready')
    out.push(`This is a lab, not a real cluster. Stop it with \`ferry lab down --dir ${state.dir}\`.`);
  return `${out.join('\n')}\n`;
}

// ---- subcommands -------------------------------------------------------------------------------

async function up(argv: string[], io: Io, holder: HolderCommand): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const snapshot = resolve(io.cwd, onlyOne(positionals, 'SNAPSHOT (a snapshot directory)'));
  const dir = resolve(io.cwd, values.dir ?? '.ferry/lab');
  const subnet = parseSubnet(values.subnet);
  const { isRunning, labFiles, readLabState, stopLab, waitForHolder } = await import('../lab/state.js');
  const existing = await readLabState(dir);
  if (isRunning(existing)) {
    throw new FerryError('usage', `a lab already runs in ${dir} (holder pid ${existing.holder.pid})`, {
      remediation: `stop it first with \`ferry lab down --dir ${dir}\`, or choose another --dir and --subnet`,
    });
  }
  // Bad input fails here, fast and with its location, not in the background.
  const { loadSnapshot } = await import('../snapshot/load.js');
  await loadSnapshot(snapshot, { strictPki: false });
  if (existing) await stopLab(dir); // leftovers of a holder that died
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = labFiles(dir);
  const log = await open(files.log, 'a', 0o600);
  const started = Date.now();
  const cmd = holder(['lab', 'serve', snapshot, '--dir', dir, '--subnet', String(subnet)]);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(cmd.command, cmd.args, {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      cwd: io.cwd,
      env: io.env,
    });
  } finally {
    await log.close();
  }
  const pid = child.pid;
  if (pid === undefined) throw new FerryError('internal', `cannot start the lab holder (${cmd.command})`);
  const exited = new Promise((r) => child.once('exit', r));
  child.unref();
  io.stderr(`starting the lab from ${snapshot} (holder pid ${pid}, log ${files.log})...\n`);
  const { outcome, state } = await waitForHolder(dir, pid, UP_TIMEOUT_MS, exited);
  if (outcome === 'ready' && state) {
    if (format === 'json') io.stdout(`${JSON.stringify(state, null, 2)}\n`);
    else io.stdout(renderLab(state, [`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`]));
    return 0;
  }
  // Whatever it managed to start must not outlive the failure.
  await stopLab(dir).catch(() => undefined);
  const why =
    outcome === 'failed'
      ? (state?.error ?? 'unknown error')
      : outcome === 'timeout'
        ? `not ready within ${UP_TIMEOUT_MS / 1000} s`
        : 'the holder process exited';
  const tail = await logTail(files.log);
  const busy = /address already in use|EADDRINUSE/.test(`${why}\n${tail}`)
    ? `127.0.${subnet}.x is in use (another lab?): choose another --subnet, or stop the other lab. `
    : '';
  throw new FerryError('internal', `the lab did not start: ${why}`, {
    remediation: `${busy}See ${files.log}; last lines:\n${tail}`,
  });
}

async function serve(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  const snapshotPath = resolve(io.cwd, onlyOne(positionals, 'SNAPSHOT (a snapshot directory)'));
  const dir = resolve(io.cwd, values.dir ?? '.ferry/lab');
  const subnet = parseSubnet(values.subnet);
  const { holderState, writeLabState } = await import('../lab/state.js');
  const { LabCluster: Lab } = await import('../lab/cluster.js');
  const { loadSnapshot } = await import('../snapshot/load.js');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let state = holderState({ snapshot: snapshotPath, dir, subnet });
  await writeLabState(dir, state);
  const log = (line: string) => io.stdout(`${new Date().toISOString()} ${line}\n`);
  // Listening before the lab starts: a signal during start-up still ends in an orderly stop.
  let stopRequested: (sig: string) => void = () => {};
  const stop = new Promise<string>((r) => {
    stopRequested = r;
  });
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  const handlers = signals.map((sig) => {
    const h = () => stopRequested(sig);
    process.on(sig, h);
    return [sig, h] as const;
  });
  let lab: LabCluster | undefined;
  let control: { close(): Promise<void> } | undefined;
  try {
    const snapshot = await loadSnapshot(snapshotPath, { strictPki: false });
    const starting = Lab.fromSnapshot(snapshot, { dir, subnet, source: snapshotPath, log });
    const first = await Promise.race([starting, stop]);
    if (typeof first === 'string') {
      log(`${first} during start-up: stopping`);
      await (await starting.catch(() => undefined))?.dispose();
      state = { ...state, phase: 'stopped', stoppedAt: new Date().toISOString() };
      await writeLabState(dir, state);
      return 0;
    }
    lab = first;
    const settled = await lab.waitSettled(45_000);
    // `ferry run --provisioner lab` drives the lab's machines and load balancer through this socket.
    const { labFiles } = await import('../lab/state.js');
    const { serveLabControl } = await import('../adapters/provisioners/lab-control.js');
    const { localLabControl } = await import('../lab/control.js');
    control = await serveLabControl(localLabControl(lab), labFiles(dir).control).catch((err: unknown) => {
      log(`no control socket (ferry run --provisioner lab will not reach this lab): ${describeError(err)}`);
      return undefined;
    });
    state = {
      ...state,
      phase: 'ready',
      readyAt: new Date().toISOString(),
      settled,
      lab: lab.info(),
      ...(control && { controlSocket: labFiles(dir).control }),
    };
    await writeLabState(dir, state);
    log(
      settled.settled
        ? 'lab ready: every node and workload is up'
        : `lab ready, not settled: ${settled.pending.join('; ')}`,
    );
    const sig = await stop;
    log(`${sig}: stopping the lab`);
    await control?.close();
    await lab.dispose();
    state = { ...state, phase: 'stopped', stoppedAt: new Date().toISOString() };
    delete state.lab;
    delete state.controlSocket;
    await writeLabState(dir, state);
    return 0;
  } catch (err) {
    await control?.close().catch(() => undefined);
    await lab?.dispose().catch(() => undefined);
    state = { ...state, phase: 'failed', error: describeError(err) };
    await writeLabState(dir, state).catch(() => undefined);
    throw err;
  } finally {
    for (const [sig, h] of handlers) process.off(sig, h);
  }
}

async function status(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  if (positionals.length > 0)
    throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
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
  const live = state.phase === 'ready' && alive && state.lab ? await probe(state.lab) : undefined;
  if (format === 'json') {
    io.stdout(`${JSON.stringify({ ...state, holderAlive: alive, live }, null, 2)}\n`);
    return 0;
  }
  const extra: string[] = [];
  if (!alive && (state.phase === 'ready' || state.phase === 'starting')) {
    extra.push('  the holder process is gone: run `ferry lab down` to clean up what it left');
  }
  if (live) {
    extra.push(`  load balancer ${state.lab?.endpoint.url}: ${live.endpoint}`);
    for (const a of live.apiServers) extra.push(`  API ${a.node} ${a.url}: /readyz ${a.readyz}`);
    extra.push(`  nodes: ${live.nodes}`);
  }
  io.stdout(renderLab(state, extra));
  return 0;
}

type Live = { endpoint: string; apiServers: { node: string; url: string; readyz: string }[]; nodes: string };

/** /readyz of the endpoint and of each instance, and node readiness, as the lab serves them now. */
async function probe(lab: LabInfo): Promise<Live> {
  const { probeReadyz } = await import('../lab/lb/index.js');
  const { LabKubeClient } = await import('../lab/nodes/client.js');
  const { isNodeReady } = await import('../lab/nodes/world.js');
  const client = await LabKubeClient.fromKubeconfig(lab.kubeconfig, { timeoutMs: 3_000 }).catch(
    () => undefined,
  );
  const tls = { caPem: await caOf(lab) };
  const addr = (url: string) => new URL(url).host;
  const show = (r: { ok: boolean; detail: string }) => (r.ok ? 'ok' : `failing (${r.detail})`);
  const endpoint = show(await probeReadyz(addr(lab.endpoint.url), tls, 2_000));
  const apiServers = await Promise.all(
    lab.apiServers.map(async (a) => ({ ...a, readyz: show(await probeReadyz(addr(a.url), tls, 2_000)) })),
  );
  let nodes = 'unknown';
  if (client) {
    try {
      const list = await client.list<import('../lab/apiserver/object.js').KObj>('/api/v1/nodes');
      nodes = `${list.filter(isNodeReady).length}/${list.length} Ready`;
    } catch (err) {
      nodes = `cannot list: ${(err as Error).message}`;
    } finally {
      client.close();
    }
  }
  return { endpoint, apiServers, nodes };
}

/** The cluster CA, from the admin kubeconfig. */
async function caOf(lab: LabInfo): Promise<string> {
  const { credentialsFromKubeconfig } = await import('../lab/nodes/client.js');
  try {
    return (await credentialsFromKubeconfig(lab.kubeconfig)).ca.toString();
  } catch {
    return '';
  }
}

async function down(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  if (positionals.length > 0)
    throw usageError(`unexpected argument "${positionals[0]}"`, `see usage:\n${usage.trim()}`);
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
