/**
 * `ferry audit --kit` on the example cluster: generate its kit with `ferry generate`'s own code,
 * audit with and without it, and compare — the resolved section, the lower counts, the exit status.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { generateKit } from '../../src/generate/kit.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const EXAMPLE = join(REPO, 'examples', 'lab-cluster');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-audit-kit-'));
  await generateKit({
    snapshotPath: EXAMPLE,
    pkiDir: join(EXAMPLE, 'pki'),
    outDir: join(dir, 'kit'),
    target: {},
    bootstrapToken: 'abcdef.0123456789abcdef',
  });
  await mkdir(join(dir, 'empty'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function audit(...argv: string[]) {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(['audit', EXAMPLE, ...argv], io);
  return { code, out: io.out, err: io.err };
}

describe('ferry audit --kit on the example cluster', () => {
  it('reports what the kit fixes in its own section and counts it out of the findings', async () => {
    const before = JSON.parse((await audit('-o', 'json', '--fail-on', 'never')).out);
    const after = JSON.parse((await audit('-o', 'json', '--fail-on', 'never', '--kit', 'kit')).out);
    expect(before.resolved).toEqual([]);
    expect(after.counts.resolved).toBeGreaterThan(10);
    expect(after.counts.blocker).toBeLessThan(before.counts.blocker);
    expect(after.counts.total + after.counts.resolved).toBe(before.counts.total);
    // Every finding is in exactly one place.
    const fps = (list: { fingerprint: string }[]) => list.map((f) => f.fingerprint).sort();
    expect(fps([...after.findings, ...after.resolved])).toEqual(fps(before.findings));
    for (const f of after.resolved) expect(f.resolution.kit).toBe('kit');
    // Generated from this very snapshot: no "another cluster?" warning.
    expect(after.kit).toMatchObject({ path: 'kit', warnings: [] });

    const table = await audit('--kit', 'kit', '--fail-on', 'never');
    expect(table.out).toContain(`Resolved by the kit kit (${after.counts.resolved})`);
    expect(table.out).toContain('resolved: talos/controlplane-patch.yaml sets cluster.proxy.disabled: true');
    expect(table.out).toContain(`${after.counts.resolved} resolved by the kit`);
    expect(table.out).toMatch(/^BLOCKER: \d+ rules?, \d+ findings?$/m);
  });

  it('exit status: findings the kit resolves do not fail --fail-on', async () => {
    // Accept the blockers the kit cannot fix; what is left are blockers the kit fixes.
    await writeFile(
      join(dir, 'accepted.yaml'),
      ['bootstrap.token-ttl', 'etcd.version-learner-bug', 'workload.pdb-blocking']
        .map((rule) => `- rule: ${rule}\n  reason: handled outside the kit\n`)
        .join(''),
    );
    const without = await audit('--suppressions', 'accepted.yaml');
    const withKit = await audit('--suppressions', 'accepted.yaml', '--kit', 'kit');
    expect(without.code).toBe(1);
    expect(withKit.code).toBe(0);
    expect(withKit.out).toContain('0 blockers');
  });

  it('ferry plan --kit: blockers the kit resolves do not stop the plan, and the plan lists them', async () => {
    // The same suppressions as above: what is left are blockers the kit fixes.
    const plan = async (...argv: string[]) => {
      const io = memoryIo({ cwd: dir });
      const code = await runCli(
        ['plan', EXAMPLE, '--suppressions', 'accepted.yaml', '--surge-replicas', ...argv],
        io,
      );
      return { code, out: io.out, err: io.err };
    };
    const without = await plan('--format', 'json');
    expect(without.code).toBe(1);
    expect(without.err).toMatch(/ferry plan refuses: the audit has \d+ unsuppressed blocker/);
    const withKit = await plan('--kit', 'kit', '--format', 'json');
    expect(withKit.err).not.toContain('refuses');
    expect(withKit.code).toBe(0);
    const p = JSON.parse(withKit.out);
    expect(p.audit.blockers).toEqual([]);
    const byKit: { ruleId: string; severity: string }[] = p.audit.resolvedByKit;
    expect(byKit.some((f) => f.severity === 'blocker')).toBe(true);
    const md = await plan('--kit', 'kit');
    expect(md.out).toContain('## Resolved by the kit');
    expect(md.out).toContain(`\`${byKit[0]!.ruleId}\``);
    const html = await plan('--kit', 'kit', '--format', 'html');
    expect(html.out).toContain('<h2>Resolved by the kit</h2>');
  });

  it('exits 2 naming the path for a kit that is missing, not a kit, or for another target', async () => {
    const missing = await audit('--kit', 'nowhere');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--kit nowhere does not exist');
    const notKit = await audit('--kit', 'empty');
    expect(notKit.code).toBe(2);
    expect(notKit.err).toContain('empty/provenance.json');
    const other = await audit('--kit', 'kit', '--talos-version', 'v1.14');
    expect(other.code).toBe(2);
    expect(other.err).toMatch(
      /kit\/provenance\.json, field target: the kit kit was generated for another target: Talos v1\.13\.\d+ \(now v1\.14/,
    );
  });

  it('is in --help', async () => {
    const io = memoryIo({ cwd: dir });
    await runCli(['audit', '--help'], io);
    expect(io.out).toMatch(/--kit KIT +a kit written by `ferry generate`/);
  });
});
