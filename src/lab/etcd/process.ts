import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../errors.js';
import { writeFileAtomic } from '../../util/atomic-write.js';

/**
 * Child processes of the lab (etcd members) with PID files, so that nothing outlives the run:
 * every live process is killed by `dispose`, by the process-wide safety net on exit/SIGINT/SIGTERM,
 * or, after a run that was itself SIGKILLed, by `reapStale` on the next run.
 */

/**
 * The environment for a child: etcd reads every ETCD_* variable as a flag and aborts on conflicts,
 * etcdctl 3.5 aborts when ETCDCTL_ENDPOINTS and --endpoints are both set (test-infra.md, pitfall 7),
 * so inherited ones are stripped. `extra` is for variables set deliberately.
 */
export function childEnv(
  base: NodeJS.ProcessEnv = process.env,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && !/^ETCD(CTL)?_/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

/** What a PID file holds: enough to tell the same process from a later one that reused its PID. */
export type PidRecord = {
  pid: number;
  /** Start time in clock ticks since boot (/proc/PID/stat field 22). */
  startTicks: string | undefined;
  /** The Node process that started it; its PID file is stale only once this one is gone. */
  ownerPid: number;
  ownerStartTicks: string | undefined;
  command: string;
  startedAt: string;
};

/** Start time of a process, or undefined when it does not exist (or /proc is not there). */
export function procStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: fields after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19];
  } catch {
    return undefined;
  }
}

function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** True when `pid` is a running (not zombie) process; `startTicks` also pins its identity. */
export function isAlive(pid: number, startTicks?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procState(pid);
  if (state === 'Z' || state === 'X') return false;
  if (startTicks !== undefined) return procStartTicks(pid) === startTicks;
  return true;
}

export type ExitInfo = { code: number | null; signal: NodeJS.Signals | null };

const live = new Set<TrackedProcess>();

export class TrackedProcess {
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  #exit: ExitInfo | undefined;

  constructor(
    private readonly child: ChildProcess,
    readonly pidFile: string,
    readonly logFile: string,
  ) {
    if (child.pid === undefined) throw new Error('child has no pid');
    this.pid = child.pid;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        live.delete(this);
        rmSync(this.pidFile, { force: true });
        resolve(this.#exit);
      });
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** The exit status once it has exited. */
  get exit(): ExitInfo | undefined {
    return this.#exit;
  }

  signal(sig: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      this.child.kill(sig);
    } catch {
      // Already gone: the exit event follows.
    }
  }

  /** SIGKILL: a crash, as far as the process can tell. */
  async kill(): Promise<ExitInfo> {
    this.signal('SIGKILL');
    return this.exited;
  }

  /** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
  async stop(graceMs = 10_000): Promise<ExitInfo> {
    this.signal('SIGTERM');
    const timer = sleep(graceMs, 'timeout' as const, { ref: false });
    if ((await Promise.race([this.exited, timer])) === 'timeout') this.signal('SIGKILL');
    return this.exited;
  }

  /** The last `maxBytes` of its log, for error messages. */
  logTail(maxBytes = 4000): string {
    try {
      const text = readFileSync(this.logFile, 'utf8');
      return text.length > maxBytes ? text.slice(-maxBytes) : text;
    } catch {
      return '';
    }
  }
}

export type SpawnOptions = {
  command: string;
  args: string[];
  pidFile: string;
  /** stdout and stderr are appended here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
};

/** Starts a process and records it in a PID file and in the process-wide registry. */
export async function spawnTracked(opts: SpawnOptions): Promise<TrackedProcess> {
  installSafetyNet();
  const log = openSync(opts.logFile, 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      env: opts.env ?? childEnv(),
      cwd: opts.cwd,
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  if (child.pid === undefined) {
    // spawn() failed (ENOENT, EACCES): the error event follows.
    const [err] = (await once(child, 'error')) as [Error];
    throw new FerryError('internal', `cannot start ${opts.command}`, {
      cause: err,
      remediation: 'check that the binary exists and is executable (scripts/install-etcd.sh)',
    });
  }
  // Wrap it at once so its exit event cannot be missed.
  const proc = new TrackedProcess(child, opts.pidFile, opts.logFile);
  live.add(proc);
  const record: PidRecord = {
    pid: proc.pid,
    startTicks: procStartTicks(proc.pid),
    ownerPid: process.pid,
    ownerStartTicks: procStartTicks(process.pid),
    command: opts.command,
    startedAt: new Date().toISOString(),
  };
  await writeFileAtomic(opts.pidFile, `${JSON.stringify(record)}\n`);
  // It may have died while the PID file was written; the exit handler ran before the file existed.
  if (!proc.running) rmSync(opts.pidFile, { force: true });
  return proc;
}

/** PIDs of the lab processes this Node process has started and that are still running. */
export function liveProcesses(): number[] {
  return [...live].map((p) => p.pid);
}

/** Kills every tracked process synchronously: usable from an 'exit' handler. */
export function killAllSync(): void {
  for (const p of live) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    rmSync(p.pidFile, { force: true });
  }
}

let netInstalled = false;

/**
 * The process-wide safety net: whatever way this process ends (normal exit, uncaught exception,
 * SIGINT/SIGTERM/SIGHUP), no lab process survives it. A signal is re-raised when no one else
 * listens for it, so the default action (termination) still happens.
 */
export function installSafetyNet(): void {
  if (netInstalled) return;
  netInstalled = true;
  process.once('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAllSync();
      if (process.listenerCount(sig) === 1) {
        process.removeListener(sig, onSignal);
        process.kill(process.pid, sig);
      }
    };
    process.on(sig, onSignal);
  }
}

export type ReapResult = {
  /** PIDs that were still running and were killed. */
  killed: number[];
  /** PID files left alone because the run that wrote them is still alive. */
  kept: string[];
  /** PID files removed (stale: owner gone). */
  removed: string[];
};

async function* pidFiles(dir: string, depth: number): AsyncGenerator<string> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory() && depth > 0) yield* pidFiles(path, depth - 1);
    else if (e.isFile() && e.name.endsWith('.pid')) yield path;
  }
}

export function parsePidRecord(text: string): PidRecord | undefined {
  try {
    const r = JSON.parse(text) as Partial<PidRecord>;
    if (typeof r.pid !== 'number' || typeof r.ownerPid !== 'number') return undefined;
    return r as PidRecord;
  } catch {
    return undefined;
  }
}

async function waitGone(pid: number, startTicks: string | undefined, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid, startTicks)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/**
 * Kills the processes recorded in stale PID files under `dir` (searched a few levels deep): those
 * of an earlier run that was interrupted before it could clean up. A PID file is stale when the
 * Node process that wrote it is gone; files of a live run (a parallel test file) are kept. A PID
 * is killed only if its start time still matches, so a recycled PID is never hit.
 */
export async function reapStale(dir: string, opts: { depth?: number } = {}): Promise<ReapResult> {
  const result: ReapResult = { killed: [], kept: [], removed: [] };
  for await (const file of pidFiles(dir, opts.depth ?? 4)) {
    const rec = parsePidRecord(await readFile(file, 'utf8').catch(() => ''));
    if (rec && isAlive(rec.ownerPid, rec.ownerStartTicks)) {
      result.kept.push(file);
      continue;
    }
    if (rec && isAlive(rec.pid, rec.startTicks)) {
      try {
        process.kill(rec.pid, 'SIGKILL');
      } catch {
        // Gone in the meantime.
      }
      if (!(await waitGone(rec.pid, rec.startTicks, 5_000))) {
        throw new FerryError('internal', `stale lab process ${rec.pid} (${rec.command}) survived SIGKILL`, {
          location: { file },
          remediation: `kill it by hand (kill -9 ${rec.pid}) and remove ${file}`,
        });
      }
      result.killed.push(rec.pid);
    }
    await rm(file, { force: true });
    result.removed.push(file);
  }
  return result;
}
