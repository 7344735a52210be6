/**
 * The lab holder: the process that keeps a lab running. `startHolder` (ferry lab up) starts one
 * in the background and waits until its lab is ready; `serveLab` (ferry lab serve) is what it
 * runs: the lab, its control socket for `ferry run --provisioner lab`, and its state file, until
 * it is told to stop. See docs/design.md, "The lab".
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import { describeError, FerryError } from '../errors.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { LabCluster } from './cluster.js';
import type { LabClock } from './provisioner/clock.js';
import {
  holderState,
  isRunning,
  type LabState,
  labFiles,
  readLabState,
  stopLab,
  waitForHolder,
  writeLabState,
} from './state.js';

/** How to start a holder: a command running `lab serve ARGS` (the CLI knows its own entry point). */
export type HolderCommand = (args: string[]) => { command: string; args: string[] };

export const HOLDER_UP_TIMEOUT_MS = 120_000;
/** How long a started lab may take to settle (nodes Ready, workloads up) before it reports ready. */
const SETTLE_MS = 45_000;

export interface StartHolderOptions {
  snapshot: string;
  dir: string;
  subnet: number;
  clock: LabClock;
  holder: HolderCommand;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Told once the holder runs: its pid and log file. */
  started?: (pid: number, logFile: string) => void;
  timeoutMs?: number;
}

/** Starts a detached holder and waits for its lab to be ready; on failure nothing is left running. */
export async function startHolder(o: StartHolderOptions): Promise<LabState> {
  const existing = await readLabState(o.dir);
  if (isRunning(existing)) {
    throw new FerryError('usage', `a lab already runs in ${o.dir} (holder pid ${existing.holder.pid})`, {
      remediation: `stop it first with \`ferry lab down --dir ${o.dir}\`, or choose another --dir and --subnet`,
    });
  }
  // Bad input fails here, fast and with its location, not in the background.
  await loadSnapshot(o.snapshot, { strictPki: false });
  if (existing) await stopLab(o.dir); // leftovers of a holder that died
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const files = labFiles(o.dir);
  const log = await open(files.log, 'a', 0o600);
  const cmd = o.holder([
    'lab',
    'serve',
    o.snapshot,
    '--dir',
    o.dir,
    '--subnet',
    String(o.subnet),
    '--boot-seconds',
    plain(o.clock.bootSeconds),
    '--decommission-seconds',
    plain(o.clock.decommissionSeconds),
    '--jitter',
    plain(o.clock.jitter),
  ]);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(cmd.command, cmd.args, {
      detached: true,
      stdio: ['ignore', log.fd, log.fd],
      cwd: o.cwd,
      env: o.env,
    });
  } finally {
    await log.close();
  }
  const pid = child.pid;
  if (pid === undefined) throw new FerryError('internal', `cannot start the lab holder (${cmd.command})`);
  const exited = new Promise((r) => child.once('exit', r));
  child.unref();
  o.started?.(pid, files.log);
  const timeoutMs = o.timeoutMs ?? HOLDER_UP_TIMEOUT_MS;
  const { outcome, state } = await waitForHolder(o.dir, pid, timeoutMs, exited);
  if (outcome === 'ready' && state) return state;
  // Whatever it managed to start must not outlive the failure.
  await stopLab(o.dir).catch(() => undefined);
  const why =
    outcome === 'failed'
      ? (state?.error ?? 'unknown error')
      : outcome === 'timeout'
        ? `not ready within ${timeoutMs / 1000} s`
        : 'the holder process exited';
  const tail = await logTail(files.log);
  const busy = /address already in use|EADDRINUSE/.test(`${why}\n${tail}`)
    ? `127.0.${o.subnet}.x is in use (another lab?): choose another --subnet, or stop the other lab. `
    : '';
  throw new FerryError('internal', `the lab did not start: ${why}`, {
    remediation: `${busy}See ${files.log}; last lines:\n${tail}`,
  });
}

/** A number as the flags take it: never an exponent (String(1e-7) is "1e-7"). */
const plain = (n: number): string =>
  n.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });

async function logTail(file: string, lines = 25): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface ServeLabOptions {
  snapshot: string;
  dir: string;
  subnet: number;
  /** How long the lab's machines take to boot and to power off. */
  clock: LabClock;
  log: (line: string) => void;
  /**
   * Aborted to stop the lab (the holder's SIGTERM, SIGINT or SIGHUP; its reason's message is
   * logged). Listened to from the start: a stop during start-up still ends in an orderly stop.
   */
  stop: AbortSignal;
}

/** Runs the lab until `stop`, keeping the state file current: starting, ready, stopped or failed. */
export async function serveLab(o: ServeLabOptions): Promise<void> {
  const { dir, log } = o;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let state = holderState({ snapshot: o.snapshot, dir, subnet: o.subnet });
  await writeLabState(dir, state);
  const stopped = new Promise<string>((r) => {
    const why = () => r(o.stop.reason instanceof Error ? o.stop.reason.message : 'stop requested');
    if (o.stop.aborted) why();
    else o.stop.addEventListener('abort', why, { once: true });
  });
  let lab: LabCluster | undefined;
  let control: { close(): Promise<void> } | undefined;
  try {
    const { LabCluster: Lab } = await import('./cluster.js');
    const snapshot = await loadSnapshot(o.snapshot, { strictPki: false });
    const starting = Lab.fromSnapshot(snapshot, {
      dir,
      subnet: o.subnet,
      clock: o.clock,
      source: o.snapshot,
      log,
    });
    const first = await Promise.race([starting, stopped]);
    if (typeof first === 'string') {
      log(`${first} during start-up: stopping`);
      await (await starting.catch(() => undefined))?.dispose();
      await writeLabState(dir, { ...state, phase: 'stopped', stoppedAt: new Date().toISOString() });
      return;
    }
    lab = first;
    const settled = await lab.waitSettled(SETTLE_MS);
    // `ferry run --provisioner lab` drives the lab's machines and load balancer through this socket.
    const { serveLabControl } = await import('../adapters/provisioners/lab-control.js');
    const { localLabControl } = await import('./control.js');
    const socket = labFiles(dir).control;
    control = await serveLabControl(localLabControl(lab), socket).catch((err: unknown) => {
      log(`no control socket (ferry run --provisioner lab will not reach this lab): ${describeError(err)}`);
      return undefined;
    });
    state = {
      ...state,
      phase: 'ready',
      readyAt: new Date().toISOString(),
      settled,
      lab: lab.info(),
      ...(control && { controlSocket: socket }),
    };
    await writeLabState(dir, state);
    log(
      settled.settled
        ? 'lab ready: every node and workload is up'
        : `lab ready, not settled: ${settled.pending.join('; ')}`,
    );
    log(`${await stopped}: stopping the lab`);
    await control?.close();
    await lab.dispose();
    state = { ...state, phase: 'stopped', stoppedAt: new Date().toISOString() };
    delete state.lab;
    delete state.controlSocket;
    await writeLabState(dir, state);
  } catch (err) {
    await control?.close().catch(() => undefined);
    await lab?.dispose().catch(() => undefined);
    state = { ...state, phase: 'failed', error: describeError(err) };
    await writeLabState(dir, state).catch(() => undefined);
    throw err;
  }
}
