/**
 * `ferry mgmt upgrade-providers` against stand-in kubectl and clusterctl (tools/testing-standin.mjs,
 * as the bootstrap's tests): the plan from the inventory they print, the real command lines, the
 * backup before the upgrade and never on --dry-run, the verification, and a stopped run continued
 * without a second backup.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { memoryIo } from '../cli/io.js';
import { runMgmtUpgrade } from '../cli/mgmt-upgrade.js';
import { rejected } from '../testing-errors.js';
import { loadMgmtConfig } from './bootstrap/config.js';
import { writeConfig } from './bootstrap/testing-scenario.js';
import { StageJournal } from './stage-journal.js';
import { Tools } from './tools/adapter.js';
import { type Rule, Standins } from './tools/testing-standins.js';
import { type UpgradeOutcome, upgradeProviders } from './upgrade-providers.js';

let dir: string;
let tools: Standins;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-mgmt-upgrade-'));
  tools = new Standins(dir);
  mkdirSync(state(), { recursive: true });
  writeFileSync(kubeconfig(), 'apiVersion: v1\nkind: Config\n', { mode: 0o600 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const state = () => join(dir, '.ferry-mgmt-kmgt');
const kubeconfig = () => join(state(), 'kmgt.kubeconfig');

const inventory = (versions: Record<string, string>) =>
  JSON.stringify({
    items: [
      ['cluster-api', 'CoreProvider', 'capi-system'],
      ['talos', 'BootstrapProvider', 'cabpt-system'],
      ['talos', 'ControlPlaneProvider', 'cacppt-system'],
      ['proxmox', 'InfrastructureProvider', 'capmox-system'],
      ['in-cluster', 'IPAMProvider', 'capi-ipam-in-cluster-system'],
    ].map(([providerName, type, namespace]) => ({
      kind: 'Provider',
      metadata: { name: `${type}-${providerName}`, namespace },
      providerName,
      type,
      version: versions[type!],
    })),
  });
const BEFORE = {
  CoreProvider: 'v1.14.0',
  BootstrapProvider: 'v0.6.12',
  ControlPlaneProvider: 'v0.5.13',
  InfrastructureProvider: 'v0.9.0',
  IPAMProvider: 'v1.1.0',
};
const AFTER = { ...BEFORE, CoreProvider: 'v1.14.1', ControlPlaneProvider: 'v0.5.14' };
const cluster = (o: { generation?: number; paused?: boolean } = {}) =>
  JSON.stringify({
    items: [
      {
        kind: 'Cluster',
        metadata: { name: 'kmgt', namespace: 'kmgt', uid: 'u-1', generation: o.generation ?? 3 },
        spec: { paused: o.paused ?? false },
      },
    ],
  });
const deployments = (available: string) =>
  JSON.stringify({
    items: ['capi-controller-manager', 'cacppt-controller-manager'].map((name) => ({
      metadata: { name, namespace: 'x-system' },
      status: { conditions: [{ type: 'Available', status: available }] },
    })),
  });

function rules(o: { upgrade?: Partial<Rule>; available?: string; after?: string } = {}): Rule[] {
  return [
    {
      tool: 'kubectl',
      match: '^version --client -o json$',
      stdout: '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1"}}\n',
    },
    { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.1\n' },
    {
      tool: 'kubectl',
      match: ' get providers.clusterctl.cluster.x-k8s.io --all-namespaces -o json$',
      unless: 'upgraded',
      stdout: inventory(BEFORE),
    },
    {
      tool: 'kubectl',
      match: ' get providers.clusterctl.cluster.x-k8s.io --all-namespaces -o json$',
      stdout: inventory(AFTER),
    },
    {
      tool: 'kubectl',
      match: ' get clusters.cluster.x-k8s.io --all-namespaces -o json$',
      unless: 'upgraded',
      stdout: cluster(),
    },
    {
      tool: 'kubectl',
      match: ' get clusters.cluster.x-k8s.io --all-namespaces -o json$',
      stdout: o.after ?? cluster(),
    },
    {
      tool: 'clusterctl',
      match: '^upgrade apply ',
      mark: 'upgraded',
      stdout:
        'Performing upgrade...\nUpgrading Provider="capi-system/cluster-api" CurrentVersion="v1.14.0" TargetVersion="v1.14.1"\n',
      ...o.upgrade,
    },
    {
      tool: 'kubectl',
      match: ' get deployments --all-namespaces -l cluster.x-k8s.io/provider -o json$',
      stdout: deployments(o.available ?? 'True'),
    },
  ];
}

const io = () => Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
const TO = ['--to', 'core=v1.14.1,talos-cp=v0.5.14'];

async function upgrade(
  r: Rule[],
  backups: string[],
  targets = { core: 'v1.14.1', 'talos-cp': 'v0.5.14' },
): Promise<UpgradeOutcome> {
  tools.script(r);
  const config = await loadMgmtConfig(writeConfig(dir), 'mgmt.yaml');
  return upgradeProviders({
    config,
    kubeconfig: kubeconfig(),
    targets,
    stateDir: state(),
    tools: new Tools({ env: tools.env(), sink: () => {} }),
    mode: 'yes',
    providerTimeoutSeconds: 600,
    progress: () => {},
    backup: async () => {
      // What ran before the backup: no upgrade yet.
      backups.push(tools.called('clusterctl', /^upgrade/).length === 0 ? 'before the upgrade' : 'too late');
      return 'ferry-mgmt-backup.age version v-1 verified';
    },
  });
}

describe('ferry mgmt upgrade-providers against stand-in tools', () => {
  it('--dry-run: the table (contracts, release notes) and the exact command; nothing runs, no backup', async () => {
    tools.script(rules());
    const out = io();
    const code = await runMgmtUpgrade(['--config', writeConfig(dir), '--dry-run', ...TO], out);
    expect(code).toBe(0);
    expect(out.out).toMatch(
      /^core +CoreProvider +v1\.14\.0 +v1\.14\.1 +upgrade +v1beta2 +https:\/\/github.com\/kubernetes-sigs\/cluster-api\/releases\/tag\/v1\.14\.1$/m,
    );
    expect(out.out).toMatch(
      /^talos-cp +ControlPlaneProvider +v0\.5\.13 +v0\.5\.14 +upgrade +v1beta1 +\S+\/releases\/tag\/v0\.5\.14$/m,
    );
    expect(out.out).toMatch(/^proxmox +InfrastructureProvider +v0\.9\.0 +v0\.9\.0 +unchanged +v1beta2 +-$/m);
    expect(out.out).toContain(
      `  CLUSTERCTL_DISABLE_VERSIONCHECK=true XDG_CONFIG_HOME=${join(state(), 'xdg')} clusterctl upgrade apply --kubeconfig ${kubeconfig()} --config ${join(state(), 'upgrade-clusterctl.yaml')} --core cluster-api:v1.14.1 --control-plane talos:v0.5.14 --wait-providers --wait-provider-timeout 600`,
    );
    expect(tools.called('clusterctl', /^upgrade/)).toHaveLength(0);
    expect(tools.calls().map((c) => `${c.tool} ${c.args.at(-3)}`)).not.toContain('kubectl deployments');

    const json = io();
    expect(await runMgmtUpgrade(['--config', writeConfig(dir), '--dry-run', ...TO, '-o', 'json'], json)).toBe(
      0,
    );
    const parsed = JSON.parse(json.out);
    expect(parsed.kind).toBe('planned');
    expect(parsed.plan.steps.find((s: { key: string }) => s.key === 'core')).toMatchObject({
      current: 'v1.14.0',
      target: 'v1.14.1',
      currentContract: 'v1beta2',
      targetContract: 'v1beta2',
    });
  });

  it('--dry-run of a blocked plan exits 1 with each blocker and its fix', async () => {
    tools.script(rules());
    const out = io();
    const code = await runMgmtUpgrade(
      ['--config', writeConfig(dir), '--dry-run', '--to', 'talos-cp=v0.5.12'],
      out,
    );
    expect(code).toBe(1);
    expect(out.out).toContain('blocked (2):');
    expect(out.out).toContain('talos-cp would go from v0.5.13 down to v0.5.12');
    expect(out.out).toMatch(/talos-cp v0\.5\.12 is older than v0\.5\.13/);
  });

  it('bad usage is exit 2 with what and how to fix, before any tool runs', async () => {
    tools.script(rules());
    const cfg = writeConfig(dir);
    let e = await rejected(runMgmtUpgrade(['--config', cfg], io()), 2);
    expect(e.message).toMatch(/say what to do: --dry-run .* or --yes/);
    e = await rejected(runMgmtUpgrade(['--config', cfg, '--dry-run', '--yes'], io()), 2);
    expect(e.message).toBe('--dry-run and --yes exclude each other');
    e = await rejected(runMgmtUpgrade(['--config', cfg, '--dry-run', '--to', 'capi=v1.14.1'], io()), 2);
    expect(e.message).toMatch(/^--to: "capi" names no provider/);
    expect(e.remediation).toMatch(/--to core=v1.14.1,talos-cp=v0.5.14/);
    e = await rejected(runMgmtUpgrade(['--config', cfg, '--yes'], io()), 2);
    expect(e.message).toBe('--yes needs --backup-to s3://BUCKET[/PREFIX]');
    e = await rejected(runMgmtUpgrade(['--config', cfg, '--dry-run', '--mgmt-kubeconfig', 'nope'], io()), 2);
    expect(e.message).toMatch(/nope/);
    expect(tools.calls()).toHaveLength(0);
  });

  it('--yes: backup first, then the pinned clusterctl upgrade apply, then verified', async () => {
    const backups: string[] = [];
    const out = await upgrade(rules(), backups);
    expect(out.kind).toBe('upgraded');
    expect(backups).toEqual(['before the upgrade']);
    const apply = tools.called('clusterctl', /^upgrade apply/);
    expect(apply).toHaveLength(1);
    expect(apply[0]!.args).toEqual([
      'upgrade',
      'apply',
      '--kubeconfig',
      kubeconfig(),
      '--config',
      join(state(), 'upgrade-clusterctl.yaml'),
      '--core',
      'cluster-api:v1.14.1',
      '--control-plane',
      'talos:v0.5.14',
      '--wait-providers',
      '--wait-provider-timeout',
      '600',
    ]);
    expect(apply[0]!.env['CLUSTERCTL_DISABLE_VERSIONCHECK']).toBe('true');
    const cc = join(state(), 'upgrade-clusterctl.yaml');
    expect(statSync(cc).mode & 0o777).toBe(0o600);
    expect(readFileSync(cc, 'utf8')).toContain(
      'https://github.com/siderolabs/cluster-api-control-plane-provider-talos/releases/v0.5.14/control-plane-components.yaml',
    );
    expect(out.kind === 'upgraded' && out.verified).toEqual([
      'core v1.14.1',
      'talos-bootstrap v0.6.12',
      'talos-cp v0.5.14',
      'proxmox v0.9.0',
      'ipam v1.1.0',
      '1 Cluster(s) unchanged, none paused',
    ]);
  });

  it('clusterctl failing stops (exit 3); the same command continues without a second backup', async () => {
    const backups: string[] = [];
    await rejected(
      upgrade(
        rules({ upgrade: { code: 1, stderr: 'Error: failed to upgrade provider\n', mark: undefined } }),
        backups,
      ),
      3,
    );
    const journal = readdirJournal();
    expect(lastState(journal, 'backup')).toBe('done');
    expect(lastState(journal, 'upgrade-apply')).toBe('failed');
    const out = await upgrade(rules(), backups);
    expect(out.kind).toBe('upgraded');
    expect(backups).toEqual(['before the upgrade']);
    expect(tools.called('clusterctl', /^upgrade apply/)).toHaveLength(2);
  });

  it('a controller not Available, or a Cluster paused or changed afterwards, fails the verification (exit 3)', async () => {
    let e = await rejected(upgrade(rules({ available: 'False' }), []), 3);
    expect(e.message).toMatch(
      /the providers were upgraded, but: Deployment x-system\/capi-controller-manager is not Available/,
    );
    fresh();
    e = await rejected(upgrade(rules({ after: cluster({ paused: true }) }), []), 3);
    expect(e.message).toMatch(/Cluster kmgt\/kmgt is paused/);
    fresh();
    e = await rejected(upgrade(rules({ after: cluster({ generation: 4 }) }), []), 3);
    expect(e.message).toMatch(/Cluster kmgt\/kmgt changed during the upgrade \(generation 3 → 4\)/);
  });

  it('--yes on a blocked plan changes nothing: no backup, no upgrade (exit 2)', async () => {
    const backups: string[] = [];
    const e = await rejected(upgrade(rules(), backups, { core: 'v1.13.5', 'talos-cp': 'v0.5.14' }), 2);
    expect(e.message).toMatch(/the provider upgrade is blocked \(1\); nothing was changed/);
    expect(backups).toEqual([]);
    expect(tools.called('clusterctl', /^upgrade/)).toHaveLength(0);
  });
});

/** A new state directory and stand-in record: the next scenario starts before any upgrade. */
function fresh(): void {
  rmSync(state(), { recursive: true });
  for (const f of ['state.json', 'calls.jsonl']) rmSync(join(dir, f), { force: true });
  mkdirSync(state());
  writeFileSync(kubeconfig(), 'apiVersion: v1\n');
}

/** A management cluster ferry mgmt bootstrap built: the providers are the operator's, no clusterctl inventory. */
function operatorRules(extra: Rule[] = []): Rule[] {
  const providers = (v: Record<string, string>) =>
    JSON.stringify({
      items: [
        ['cluster-api', 'CoreProvider', 'capi-system'],
        ['talos', 'BootstrapProvider', 'talos-bootstrap-system'],
        ['talos', 'ControlPlaneProvider', 'talos-control-plane-system'],
        ['proxmox', 'InfrastructureProvider', 'proxmox-infrastructure-system'],
        ['in-cluster', 'IPAMProvider', 'in-cluster-ipam-system'],
      ].map(([name, kind, namespace]) => ({
        apiVersion: 'operator.cluster.x-k8s.io/v1alpha2',
        kind,
        metadata: { name, namespace },
        spec: { version: v[kind!] },
        status: { installedVersion: v[kind!] },
      })),
    });
  return [
    ...extra,
    {
      tool: 'kubectl',
      match: '^version --client -o json$',
      stdout: '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1"}}\n',
    },
    { tool: 'helm', match: '^version --short$', stdout: 'v3.21.4+g5e2f4a1\n' },
    {
      tool: 'kubectl',
      match: ' get providers.clusterctl.cluster.x-k8s.io ',
      code: 1,
      stderr: 'error: the server doesn\'t have a resource type "providers"\n',
    },
    { tool: 'kubectl', match: ' get coreproviders.operator', unless: 'upgraded', stdout: providers(BEFORE) },
    { tool: 'kubectl', match: ' get coreproviders.operator', stdout: providers(AFTER) },
    { tool: 'kubectl', match: ' get clusters.cluster.x-k8s.io ', stdout: cluster() },
    {
      tool: 'helm',
      match: '^upgrade --install capi-operator ',
      mark: 'upgraded',
      stdout: 'STATUS: deployed\n',
    },
    {
      tool: 'kubectl',
      match: ' wait --for=condition=Ready \\w+providers\\.operator',
      stdout: 'condition met\n',
    },
    {
      tool: 'kubectl',
      match: ' get deployments --all-namespaces -l cluster.x-k8s.io/provider -o json$',
      stdout: deployments('True'),
    },
  ];
}

describe('ferry mgmt upgrade-providers on a cluster ferry mgmt bootstrap built (providers of the Cluster API operator)', () => {
  it('--yes: backup, then the operator chart with the target versions (HA kept), then verified; no clusterctl', async () => {
    const backups: string[] = [];
    tools.script(operatorRules());
    const config = await loadMgmtConfig(writeConfig(dir), 'mgmt.yaml');
    const out = await upgradeProviders({
      config,
      kubeconfig: kubeconfig(),
      targets: { core: 'v1.14.1', 'talos-cp': 'v0.5.14' },
      stateDir: state(),
      tools: new Tools({ env: tools.env(), sink: () => {} }),
      mode: 'yes',
      providerTimeoutSeconds: 600,
      progress: () => {},
      backup: async () => {
        backups.push(tools.called('helm', /^upgrade/).length === 0 ? 'before the upgrade' : 'too late');
        return 'ok';
      },
    });
    expect(out).toMatchObject({ kind: 'upgraded', via: 'operator' });
    expect(backups).toEqual(['before the upgrade']);
    expect(tools.called('clusterctl', /./)).toHaveLength(0);
    const helm = tools.called(
      'helm',
      /^upgrade --install capi-operator cluster-api-operator --version 0\.28\.0 /,
    );
    expect(helm).toHaveLength(1);
    expect(helm[0]!.args).toEqual(expect.arrayContaining(['--kubeconfig', kubeconfig(), '-f', '-']));
    const values = parse(helm[0]!.stdin);
    expect(values.core['cluster-api']).toMatchObject({ version: 'v1.14.1', deployment: { replicas: 2 } });
    expect(values.controlPlane.talos.version).toBe('v0.5.14');
    expect(values.bootstrap.talos.version).toBe('v0.6.12');
    expect(values.replicaCount).toBe(2);
    expect(tools.called('kubectl', / wait --for=condition=Ready \w+providers\.operator/)).toHaveLength(5);
  });

  it('an operator provider mgmt.yaml does not pin is refused before anything runs', async () => {
    const vsphere: Rule = {
      tool: 'kubectl',
      match: ' get coreproviders.operator',
      stdout: JSON.stringify({
        items: [
          {
            kind: 'CoreProvider',
            metadata: { name: 'cluster-api', namespace: 'capi-system' },
            status: { installedVersion: 'v1.14.0' },
          },
          {
            kind: 'InfrastructureProvider',
            metadata: { name: 'vsphere', namespace: 'capv-system' },
            status: { installedVersion: 'v1.16.1' },
          },
        ],
      }),
    };
    tools.script(operatorRules([vsphere]));
    const e = await rejected(runMgmtUpgrade(['--config', writeConfig(dir), '--dry-run'], io()), 2);
    expect(e.message).toMatch(
      /the Cluster API operator also runs InfrastructureProvider vsphere, which \S*mgmt\.yaml does not pin/,
    );
    expect(tools.called('helm', /^upgrade/)).toHaveLength(0);
  });
});

function readdirJournal(): string {
  const f = readdirSync(state()).find((n) => /^upgrade-[0-9a-f]{12}\.journal\.sqlite$/.test(n));
  if (!f) throw new Error('no journal');
  return join(state(), f);
}
function lastState(path: string, stage: string): string | undefined {
  return StageJournal.read(path)
    .events.filter((e) => e.stage === stage)
    .at(-1)?.state;
}
