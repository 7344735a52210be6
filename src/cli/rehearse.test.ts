import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError, type FerryErrorKind } from '../errors.js';
import type { LabInfo } from '../lab/cluster.js';
import { keptLabState, readLabState, writeLabState } from '../lab/state.js';
import type { RunResult } from '../run/deps.js';
import { memoryIo } from './io.js';
import { keptLabHint, rehearsalExitCode } from './rehearse.js';
import { runCli } from './run-cli.js';

describe('rehearsalExitCode', () => {
  const stopped = (kind?: FerryErrorKind): RunResult => ({
    status: 'stopped',
    stoppedAt: 'phase2.cp-1.provision',
    ...(kind && { error: new FerryError(kind, 'it stopped') }),
    steps: [],
  });
  const completed: RunResult = { status: 'completed', steps: [] };
  const check = (ok: boolean) => ({ name: 'no API error through the endpoint', ok, detail: '' });

  it("keeps the exit code of a run that stopped: the error's own", () => {
    expect(rehearsalExitCode({ result: stopped('internal'), checks: [] })).toBe(4);
    expect(rehearsalExitCode({ result: stopped('gate'), checks: [] })).toBe(3);
    expect(rehearsalExitCode({ result: stopped('input'), checks: [] })).toBe(2);
    expect(rehearsalExitCode({ result: stopped(), checks: [] })).toBe(3);
    // A failed check does not hide why the run stopped.
    expect(rehearsalExitCode({ result: stopped('internal'), checks: [check(false)] })).toBe(4);
  });

  it('is 0 for a completed run whose checks all pass, 1 when one fails', () => {
    expect(rehearsalExitCode({ result: completed, checks: [check(true), check(true)] })).toBe(0);
    expect(rehearsalExitCode({ result: completed, checks: [check(true), check(false)] })).toBe(1);
  });
});

describe('ferry rehearse flags', () => {
  it('refuses a bad --phases before starting anything', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ferry-rehearse-flags-'));
    try {
      const io = memoryIo({ cwd });
      const code = await runCli(['rehearse', 'snapshot', '--dir', 'work', '--phases', '0,,2'], io);
      expect(code).toBe(2);
      expect(io.err).toContain('--phases: "" is not a phase');
      expect(existsSync(join(cwd, 'work'))).toBe(false);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('refuses --provisioner and --infra values it does not know, and --infra without capi, before starting anything', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ferry-rehearse-flags-'));
    try {
      for (const [args, says] of [
        [['--provisioner', 'exec'], '--provisioner'],
        [['--provisioner', 'capi', '--infra', 'aws'], '--infra'],
        [['--infra', 'proxmox'], '--infra is for --provisioner capi'],
      ] as const) {
        const io = memoryIo({ cwd });
        const code = await runCli(['rehearse', 'snapshot', '--dir', 'work', ...args], io);
        expect(code).toBe(2);
        expect(io.err).toContain(says);
        expect(existsSync(join(cwd, 'work'))).toBe(false);
      }
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe('a kept rehearsal lab', () => {
  let root: string;
  beforeEach(async () => {
    // A space in the path: the printed commands must still run as written.
    root = await mkdtemp(join(tmpdir(), 'ferry rehearse-keep-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const info = (labDir: string): LabInfo => ({
    subnet: 30,
    kubeconfig: join(labDir, 'kubeconfig'),
    clusterName: 'lab-cluster',
    kubernetesVersion: 'v1.32.4',
    endpoint: { url: 'https://127.0.30.254:6443', real: 'https://k8s.example:6443' },
    etcd: {
      endpoints: ['https://127.0.30.1:2379'],
      caFile: join(labDir, 'etcd/s30-x/pki/etcd/ca.crt'),
      certFile: join(labDir, 'etcd/s30-x/pki/etcd/healthcheck-client.crt'),
      keyFile: join(labDir, 'etcd/s30-x/pki/etcd/healthcheck-client.key'),
      standIn: { lab: '3.4.23', snapshot: '3.5.16', note: 'etcd 3.4.23 standing in for 3.5.16' },
      storage: 'lab etcd data in the lab directory (kept after the lab stops)',
    },
    apiServers: [],
    addresses: [],
    nodes: [
      {
        name: 'talos-cp-1',
        role: 'control-plane',
        flavor: 'talos',
        realAddress: '10.0.0.21',
        labAddress: '127.0.30.4',
        etcdMember: 'talos-cp-1',
        state: 'joined',
      },
    ],
    notLoaded: [],
    warnings: [],
  });

  /** The argv of a printed `ferry …` command line, split as a POSIX shell would. */
  const argvOf = (line: string): string[] => {
    const words = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' })
      .split('\0')
      .slice(0, -1);
    expect(words[0]).toBe('ferry');
    return words.slice(1);
  };

  it('prints commands that show and then remove what it kept', async () => {
    const labDir = join(root, 'work', 'lab');
    const cluster = join(labDir, 'etcd', 's30-x');
    await mkdir(join(cluster, 'cp-1', 'data'), { recursive: true });
    await writeFile(join(cluster, 'cp-1', 'etcd.log'), 'etcd log\n');
    await writeFile(join(labDir, 'kubeconfig'), 'apiVersion: v1\n', { mode: 0o600 });
    await writeLabState(
      labDir,
      keptLabState({
        snapshot: '/examples/lab-cluster',
        dir: labDir,
        subnet: 30,
        startedAt: '2026-12-01T10:00:00.000Z',
        lab: info(labDir),
        kept: [cluster],
      }),
    );

    const hint = keptLabHint(labDir);
    const see = hint.split('\n').find((l) => l.includes('lab status'))!;
    const remove = hint.split('\n').find((l) => l.includes('lab down'))!;
    const run = async (line: string) => {
      const io = memoryIo({ cwd: root });
      const code = await runCli(argvOf(line.slice(line.indexOf('ferry '))), io);
      return { code, out: io.out, err: io.err };
    };

    const status = await run(see);
    expect(status.code, status.err).toBe(0);
    expect(status.out).toContain('lab stopped');
    expect(status.out).toContain(`kept:        ${cluster}`);
    expect(status.out).toContain('talos-cp-1');
    // Nothing runs: no connection details that would lead nowhere.
    expect(status.out).not.toContain('export KUBECONFIG');

    const down = await run(remove);
    expect(down.code, down.err).toBe(0);
    expect(existsSync(cluster)).toBe(false);
    expect(existsSync(join(labDir, 'kubeconfig'))).toBe(false);
    const after = await readLabState(labDir);
    expect(after?.phase).toBe('stopped');
    expect(after?.kept).toBeUndefined();
    expect((await run(see)).out).not.toContain('kept:');
  });
});
