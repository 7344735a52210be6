/**
 * Findings link the kit files that fix them (Finding.artifacts). This generates the kit of
 * examples/lab-cluster with `ferry generate`'s own code, audits the same snapshot with the same
 * target, and checks that every cited path is a file of that kit (or, ending in "/", a directory
 * holding some) — so a renamed or dropped kit file breaks this test, not the user's runbook.
 * The remediation texts are held to the same kit: every kit file they name exists, and the values
 * they quote (the encryption key the rotation moves to, the SANs step 10 adds, the issuer step 20
 * puts first) are the ones the generated files carry.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { runAudit } from '../../src/audit/engine.js';
import { describeSubject } from '../../src/audit/findings.js';
import { resolveByKit } from '../../src/audit/kit-resolve.js';
import { ALL_RULES } from '../../src/audit/rules/index.js';
import { KIT } from '../../src/audit/rules/kit-paths.js';
import { deriveFacts } from '../../src/facts/derive.js';
import type { TargetInput } from '../../src/facts/target.js';
import { capiOptionsFromFlags } from '../../src/generate/capi/options.js';
import { generateKit } from '../../src/generate/kit.js';
import { readKitContents } from '../../src/kit/read.js';
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

/** Kit paths as remediation texts write them: `talos/…`, `kubeadm/…`, `secrets.yaml`, … */
const KIT_PATH_IN_TEXT =
  /(?<![\w/.-])(?:secrets\.yaml|(?:talos|kubeadm|cilium|rbac|capi|tofu)\/(?:[\w.-]+\/)*[\w.-]*[\w/])/g;

describe('remediation text agrees with the kit', () => {
  let kit: { dir: string; files: string[]; report: Awaited<ReturnType<typeof kitAndReport>>['report'] };
  beforeAll(async () => {
    const { files, report } = await kitAndReport('kit-text', { talosVersion: 'v1.13' });
    kit = { dir: join(tmp, 'kit-text'), files, report };
  });
  const read = (rel: string) => readFile(join(kit.dir, rel), 'utf8');
  const finding = (ruleId: string) => {
    const f = kit.report.findings.find((x) => x.ruleId === ruleId);
    expect(f, ruleId).toBeDefined();
    return f!;
  };

  it('every kit file a remediation names is one ferry generate writes', () => {
    const named = kit.report.findings.flatMap((f) =>
      [...f.remediation.matchAll(KIT_PATH_IN_TEXT)].map((m) => ({ ruleId: f.ruleId, artifacts: [m[0]] })),
    );
    expect(unknownArtifacts(kit.files, named)).toEqual([]);
    // Not vacuous: the texts name kit files, whole paths included.
    const paths = new Set(named.flatMap((n) => n.artifacts));
    expect([...paths]).toEqual(expect.arrayContaining([KIT.saIssuer, KIT.encryptionPhase2, KIT.reencrypt]));
  });

  it("encryption.key-name names the key and the scripts of the kit's rotation", async () => {
    const f = finding('encryption.key-name');
    // What phase 2 makes the Secrets write key: the first provider of the rule covering secrets.
    const phase2 = parseYaml(await read(KIT.encryptionPhase2Config)) as {
      resources: { resources: string[]; providers: Record<string, { keys?: { name: string }[] }>[] }[];
    };
    const writer = phase2.resources.find((r) => r.resources.includes('secrets'))!.providers[0]!;
    const [provider, body] = Object.entries(writer)[0]!;
    expect(f.remediation).toContain(`${provider} "${body.keys![0]!.name}"`);
    // …and the scripts it names are the ones steps.json runs for the rotation, in that order.
    const steps = JSON.parse(await read(KIT.prepSteps)).steps as { id: string; apply: string }[];
    const rotation = steps.filter((s) => s.id.startsWith('3')).map((s) => s.apply.split(' ')[1]);
    expect(rotation).toEqual([KIT.encryptionPhase1, KIT.encryptionPhase2, KIT.reencrypt]);
    expect(f.remediation).toContain(rotation.join(', '));
  });

  it("apiserver.san-loopback names the SANs the kit's ClusterConfiguration adds", async () => {
    const f = finding('apiserver.san-loopback');
    const sansOf = (text: string) =>
      parseAllDocuments(text)
        .map((d) => d.toJS() as { kind?: string; apiServer?: { certSANs?: string[] } } | null)
        .find((d) => d?.apiServer?.certSANs)?.apiServer?.certSANs ?? [];
    const before = sansOf(await readFile(join(EXAMPLE, 'kubeadm-config.yaml'), 'utf8'));
    const added = sansOf(await read(KIT.clusterConfiguration)).filter((s) => !before.includes(s));
    expect(added.length).toBeGreaterThan(0);
    expect(f.remediation).toContain(`with ${added.join(' and ')} added to apiServer.certSANs`);
    expect(f.remediation).toContain(KIT.apiserverSans);
  });

  it("apiserver.sa-issuer names the issuer the kit's step 20 puts first", async () => {
    const f = finding('apiserver.sa-issuer');
    const issuer = /^ISSUER='([^']+)'$/m.exec(await read(KIT.saIssuer))?.[1];
    expect(issuer).toBeDefined();
    expect(f.remediation).toContain(`--service-account-issuer=${issuer} as the first issuer`);
    expect(f.remediation).toContain(`(the kit's ${KIT.saIssuer})`);
  });
});

/**
 * The other half of one source of truth: each rule states the kit's remedy as checks built from
 * the values its text quotes; the kit ferry generates must pass them. A generator that writes a
 * value elsewhere, or another value, turns a resolved finding open here.
 */
describe('the generated kit resolves the findings whose remedy it carries', () => {
  const resolvedRules = [
    'addons.coredns-conflict',
    'addons.kube-proxy-conflict',
    'apiserver.anonymous-auth-dependents',
    'apiserver.extra-args-carryover',
    'apiserver.podsecurity-default',
    'apiserver.sa-issuer',
    'apiserver.san-endpoint',
    'apiserver.san-loopback',
    'cni.cilium-update-strategy',
    'cni.cilium-values',
    'cni.talos-default-flannel',
    'encryption.key-name',
    'etcd.extra-args',
    'kubelet.config-carryover',
    'nodes.cp-schedulable',
  ];
  for (const talosVersion of ['v1.13', 'v1.14']) {
    it(`Talos ${talosVersion}`, async () => {
      const name = `kit-resolve-${talosVersion}`;
      const { report } = await kitAndReport(name, { talosVersion });
      const kit = await readKitContents(join(tmp, name), 'kit');
      const { open, resolved } = resolveByKit(report.findings, kit);
      expect([...new Set(resolved.map((f) => f.ruleId))].sort()).toEqual(
        // v1.14: the SAN step is generated too, but key names are free (encryption.key-name does not apply).
        talosVersion === 'v1.14' ? resolvedRules.filter((r) => r !== 'encryption.key-name') : resolvedRules,
      );
      // What the audit checks for and the kit does not carry: known gaps, said, never hidden.
      const prefix =
        talosVersion === 'v1.14'
          ? ['(KubeAPIServerConfig) has extraArgs']
          : ['has cluster.apiServer.extraArgs'];
      expect(
        open.filter((f) => f.kitGap).map((f) => `${f.ruleId} ${describeSubject(f.subject)}: ${f.kitGap}`),
      ).toEqual([
        // Talos writes the audit log to a path of its own: where to ship it from is the operator's call.
        `apiserver.extra-args-carryover Component kube-apiserver: talos/controlplane-patch.yaml ${prefix[0]}.audit-log-path: (not set)`,
      ]);
    });
  }
});
