import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePlan } from '../plan/load.js';
import { EXAMPLE_DIR } from '../plan/testing.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

describe('ferry plan', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-plan-cli-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (...argv: string[]) => {
    const io = memoryIo({ cwd: dir });
    const code = await runCli(['plan', ...argv], io);
    return { code, out: io.out, err: io.err };
  };

  it('refuses with exit 1 while the audit has unsuppressed blockers, and writes nothing', async () => {
    const r = await run(EXAMPLE_DIR, '-o', 'plan.json');
    expect(r.code).toBe(1);
    expect(r.err).toContain('ferry plan refuses');
    expect(r.err).toMatch(/blocker bootstrap\.token-ttl/);
    expect(r.err).toContain('--allow-blockers');
    expect(existsSync(join(dir, 'plan.json'))).toBe(false);
  });

  it('--allow-blockers writes plan.json; the preflight step records the blockers', async () => {
    const r = await run(EXAMPLE_DIR, '--allow-blockers', '-o', 'out/plan.json', '--strategy', 'replace');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^json plan written to out\/plan.json: \d+ steps in 6 phases/);
    const plan = parsePlan(await readFile(join(dir, 'out', 'plan.json'), 'utf8'), 'plan.json');
    expect(plan.strategy).toBe('replace');
    const preflight = plan.phases[0]!.steps[0]!;
    expect(preflight.kind).toBe('preflight-audit');
    if (preflight.kind !== 'preflight-audit') return;
    expect(preflight.params.allowBlockers).toBe(true);
    expect(preflight.params.blockers.map((b) => b.ruleId)).toContain('bootstrap.token-ttl');
    expect(preflight.verify.expect.audit?.acceptedBlockers).toEqual(
      preflight.params.blockers.map((b) => b.fingerprint),
    );
  });

  it('suppressed blockers do not stop the plan', async () => {
    await mkdir(join(dir, '.ferry'));
    await writeFile(
      join(dir, '.ferry', 'suppressions.yaml'),
      "- rule: '*'\n  reason: accepted for this test\n",
    );
    const r = await run(EXAMPLE_DIR, '-o', 'plan.md');
    expect(r.code).toBe(0);
    const md = await readFile(join(dir, 'plan.md'), 'utf8');
    expect(md).toMatch(/^# Migration plan: lab → Talos v1\.13\.9/);
    expect(md).toContain('Audit: no unsuppressed blocker');
  });

  it('prints markdown on stdout without -o; html by extension', async () => {
    const md = await run(EXAMPLE_DIR, '--allow-blockers');
    expect(md.code).toBe(0);
    expect(md.out).toContain('## Phase 2: Control planes');
    const html = await run(EXAMPLE_DIR, '--allow-blockers', '-o', 'plan.html');
    expect(html.code).toBe(0);
    expect(await readFile(join(dir, 'plan.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('bad usage exits 2 before any work', async () => {
    expect((await run(EXAMPLE_DIR, '-o', 'plan.txt')).code).toBe(2);
    expect((await run(EXAMPLE_DIR, '--strategy', 'yolo')).code).toBe(2);
    expect((await run(EXAMPLE_DIR, '--worker-batch', '0')).code).toBe(2);
    expect((await run()).code).toBe(2);
    const missingKit = await run(EXAMPLE_DIR, '--kit', 'nope');
    expect(missingKit.code).toBe(2);
    expect(missingKit.err).toContain('--kit nope does not exist');
  });

  it('a kit made for another Talos version is refused (exit 2); its target is the default', async () => {
    const kit = join(dir, 'kit');
    await mkdir(kit);
    await writeFile(
      join(kit, 'provenance.json'),
      JSON.stringify({
        kind: 'FerryKitProvenance',
        version: 1,
        snapshot: {},
        target: { talosVersion: 'v1.12.11', provisioner: 'exec' },
        files: [],
      }),
    );
    const r = await run(EXAMPLE_DIR, '--kit', 'kit', '--talos-version', 'v1.13', '--allow-blockers');
    expect(r.code).toBe(2);
    expect(r.err).toContain('generated for --talos-version v1.12.11');
    const ok = await run(EXAMPLE_DIR, '--kit', 'kit', '--allow-blockers', '-o', 'plan.json');
    expect(ok.code).toBe(0);
    const plan = parsePlan(await readFile(join(dir, 'plan.json'), 'utf8'), 'plan.json');
    expect([plan.target.talosVersion, plan.provisioner]).toEqual(['v1.12.11', 'exec']);
  });
});
