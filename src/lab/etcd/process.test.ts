import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  childEnv,
  isAlive,
  liveProcesses,
  type PidRecord,
  parsePidRecord,
  procStartTicks,
  reapStale,
  spawnTracked,
} from './process.js';

let dir: string;
const strays: number[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-proc-'));
});
afterEach(async () => {
  // Whatever a failed assertion left running.
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await rm(dir, { recursive: true, force: true });
});

async function waitUntil(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('childEnv', () => {
  it('strips inherited ETCD_* and ETCDCTL_* and keeps the rest', () => {
    const env = childEnv({
      PATH: '/bin',
      ETCD_NAME: 'x',
      ETCDCTL_ENDPOINTS: 'y',
      MY_ETCD_THING: 'z',
      HOME: '/h',
    });
    expect(env).toEqual({ PATH: '/bin', MY_ETCD_THING: 'z', HOME: '/h' });
  });
  it('adds deliberate variables, ETCD_* included', () => {
    expect(childEnv({ ETCD_NAME: 'inherited' }, { ETCD_UNSUPPORTED_ARCH: 'arm' })).toEqual({
      ETCD_UNSUPPORTED_ARCH: 'arm',
    });
  });
});

describe('spawnTracked', () => {
  it('writes a PID file that identifies the process and removes it on exit', async () => {
    const pidFile = join(dir, 'sleep.pid');
    const p = await spawnTracked({
      command: 'sleep',
      args: ['30'],
      pidFile,
      logFile: join(dir, 'sleep.log'),
    });
    strays.push(p.pid);
    const rec = parsePidRecord(await readFile(pidFile, 'utf8')) as PidRecord;
    expect(rec.pid).toBe(p.pid);
    expect(rec.startTicks).toBe(procStartTicks(p.pid));
    expect(rec.ownerPid).toBe(process.pid);
    expect(liveProcesses()).toContain(p.pid);
    expect(await p.kill()).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(pidFile)).toBe(false);
    expect(isAlive(p.pid)).toBe(false);
    expect(liveProcesses()).not.toContain(p.pid);
  });

  it('stop() sends SIGTERM and escalates to SIGKILL when it is ignored', async () => {
    const p = await spawnTracked({
      command: 'sh',
      args: ['-c', 'trap "" TERM; echo ready; exec sleep 30'],
      pidFile: join(dir, 'stubborn.pid'),
      logFile: join(dir, 'stubborn.log'),
    });
    strays.push(p.pid);
    await waitUntil(() => p.logTail().includes('ready'));
    const t0 = Date.now();
    expect(await p.stop(300)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it('passes only the environment it is given', async () => {
    const p = await spawnTracked({
      command: 'sh',
      args: ['-c', 'env'],
      env: childEnv({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', ETCD_DATA_DIR: '/nope' }),
      pidFile: join(dir, 'env.pid'),
      logFile: join(dir, 'env.log'),
    });
    expect((await p.exited).code).toBe(0);
    expect(p.logTail()).not.toContain('ETCD_DATA_DIR');
    expect(p.logTail()).toContain('PATH=');
  });

  it('reports a binary that cannot be started', async () => {
    await expect(
      spawnTracked({
        command: join(dir, 'missing'),
        args: [],
        pidFile: join(dir, 'x.pid'),
        logFile: join(dir, 'x.log'),
      }),
    ).rejects.toThrow(/cannot start/);
  });
});

describe('reapStale', () => {
  /** A process that is not our tracked child, as if left over by another run. */
  async function orphan(): Promise<ChildProcess> {
    const c = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(c, 'spawn');
    strays.push(c.pid!);
    return c;
  }

  async function writeRecord(name: string, rec: Partial<PidRecord>): Promise<string> {
    const file = join(dir, 'run', name, 'etcd.pid');
    await import('node:fs/promises').then((fs) => fs.mkdir(join(dir, 'run', name), { recursive: true }));
    await writeFile(file, JSON.stringify({ command: 'sleep', startedAt: new Date().toISOString(), ...rec }));
    return file;
  }

  it('kills processes of a run whose owner is gone and removes their PID files', async () => {
    const c = await orphan();
    const deadOwner = spawn('true');
    await once(deadOwner, 'exit');
    const file = await writeRecord('m1', {
      pid: c.pid!,
      startTicks: procStartTicks(c.pid!),
      ownerPid: deadOwner.pid!,
      ownerStartTicks: '1',
    });
    const res = await reapStale(dir);
    expect(res.killed).toEqual([c.pid]);
    expect(res.removed).toEqual([file]);
    await waitUntil(() => c.exitCode !== null || c.signalCode !== null);
    expect(c.signalCode).toBe('SIGKILL');
  });

  it('leaves alone the PID files of a run that is still alive', async () => {
    const c = await orphan();
    const file = await writeRecord('m1', {
      pid: c.pid!,
      startTicks: procStartTicks(c.pid!),
      ownerPid: process.pid,
      ownerStartTicks: procStartTicks(process.pid),
    });
    const res = await reapStale(dir);
    expect(res).toEqual({ killed: [], kept: [file], removed: [] });
    expect(isAlive(c.pid!)).toBe(true);
  });

  it('never kills a recycled PID (start time differs)', async () => {
    const c = await orphan();
    const file = await writeRecord('m1', { pid: c.pid!, startTicks: '1', ownerPid: 999_999_999 });
    const res = await reapStale(dir);
    expect(res.killed).toEqual([]);
    expect(res.removed).toEqual([file]);
    expect(isAlive(c.pid!)).toBe(true);
  });
});

describe('process-wide safety net', () => {
  const processTs = fileURLToPath(new URL('./process.ts', import.meta.url));

  /** A Node process (through tsx) that starts a tracked `sleep`, does `then`, and prints the sleep's PID. */
  async function runChild(then: string): Promise<{ child: ChildProcess; sleepPid: number }> {
    const script = join(dir, 'child.mts');
    await writeFile(
      script,
      [
        `import { spawnTracked } from ${JSON.stringify(processTs)};`,
        `const p = await spawnTracked({ command: 'sleep', args: ['60'], pidFile: ${JSON.stringify(join(dir, 's.pid'))}, logFile: ${JSON.stringify(join(dir, 's.log'))} });`,
        // `then` first: its signal handlers must be in place before the parent, told the PID, signals.
        then,
        'process.stdout.write(String(p.pid) + "\\n");',
      ].join('\n'),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    strays.push(child.pid!);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await waitUntil(() => out.includes('\n'), 20_000);
    const sleepPid = Number(out.trim());
    strays.push(sleepPid);
    expect(isAlive(sleepPid)).toBe(true);
    return { child, sleepPid };
  }

  it('kills tracked processes when the owner gets SIGTERM', async () => {
    const { child, sleepPid } = await runChild('setInterval(() => {}, 1000);');
    child.kill('SIGTERM');
    const [, signal] = await once(child, 'exit');
    expect(signal).toBe('SIGTERM'); // re-raised: the default action still happens
    await waitUntil(() => !isAlive(sleepPid));
    expect(existsSync(join(dir, 's.pid'))).toBe(false);
  });

  it('kills tracked processes when the owner throws', async () => {
    const { child, sleepPid } = await runChild(
      "process.on('SIGUSR2', () => { throw new Error('boom'); }); setInterval(() => {}, 1000);",
    );
    child.kill('SIGUSR2');
    const [code] = await once(child, 'exit');
    expect(code).not.toBe(0);
    await waitUntil(() => !isAlive(sleepPid));
  });

  it('leaves a PID file behind when the owner is SIGKILLed, which reapStale then uses', async () => {
    const { child, sleepPid } = await runChild('setInterval(() => {}, 1000);');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(isAlive(sleepPid)).toBe(true);
    const res = await reapStale(dir);
    expect(res.killed).toEqual([sleepPid]);
    await waitUntil(() => !isAlive(sleepPid));
  });
});
