/**
 * `ferry lab up|status|down` end to end: a detached holder process (this CLI, run by tsx), the
 * example cluster, kubectl against it, and nothing left running afterwards; a lab with a clock.
 * Subnets 127.0.32.x and 127.0.172.x belong to this file.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteLabControl } from '../adapters/provisioners/lab-control.js';
import { missingReason } from '../lab/etcd/binaries.js';
import { isAlive, parsePidRecord } from '../lab/etcd/process.js';
import { type LabState, readLabState, stopLab } from '../lab/state.js';
import { skipFor } from '../lab/testing-binaries.js';
import { scaled } from '../util/testing-slowness.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const missing = await missingReason('3.4');
const EXAMPLE = resolve('examples/lab-cluster');
let work: string;
let dir: string;

async function ferry(...args: string[]) {
  const io = memoryIo({ cwd: work });
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

describe.skipIf(skipFor(missing))('ferry lab', () => {
  let state: LabState | undefined;
  let etcdPids: number[] = [];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ferry-lab-cli-'));
    dir = join(work, 'lab');
  });

  afterAll(async () => {
    // Whatever happened, leave nothing running.
    if (existsSync(dir)) await stopLab(dir, 5_000).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  });

  it('refuses bad input before starting anything', async () => {
    const r = await ferry('lab', 'up', join(work, 'nope'), '--dir', dir, '--subnet', '32');
    expect(r.code).toBe(2);
    expect(r.err).toContain('does not exist');
    expect(existsSync(join(dir, 'state.json'))).toBe(false);
    expect((await ferry('lab', 'up', EXAMPLE, '--subnet', '0')).code).toBe(2);
    expect((await ferry('lab', 'status', '--dir', dir)).code).toBe(2);
    expect((await ferry('lab', 'frobnicate')).code).toBe(2);
  });

  it('up: starts the lab in the background within a minute and prints kubeconfig and etcd settings', async () => {
    const t0 = Date.now();
    const r = await ferry('lab', 'up', EXAMPLE, '--dir', 'lab', '--subnet', '32');
    expect(r.err).not.toContain('error');
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(scaled(60_000));
    const kubeconfig = join(dir, 'kubeconfig');
    expect(r.out).toContain(`export KUBECONFIG=${kubeconfig}`);
    expect(r.out).toContain(
      'etcdctl --endpoints=https://127.0.32.1:2379,https://127.0.32.2:2379,https://127.0.32.3:2379 --cacert=',
    );
    expect(r.out).toContain('https://127.0.32.254:6443  (stands in for https://k8s-api.lab.example:6443)');
    expect(r.out).toMatch(/cp-1 +kubeadm control-plane +10\.20\.0\.11 +→ 127\.0\.32\.1 /);
    // Every lab gets its own canary: the command printed answers from one of its pods.
    const canary = /canary: +curl (http:\/\/127\.0\.32\.254:\d+\/)/.exec(r.out)?.[1];
    expect(canary, r.out).toBeDefined();
    const answer = await fetch(canary!);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toMatch(/^ferry-lab\/canary-/);
    state = await readLabState(dir);
    expect(state?.phase).toBe('ready');
    expect(isAlive(state!.holder.pid)).toBe(true);
    const { stdout } = await promisify(execFile)(
      '/usr/bin/kubectl',
      ['--kubeconfig', kubeconfig, 'get', 'nodes,pods', '-A', '-o', 'name'],
      { timeout: 30_000 },
    );
    expect(stdout).toContain('node/worker-5');
    expect(stdout).toContain('pod/netshoot');
    expect(stdout.split('\n').filter((l) => l.startsWith('pod/')).length).toBeGreaterThan(40);
    // The etcd members the holder runs (their PID files are under DIR/etcd).
    const pidFiles = (await readdir(join(dir, 'etcd'), { recursive: true })).filter((f) =>
      f.endsWith('etcd.pid'),
    );
    etcdPids = await Promise.all(
      pidFiles.map(async (f) => parsePidRecord(await readFile(join(dir, 'etcd', f), 'utf8'))!.pid),
    );
    expect(etcdPids).toHaveLength(3);
    expect(etcdPids.every((p) => isAlive(p))).toBe(true);
  });

  it('up again refuses while it runs; status shows every instance ready', async () => {
    const again = await ferry('lab', 'up', EXAMPLE, '--dir', dir, '--subnet', '32');
    expect(again.code).toBe(2);
    expect(again.err).toContain('a lab already runs in');
    const s = await ferry('lab', 'status', '--dir', dir);
    expect(s.code).toBe(0);
    expect(s.out).toContain('lab ready');
    expect(s.out).toContain('API cp-2 https://127.0.32.2:6443: /readyz ok');
    expect(s.out).toContain('load balancer https://127.0.32.254:6443: ok');
    expect(s.out).toContain('nodes: 8/8 Ready');
    const json = JSON.parse((await ferry('lab', 'status', '--dir', dir, '-o', 'json')).out);
    expect(json).toMatchObject({ phase: 'ready', holderAlive: true, lab: { subnet: 32 } });
    expect((await readFile(join(dir, 'kubeconfig'))).length).toBeGreaterThan(0);
    expect(await readFile(join(dir, 'etcdctl.env'), 'utf8')).toContain(
      'ETCDCTL_ENDPOINTS=https://127.0.32.1:2379',
    );
    // The control socket `ferry run --provisioner lab --lab-socket` drives the lab through.
    const socket = join(dir, 'control.sock');
    expect(json.controlSocket).toBe(socket);
    expect(s.out).toContain(`--provisioner lab --lab-socket ${socket}`);
    const control = remoteLabControl(socket);
    expect(await control.machineState('cp-1')).toBe('running');
    expect(await control.inRotation('cp-2')).toBe(true);
  });

  it('down: stops the holder and every etcd member, removes data and credentials', async () => {
    const r = await ferry('lab', 'down', '--dir', dir);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`holder ${state!.holder.pid} stopped`);
    expect(isAlive(state!.holder.pid)).toBe(false);
    expect(etcdPids.filter((p) => isAlive(p))).toEqual([]);
    expect(existsSync(join(dir, 'kubeconfig'))).toBe(false);
    expect(existsSync(join(dir, 'etcdctl.env'))).toBe(false);
    expect(existsSync(join(dir, 'etcd-client.json'))).toBe(false);
    expect(existsSync(join(dir, 'etcd'))).toBe(false);
    expect(existsSync(join(dir, 'control.sock'))).toBe(false);
    expect((await readLabState(dir))?.phase).toBe('stopped');
    expect((await ferry('lab', 'down', '--dir', dir)).code).toBe(0);
  });

  it('with a clock: records the boot, decommission and jitter settings; status shows them', async () => {
    const clockDir = join(work, 'lab-clock');
    try {
      const up = await ferry(
        'lab',
        'up',
        EXAMPLE,
        '--dir',
        'lab-clock',
        '--subnet',
        '172',
        '--boot-seconds',
        '2',
        '--decommission-seconds',
        '1.5',
        '--jitter',
        '0.2',
      );
      expect(up.err).not.toContain('error');
      expect(up.code).toBe(0);
      const json = JSON.parse((await ferry('lab', 'status', '--dir', clockDir, '-o', 'json')).out);
      expect(json).toMatchObject({
        phase: 'ready',
        lab: { subnet: 172, clock: { bootSeconds: 2, decommissionSeconds: 1.5, jitter: 0.2 } },
      });
      const text = await ferry('lab', 'status', '--dir', clockDir);
      expect(text.out).toContain('machines:    boot 2 s, decommission 1.5 s, each ±20 %');
      expect((await ferry('lab', 'down', '--dir', clockDir)).code).toBe(0);
    } finally {
      if (existsSync(clockDir)) await stopLab(clockDir, 5_000).catch(() => undefined);
    }
  });
});
