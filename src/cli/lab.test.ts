/** `ferry lab up|serve` refuse a bad clock before anything starts (lab.real.test.ts runs the lab). */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const EXAMPLE = resolve('examples/lab-cluster');
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ferry-lab-flags-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function ferry(...args: string[]) {
  const io = memoryIo({ cwd: work });
  const code = await runCli(args, io);
  return { code, err: io.err };
}

describe('ferry lab clock flags', () => {
  it.each([
    ['--boot-seconds=-1', '--boot-seconds must be a number of seconds, 0 or more; got "-1"'],
    ['--boot-seconds=soon', '--boot-seconds must be a number of seconds, 0 or more; got "soon"'],
    ['--decommission-seconds=1e3', '--decommission-seconds must be a number of seconds'],
    ['--decommission-seconds=', '--decommission-seconds must be a number of seconds'],
    ['--jitter=1', '--jitter must be a fraction from 0 to less than 1 (0.1 for ±10 %); got "1"'],
    ['--jitter=-0.1', '--jitter must be a fraction from 0 to less than 1'],
    ['--jitter=10%', '--jitter must be a fraction from 0 to less than 1'],
  ])('up and serve refuse %s with exit 2, naming the flag, and start nothing', async (flag, message) => {
    for (const sub of ['up', 'serve']) {
      const r = await ferry('lab', sub, EXAMPLE, '--dir', 'lab', '--subnet', '171', flag);
      expect(r.code).toBe(2);
      expect(r.err).toContain(message);
    }
    expect(existsSync(join(work, 'lab'))).toBe(false);
  });

  it('the clock is a setting of up and serve only', async () => {
    const r = await ferry('lab', 'status', '--dir', 'lab', '--boot-seconds', '2');
    expect(r.code).toBe(2);
    expect(r.err).toContain("Unknown option '--boot-seconds'");
  });
});
