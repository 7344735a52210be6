import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePlan } from '../plan/load.js';
import { EXAMPLE_DIR } from '../snapshot/testing-example.js';
import { EXTERNAL_ETCD_DIR } from '../snapshot/testing-external-etcd.js';
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

  it('an external etcd is exit 2 naming the topology, not the exit 1 of the blocker gate; nothing written', async () => {
    for (const extra of [[], ['--allow-blockers']]) {
      const r = await run(EXTERNAL_ETCD_DIR, '-o', 'plan.json', ...extra);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^error: .*kube-apiserver@cp-1 --etcd-servers: etcd topology is external/);
      expect(r.err).not.toContain('ferry plan refuses');
      expect(existsSync(join(dir, 'plan.json'))).toBe(false);
    }
  });

  it('--allow-blockers writes plan.json; the preflight step records the blockers', async () => {
    const r = await run(
      EXAMPLE_DIR,
      '--allow-blockers',
      '--surge-replicas',
      '-o',
      'out/plan.json',
      '--strategy',
      'replace',
    );
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
    const r = await run(EXAMPLE_DIR, '-o', 'plan.md', '--surge-replicas');
    expect(r.code).toBe(0);
    const md = await readFile(join(dir, 'plan.md'), 'utf8');
    expect(md).toMatch(/^# Migration plan: lab → Talos v1\.13\.9/);
    expect(md).toContain('Audit: no unsuppressed blocker');
  });

  it('prints markdown on stdout without -o; html by extension', async () => {
    const md = await run(EXAMPLE_DIR, '--allow-blockers', '--surge-replicas');
    expect(md.code).toBe(0);
    expect(md.out).toContain('## Phase 2: Control planes');
    const html = await run(EXAMPLE_DIR, '--allow-blockers', '--surge-replicas', '-o', 'plan.html');
    expect(html.code).toBe(0);
    expect(await readFile(join(dir, 'plan.html'), 'utf8')).toMatch(/^<!doctype html>/);
  });

  it('bad usage exits 2 before any work', async () => {
    expect((await run(EXAMPLE_DIR, '-o', 'plan.txt')).code).toBe(2);
    expect((await run(EXAMPLE_DIR, '--strategy', 'yolo')).code).toBe(2);
    for (const bad of ['0', '0%', '101%', 'many', '-1', '1.5'])
      expect((await run(EXAMPLE_DIR, '--max-unavailable', bad)).code, bad).toBe(2);
    for (const bad of ['-1', 'two', '1.5'])
      expect((await run(EXAMPLE_DIR, '--surge', bad)).code, bad).toBe(2);
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
    const ok = await run(
      EXAMPLE_DIR,
      '--kit',
      'kit',
      '--allow-blockers',
      '--surge-replicas',
      '-o',
      'plan.json',
    );
    expect(ok.code).toBe(0);
    const plan = parsePlan(await readFile(join(dir, 'plan.json'), 'utf8'), 'plan.json');
    expect([plan.target.talosVersion, plan.provisioner]).toEqual(['v1.12.11', 'exec']);
  });

  it('a kit made for another infrastructure is refused (exit 2), as ferry audit --kit refuses it', async () => {
    const kit = join(dir, 'kit-proxmox');
    await mkdir(kit);
    await writeFile(
      join(kit, 'provenance.json'),
      JSON.stringify({
        kind: 'FerryKitProvenance',
        version: 1,
        snapshot: {},
        target: { talosVersion: 'v1.12.11', provisioner: 'exec', infra: 'proxmox' },
        files: [],
      }),
    );
    const args = ['--kit', 'kit-proxmox', '--allow-blockers', '--surge-replicas', '-o', 'plan-infra.json'];
    const r = await run(EXAMPLE_DIR, ...args, '--infra', 'vsphere');
    expect(r.code).toBe(2);
    expect(r.err).toContain('generated for --infra proxmox (the plan would use vsphere)');
    expect(r.err).toContain('drop --infra');
    expect(existsSync(join(dir, 'plan-infra.json'))).toBe(false);
    // Without the flag the kit's infrastructure is the plan's: nothing differs.
    expect((await run(EXAMPLE_DIR, ...args)).code).toBe(0);
  });

  it('refuses (exit 1, nothing written) while a PodDisruptionBudget allows no disruption, naming it and the fix', async () => {
    const r = await run(EXAMPLE_DIR, '--allow-blockers', '-o', 'plan.json');
    expect(r.code).toBe(1);
    expect(r.err).toContain('ferry plan refuses: 1 PodDisruptionBudget(s) allow no disruption');
    expect(r.err).toContain('shop/checkout (minAvailable 2) on worker-1, worker-4');
    expect(r.err).toContain('pass --surge-replicas');
    expect(existsSync(join(dir, 'plan.json'))).toBe(false);
  });

  it('--surge-replicas plans the scale-up around the checkout drains; the summary gives the estimate and its bound', async () => {
    const r = await run(EXAMPLE_DIR, '--allow-blockers', '--surge-replicas', '-o', 'plan.json');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/workers: \d+ batch\(es\), estimate \d+ s, lower bound \d+ s, 1 outage\(s\)/);
    const plan = parsePlan(await readFile(join(dir, 'plan.json'), 'utf8'), 'plan.json');
    const kinds = plan.phases[3]!.steps.map((s) => s.kind);
    expect(kinds.filter((k) => k === 'scale-workload')).toHaveLength(2);
    expect(plan.workerRoll.surged.map((s) => `${s.workload.name} ${s.from}→${s.to}`)).toEqual([
      'checkout 2→3',
    ]);
  });

  it('--fail-on-outage refuses, naming what the roll would take down', async () => {
    const r = await run(
      EXAMPLE_DIR,
      '--allow-blockers',
      '--surge-replicas',
      '--fail-on-outage',
      '-o',
      'plan.json',
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('--fail-on-outage: the worker roll would cause 1 outage(s)');
    expect(r.err).toContain('Pod default/netshoot: bare-pod when worker-2 drains');
    expect(existsSync(join(dir, 'plan.json'))).toBe(false);
  });

  it('--max-unavailable and --surge shape the batches', async () => {
    const r = await run(
      EXAMPLE_DIR,
      '--allow-blockers',
      '--surge-replicas',
      '--max-unavailable',
      '1',
      '--surge',
      '2',
      '-o',
      'plan.json',
    );
    expect(r.code).toBe(0);
    expect(r.err).toContain('--surge 2: 2 more Talos worker(s) stay after the roll');
    const plan = parsePlan(await readFile(join(dir, 'plan.json'), 'utf8'), 'plan.json');
    expect(plan.workerRoll.batches.every((b) => b.nodes.length === 1)).toBe(true);
    expect(plan.workerRoll.surgeWorkers?.count).toBe(2);
    const batch1 = plan.phases[3]!.steps.filter((s) => s.batch === 1 && s.kind === 'provision-detect');
    expect(batch1.map((s) => (s.kind === 'provision-detect' ? s.params.node.replaces : ''))).toEqual([
      'surge-1',
      'surge-2',
      'worker-1',
    ]);
  });
});
