import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

let dir: string;
let plan: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-cli-run-'));
  plan = join(dir, 'plan.json');
  const io = memoryIo();
  expect(await runCli(['plan', 'examples/lab-cluster', '--allow-blockers', '-o', plan], io), io.err).toBe(0);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ferry run: usage', () => {
  it('says which connection flag is missing (exit 2)', async () => {
    const io = memoryIo();
    expect(await runCli(['run', plan], io)).toBe(2);
    expect(io.err).toContain('missing --kubeconfig');
  });

  it('refuses a file that is not a plan (exit 2)', async () => {
    const bad = join(dir, 'not-a-plan.json');
    await writeFile(bad, '{"kind":"Something"}');
    const io = memoryIo();
    expect(await runCli(['run', bad, '--kubeconfig', 'k'], io)).toBe(2);
  });

  it('rejects an unknown step kind in --step-timeout and a phase that does not exist', async () => {
    const base = [
      'run',
      plan,
      '--kubeconfig',
      'k',
      '--etcd-endpoints',
      'https://127.0.0.1:2379',
      '--etcd-cacert',
      'a',
      '--etcd-cert',
      'b',
      '--etcd-key',
      'c',
    ];
    let io = memoryIo();
    expect(await runCli([...base, '--step-timeout', 'reboot=10'], io)).toBe(2);
    expect(io.err).toContain('unknown step kind reboot');
    io = memoryIo();
    expect(await runCli([...base, '--phases', '0,7'], io)).toBe(2);
    expect(io.err).toContain('7 is not a phase');
  });

  it('lists run and rehearse among the commands', async () => {
    const io = memoryIo();
    await runCli(['--help'], io);
    expect(io.out).toMatch(/\brun\s+execute a plan/);
    expect(io.out).toMatch(/\brehearse\s+rehearse the migration on a lab/);
  });
});
