import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { isAlive, procStartTicks } from './etcd/process.js';
import {
  holderState,
  isRunning,
  type LabState,
  labFiles,
  readLabState,
  stopLab,
  writeLabState,
} from './state.js';

let dir: string;
const children: number[] = [];

async function startProcess(script: string): Promise<number> {
  const child = spawn('bash', ['-c', script], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
  children.push(child.pid!);
  // Let `exec` replace bash so the PID is the process we mean.
  await sleep(100);
  return child.pid!;
}

function stateFor(pid: number): LabState {
  return {
    ...holderState({ snapshot: '/snap', dir, subnet: 99 }),
    holder: { pid, startTicks: procStartTicks(pid) },
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-lab-state-'));
});

afterEach(async () => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  await rm(dir, { recursive: true, force: true });
});

describe('lab state', () => {
  it('round-trips, and says when there is none or it is not a state file', async () => {
    expect(await readLabState(dir)).toBeUndefined();
    const s = holderState({ snapshot: '/snap', dir, subnet: 42 });
    await writeLabState(dir, s);
    expect(await readLabState(dir)).toEqual(s);
    expect(isRunning(s)).toBe(true);
    await writeFile(labFiles(dir).state, '{"hello":1}');
    const err = await readLabState(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).exitCode).toBe(2);
  });

  it('a --dir that is a file, or a state file that is a directory, says so (not "no lab", not permissions)', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    const err = (await readLabState(file).catch((e: unknown) => e)) as FerryError;
    expect(err).toBeInstanceOf(FerryError);
    expect(err.message).toBe(`--dir ${file} is not a directory`);
    await mkdir(labFiles(dir).state);
    const err2 = (await readLabState(dir).catch((e: unknown) => e)) as FerryError;
    expect(err2.message).toBe(`the lab state ${labFiles(dir).state} is a directory, not a file`);
    expect(err2.remediation).not.toMatch(/permission/);
  });

  it('stops a holder with SIGTERM and marks the lab stopped, removing its data', async () => {
    const pid = await startProcess('exec sleep 30');
    await writeLabState(dir, { ...stateFor(pid), phase: 'ready' });
    await mkdir(labFiles(dir).etcd, { recursive: true });
    await writeFile(labFiles(dir).kubeconfig, 'x', { mode: 0o600 });
    const r = await stopLab(dir, 5_000);
    expect(r).toEqual({ holder: 'stopped', orphansKilled: [] });
    expect(isAlive(pid)).toBe(false);
    const after = await readLabState(dir);
    expect(after?.phase).toBe('stopped');
    expect(isRunning(after)).toBe(false);
    expect(await stopLab(dir)).toEqual({ holder: 'not-running', orphansKilled: [] });
  });

  it('kills a holder that ignores SIGTERM, and etcd members left without their holder', async () => {
    const holder = await startProcess('trap "" TERM; exec sleep 30');
    const orphan = await startProcess('exec sleep 30');
    await writeLabState(dir, { ...stateFor(holder), phase: 'ready' });
    const memberDir = join(labFiles(dir).etcd, 's99-x', 'm1');
    await mkdir(memberDir, { recursive: true });
    // A PID file whose owner is gone (its start time does not match any live process).
    await writeFile(
      join(memberDir, 'etcd.pid'),
      JSON.stringify({
        pid: orphan,
        startTicks: procStartTicks(orphan),
        ownerPid: process.pid,
        ownerStartTicks: '0',
        command: 'sleep',
        startedAt: '',
      }),
    );
    const r = await stopLab(dir, 300);
    expect(r).toEqual({ holder: 'killed', orphansKilled: [orphan] });
    expect(isAlive(holder)).toBe(false);
    expect(isAlive(orphan)).toBe(false);
  });
});

describe('stopLab without a state file', () => {
  it('removes nothing from a directory that is not a lab', async () => {
    await writeFile(labFiles(dir).kubeconfig, 'not ours');
    expect(await stopLab(dir)).toEqual({ holder: 'not-running', orphansKilled: [] });
    expect(await readFile(labFiles(dir).kubeconfig, 'utf8')).toBe('not ours');
  });
});
