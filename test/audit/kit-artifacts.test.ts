/**
 * Findings link the kit files that fix them (Finding.artifacts). This generates the kit of
 * examples/lab-cluster with `ferry generate`'s own code, audits the same snapshot with the same
 * target, and checks that every cited path is a file of that kit (or, ending in "/", a directory
 * holding some) — so a renamed or dropped kit file breaks this test, not the user's runbook.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/engine.js';
import { ALL_RULES } from '../../src/audit/rules/index.js';
import { KIT } from '../../src/audit/rules/kit-paths.js';
import { deriveFacts } from '../../src/facts/derive.js';
import type { TargetInput } from '../../src/facts/target.js';
import { capiOptionsFromFlags } from '../../src/generate/capi/options.js';
import { generateKit } from '../../src/generate/kit.js';
import { loadSnapshot } from '../../src/snapshot/load.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const EXAMPLE = join(REPO, 'examples', 'lab-cluster');
const TOKEN = 'abcdef.0123456789abcdef';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-kit-artifacts-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)));
  return out;
}

async function kitAndReport(name: string, target: TargetInput, capi?: Record<string, string>) {
  const outDir = join(tmp, name);
  await generateKit({
    snapshotPath: EXAMPLE,
    pkiDir: join(EXAMPLE, 'pki'),
    outDir,
    target,
    bootstrapToken: TOKEN,
    ...(capi ? { capi: capiOptionsFromFlags(capi) } : {}),
  });
  const snapshot = await loadSnapshot(EXAMPLE, { strictPki: false });
  const facts = deriveFacts(snapshot, target);
  const report = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date() });
  return { files: await filesUnder(outDir), report };
}

function unknownArtifacts(files: string[], cited: { ruleId: string; artifacts: string[] }[]): string[] {
  const have = new Set(files);
  const bad: string[] = [];
  for (const f of cited)
    for (const a of f.artifacts) {
      const ok = a.endsWith('/') ? files.some((p) => p.startsWith(a)) : have.has(a);
      if (!ok) bad.push(`${f.ruleId} cites ${a}`);
    }
  return [...new Set(bad)];
}

describe('finding artifacts', () => {
  for (const talosVersion of ['v1.13', 'v1.14']) {
    it(`Talos ${talosVersion}: every cited kit path is written by ferry generate`, async () => {
      const { files, report } = await kitAndReport(`kit-${talosVersion}`, { talosVersion });
      expect(unknownArtifacts(files, report.findings)).toEqual([]);
      // Not vacuous: the example's blockers point at the kit.
      const withArtifacts = report.findings.filter((f) => f.artifacts.length > 0).map((f) => f.ruleId);
      expect(withArtifacts.length).toBeGreaterThan(8);
      expect(withArtifacts).toEqual(
        expect.arrayContaining(['cni.talos-default-flannel', 'nodes.cp-schedulable']),
      );
    });
  }

  it('the Cluster API paths exist in a capi kit', async () => {
    const flags = {
      'proxmox-source-node': 'pve1',
      'proxmox-template-id': '9000',
      'proxmox-bridge': 'vmbr0',
      'proxmox-ipv4-addresses': '10.20.0.100-10.20.0.120',
      'proxmox-ipv4-prefix': '24',
      'proxmox-ipv4-gateway': '10.20.0.1',
      'proxmox-dns-servers': '10.20.0.2',
    };
    const { files, report } = await kitAndReport(
      'kit-capi',
      { provisioner: 'capi', infra: 'proxmox' },
      flags,
    );
    expect(unknownArtifacts(files, report.findings)).toEqual([]);
    expect(files).toContain(KIT.capiCluster);
  });
});
