/**
 * The state directory of a background lab (`ferry lab up`): which process holds the lab, how far
 * it got, and what it serves (kubeconfig, endpoints, etcd client settings, address map), so that
 * `ferry lab status` and `ferry lab down` can find it and leave nothing behind.
 *
 *   DIR/state.json   LabState, rewritten atomically by the holder process
 *   DIR/lab.log      the holder's output
 *   DIR/kubeconfig   admin kubeconfig (0600; it holds a private key)
 *   DIR/etcd-client.json, DIR/etcdctl.env   etcd client settings (endpoints and file paths)
 *   DIR/etcd/        etcd members: data, PKI, PID files (what `down` reaps if the holder died)
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError, inputError } from '../errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { pathState, readOptionalTextFile } from '../util/input-file.js';
import type { LabInfo } from './cluster.js';
import { isAlive, procStartTicks, reapStale } from './etcd/process.js';

export const LAB_STATE_VERSION = 1;

export type LabPhase = 'starting' | 'ready' | 'failed' | 'stopped';

export type LabState = {
  formatVersion: number;
  phase: LabPhase;
  /** The process holding the lab's servers. */
  holder: { pid: number; startTicks: string | undefined };
  snapshot: string;
  dir: string;
  subnet: number;
  startedAt: string;
  readyAt?: string;
  stoppedAt?: string;
  /** Why the lab failed to start. */
  error?: string;
  /** Whether every node and workload was ready when the lab reported ready, and what was not. */
  settled?: { settled: boolean; pending: string[] };
  lab?: LabInfo;
  /** Unix socket for `ferry run --provisioner lab --lab-socket` (lab-control.ts), while the lab is ready. */
  controlSocket?: string;
  /** What a stopped lab left on disk to be inspected (`ferry rehearse --keep`); `ferry lab down` removes it. */
  kept?: string[];
};

export const labFiles = (dir: string) => ({
  state: join(dir, 'state.json'),
  log: join(dir, 'lab.log'),
  kubeconfig: join(dir, 'kubeconfig'),
  etcdClient: join(dir, 'etcd-client.json'),
  etcdctlEnv: join(dir, 'etcdctl.env'),
  etcd: join(dir, 'etcd'),
  control: join(dir, 'control.sock'),
});

export async function readLabState(dir: string): Promise<LabState | undefined> {
  const file = labFiles(dir).state;
  // --dir must be a directory (or not exist yet): a file there is not "no lab".
  if (
    (await pathState(dir, 'directory', { flag: '--dir', provide: 'pass --dir a lab directory' })) === 'absent'
  )
    return undefined;
  const text = await readOptionalTextFile(file, {
    what: 'the lab state',
    provide: `remove ${dir} if no lab runs there`,
  });
  if (text === undefined) return undefined;
  try {
    const s = JSON.parse(text) as LabState;
    if (s.formatVersion !== LAB_STATE_VERSION || typeof s.holder?.pid !== 'number')
      throw new Error('unexpected content');
    return s;
  } catch (err) {
    throw inputError(`${file} is not a lab state file`, { file }, `remove ${dir} if no lab runs there`, err);
  }
}

/** state.json holds the kubeconfig path and etcd key paths, not keys: 0600 all the same. */
export async function writeLabState(dir: string, state: LabState): Promise<void> {
  await writeFileAtomic(labFiles(dir).state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** The state a holder process writes about itself when it starts. */
export function holderState(opts: { snapshot: string; dir: string; subnet: number }): LabState {
  return {
    formatVersion: LAB_STATE_VERSION,
    phase: 'starting',
    holder: { pid: process.pid, startTicks: procStartTicks(process.pid) },
    snapshot: opts.snapshot,
    dir: opts.dir,
    subnet: opts.subnet,
    startedAt: new Date().toISOString(),
  };
}

/**
 * The state a process leaves for a lab it ran itself and whose files it kept (`ferry rehearse
 * --keep`): stopped, with what it left, so that `ferry lab status` shows it and `ferry lab down`
 * removes it.
 */
export function keptLabState(opts: {
  snapshot: string;
  dir: string;
  subnet: number;
  startedAt: string;
  lab: LabInfo;
  kept: string[];
}): LabState {
  return {
    ...holderState(opts),
    phase: 'stopped',
    startedAt: opts.startedAt,
    stoppedAt: new Date().toISOString(),
    lab: opts.lab,
    kept: opts.kept,
  };
}

export function holderAlive(state: LabState): boolean {
  return isAlive(state.holder.pid, state.holder.startTicks);
}

/** A lab whose holder still runs and has not been stopped. */
export function isRunning(state: LabState | undefined): state is LabState {
  return state !== undefined && (state.phase === 'starting' || state.phase === 'ready') && holderAlive(state);
}

/**
 * Waits until the holder `pid` reports ready or failed, or dies. `exited` resolves when the
 * caller's child handle sees it exit (faster than polling).
 */
export async function waitForHolder(
  dir: string,
  pid: number,
  timeoutMs: number,
  exited?: Promise<unknown>,
): Promise<{ outcome: 'ready' | 'failed' | 'died' | 'timeout'; state: LabState | undefined }> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited?.then(() => {
    gone = true;
  });
  for (;;) {
    const state = await readLabState(dir).catch(() => undefined);
    const mine = state?.holder.pid === pid ? state : undefined;
    if (mine?.phase === 'ready') return { outcome: 'ready', state: mine };
    if (mine?.phase === 'failed') return { outcome: 'failed', state: mine };
    if (gone || !isAlive(pid)) return { outcome: 'died', state: mine };
    if (Date.now() > deadline) return { outcome: 'timeout', state: mine };
    await sleep(200);
  }
}

export type StopResult = {
  /** How the holder went: it was not running, it stopped on SIGTERM, or it had to be killed. */
  holder: 'not-running' | 'stopped' | 'killed';
  /** etcd processes found running without their holder and killed. */
  orphansKilled: number[];
};

/**
 * Stops a lab: SIGTERM to the holder (it disposes the lab), SIGKILL after `graceMs`; then kills
 * any etcd member whose holder is gone (PID files under DIR/etcd), removes the lab's data and
 * credentials and marks the state stopped. Idempotent; a directory without a state file is
 * never emptied, only reaped.
 */
export async function stopLab(dir: string, graceMs = 20_000): Promise<StopResult> {
  const state = await readLabState(dir);
  let holder: StopResult['holder'] = 'not-running';
  // A holder that recorded 'stopped' has stopped the lab itself (and may be the caller, after a kept rehearsal).
  if (state && state.phase !== 'stopped' && holderAlive(state)) {
    const { pid, startTicks } = state.holder;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Gone meanwhile.
    }
    holder = 'stopped';
    const deadline = Date.now() + graceMs;
    while (isAlive(pid, startTicks)) {
      if (Date.now() > deadline) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
        holder = 'killed';
        const hard = Date.now() + 5_000;
        while (isAlive(pid, startTicks) && Date.now() < hard) await sleep(50);
        if (isAlive(pid, startTicks)) {
          throw new FerryError('internal', `the lab holder process ${pid} survived SIGKILL`, {
            remediation: `kill it by hand (kill -9 ${pid}), then run \`ferry lab down\` again`,
          });
        }
        break;
      }
      await sleep(100);
    }
  }
  const files = labFiles(dir);
  const { killed } = await reapStale(files.etcd, { depth: 4 });
  // Files are removed only from a directory that is a lab's (it has a state file).
  if (state) {
    await rm(files.etcd, { recursive: true, force: true });
    await rm(files.kubeconfig, { force: true });
    await rm(files.etcdClient, { force: true });
    await rm(files.etcdctlEnv, { force: true });
    const next: LabState = { ...state, phase: 'stopped', stoppedAt: new Date().toISOString() };
    delete next.lab;
    delete next.kept;
    await writeLabState(dir, next);
  }
  return { holder, orphansKilled: killed };
}
