/**
 * `ferry lab up` with a clock: the holder runs the lab on it and `ferry lab status` shows it.
 * Subnet 127.0.171.x belongs to this file (and to src/lab/provisioner/clock.real.test.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingReason } from '../lab/etcd/binaries.js';
import { stopLab } from '../lab/state.js';
import { skipFor } from '../lab/testing-binaries.js';
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

describe.skipIf(skipFor(missing))('ferry lab up with a clock', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'ferry-lab-clock-cli-'));
    dir = join(work, 'lab');
  });

  afterAll(async () => {
    if (existsSync(dir)) await stopLab(dir, 5_000).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  });

  it('records the boot, decommission and jitter settings; status shows them', async () => {
    const up = await ferry(
      'lab',
      'up',
      EXAMPLE,
      '--dir',
      'lab',
      '--subnet',
      '171',
      '--boot-seconds',
      '2',
      '--decommission-seconds',
      '1.5',
      '--jitter',
      '0.2',
    );
    expect(up.err).not.toContain('error');
    expect(up.code).toBe(0);
    const json = JSON.parse((await ferry('lab', 'status', '--dir', dir, '-o', 'json')).out);
    expect(json).toMatchObject({
      phase: 'ready',
      lab: { subnet: 171, clock: { bootSeconds: 2, decommissionSeconds: 1.5, jitter: 0.2 } },
    });
    const text = await ferry('lab', 'status', '--dir', dir);
    expect(text.out).toContain('machines:    boot 2 s, decommission 1.5 s, each ±20 %');
    expect((await ferry('lab', 'down', '--dir', dir)).code).toBe(0);
  });
});
