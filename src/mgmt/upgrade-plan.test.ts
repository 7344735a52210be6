import { describe, expect, it } from 'vitest';
import {
  type Blocker,
  describeBlocker,
  type InstalledProvider,
  parseTargets,
  planProviderUpgrade,
  renderUpgradePlan,
  upgradeApplyArgs,
} from './upgrade-plan.js';

/** What ferry mgmt bootstrap installs by default (the inventory clusterctl init writes). */
const INSTALLED: InstalledProvider[] = [
  { type: 'CoreProvider', providerName: 'cluster-api', version: 'v1.14.0', namespace: 'capi-system' },
  { type: 'BootstrapProvider', providerName: 'talos', version: 'v0.6.12', namespace: 'cabpt-system' },
  { type: 'ControlPlaneProvider', providerName: 'talos', version: 'v0.5.13', namespace: 'cacppt-system' },
  { type: 'InfrastructureProvider', providerName: 'proxmox', version: 'v0.9.0', namespace: 'capmox-system' },
  {
    type: 'IPAMProvider',
    providerName: 'in-cluster',
    version: 'v1.1.0',
    namespace: 'capi-ipam-in-cluster-system',
  },
];
const kinds = (bs: Blocker[]) => bs.map((b) => `${b.kind}${'key' in b ? ` ${b.key}` : ''}`);

describe('the provider upgrade plan', () => {
  it('patch upgrades: contracts unchanged, release notes of each target, one pinned clusterctl upgrade apply', () => {
    const plan = planProviderUpgrade(INSTALLED, { core: 'v1.14.1', 'talos-cp': 'v0.5.14' });
    expect(plan.blockers).toEqual([]);
    expect(plan.upToDate).toBe(false);
    expect(
      plan.steps.map((s) => [s.key, s.current, s.target, s.change, s.currentContract, s.targetContract]),
    ).toEqual([
      ['core', 'v1.14.0', 'v1.14.1', 'upgrade', 'v1beta2', 'v1beta2'],
      ['talos-bootstrap', 'v0.6.12', 'v0.6.12', 'unchanged', 'v1beta1', 'v1beta1'],
      ['talos-cp', 'v0.5.13', 'v0.5.14', 'upgrade', 'v1beta1', 'v1beta1'],
      ['proxmox', 'v0.9.0', 'v0.9.0', 'unchanged', 'v1beta2', 'v1beta2'],
      ['ipam', 'v1.1.0', 'v1.1.0', 'unchanged', 'v1beta2', 'v1beta2'],
    ]);
    expect(plan.steps[0]!.releaseNotes).toEqual([
      'https://github.com/kubernetes-sigs/cluster-api/releases/tag/v1.14.1',
    ]);
    expect(plan.steps[2]!.releaseNotes).toEqual([
      'https://github.com/siderolabs/cluster-api-control-plane-provider-talos/releases/tag/v0.5.14',
    ]);
    expect(plan.steps[1]!.releaseNotes).toEqual([]);
    expect(upgradeApplyArgs(plan, { kubeconfig: 'K', config: 'C', timeoutSeconds: 600 }).join(' ')).toBe(
      'upgrade apply --kubeconfig K --config C --core cluster-api:v1.14.1 --control-plane talos:v0.5.14 --wait-providers --wait-provider-timeout 600',
    );
  });

  it('exact per-provider flags for every type, in clusterctl order', () => {
    const plan = planProviderUpgrade(INSTALLED, {
      ipam: 'v1.1.1',
      proxmox: 'v0.9.1',
      'talos-cp': 'v0.5.14',
      'talos-bootstrap': 'v0.6.13',
      core: 'v1.15.0',
    });
    expect(plan.blockers).toEqual([]);
    expect(upgradeApplyArgs(plan, { kubeconfig: 'K', config: 'C', timeoutSeconds: 60 }).slice(6, 16)).toEqual(
      [
        '--core',
        'cluster-api:v1.15.0',
        '--bootstrap',
        'talos:v0.6.13',
        '--control-plane',
        'talos:v0.5.14',
        '--infrastructure',
        'proxmox:v0.9.1',
        '--ipam',
        'in-cluster:v1.1.1',
      ],
    );
  });

  it('nothing to change: up to date, no command', () => {
    const plan = planProviderUpgrade(INSTALLED, {});
    expect(plan).toMatchObject({ upToDate: true, blockers: [] });
    expect(renderUpgradePlan(plan, ['x'])).toContain('every provider is at its target: nothing to do');
  });

  it('blocks a downgrade, an unknown provider, a release series without a known contract, a provider asked for but absent', () => {
    const plan = planProviderUpgrade(
      [
        ...INSTALLED,
        { type: 'InfrastructureProvider', providerName: 'aws', version: 'v2.8.0', namespace: 'capa-system' },
      ],
      { core: 'v1.13.5', 'talos-bootstrap': 'v0.8.0', vsphere: 'v1.16.1' },
    );
    expect(kinds(plan.blockers).sort()).toEqual(
      [
        'downgrade core',
        'not-installed vsphere',
        'unknown-contract talos-bootstrap',
        'unknown-provider',
      ].sort(),
    );
    const down = plan.blockers.find((b) => b.kind === 'downgrade')!;
    expect(describeBlocker(down).message).toBe(
      'core would go from v1.14.0 down to v1.13.5: clusterctl upgrade does not downgrade, and the objects stored at the newer API stay there',
    );
  });

  it('blocks a contract jump the others do not support: core v1.10 (v1beta1) under CAPMOX v0.9 (v1beta2)', () => {
    const old = INSTALLED.map((p) => (p.type === 'CoreProvider' ? { ...p, version: 'v1.10.4' } : p));
    const plan = planProviderUpgrade(old, { core: 'v1.10.9' });
    expect(kinds(plan.blockers)).toEqual(['contract proxmox', 'contract ipam']);
    expect(describeBlocker(plan.blockers[0]!)).toEqual({
      message:
        'proxmox v0.9.0 declares the v1beta2 contract, which core Cluster API v1.10.9 (v1beta1) does not accept',
      fix: 'upgrade core to a release of the v1beta2 contract (v1.11 or newer) in the same step',
    });
    // In one step with core on v1beta2, the same providers pass.
    expect(planProviderUpgrade(old, { core: 'v1.11.3' }).blockers).toEqual([]);
  });

  it('core v1.16 (v1beta1 dropped, no contract ferry has a record of) is blocked', () => {
    expect(kinds(planProviderUpgrade(INSTALLED, { core: 'v1.16.0' }).blockers)).toEqual([
      'unknown-contract core',
    ]);
  });

  it('blocks the control-plane provider line before the etcd-leaving fix', () => {
    const old = INSTALLED.map((p) => (p.type === 'ControlPlaneProvider' ? { ...p, version: 'v0.5.10' } : p));
    const plan = planProviderUpgrade(old, { 'talos-cp': 'v0.5.12' });
    expect(kinds(plan.blockers)).toEqual(['unsafe-line talos-cp']);
    const d = describeBlocker(plan.blockers[0]!);
    expect(d.message).toMatch(/^talos-cp v0\.5\.12 is older than v0\.5\.13: .*etcd-leaving.*issues\/237\)$/);
    expect(d.fix).toBe('target talos-cp v0.5.13 or newer');
    expect(planProviderUpgrade(old, { 'talos-cp': 'v0.5.13' }).blockers).toEqual([]);
  });

  it('--to: KEY=VERSION pairs; a bad key, version or repeat is named', () => {
    expect(parseTargets('core=v1.14.1, talos-cp=v0.5.14')).toEqual({
      kind: 'ok',
      targets: { core: 'v1.14.1', 'talos-cp': 'v0.5.14' },
    });
    expect(parseTargets('capi=v1.14.1')).toEqual({
      kind: 'bad',
      problem: '"capi" names no provider (one of core, talos-bootstrap, talos-cp, proxmox, vsphere, ipam)',
    });
    expect(parseTargets('core=1.14')).toMatchObject({
      kind: 'bad',
      problem: expect.stringMatching(/not a release tag/),
    });
    expect(parseTargets('core=v1.14.1,core=v1.14.2')).toEqual({
      kind: 'bad',
      problem: 'core is given twice',
    });
    expect(parseTargets('core')).toEqual({ kind: 'bad', problem: '"core" is not KEY=VERSION' });
  });

  it('renders a table with contracts and notes, then the blockers with their fixes', () => {
    const plan = planProviderUpgrade(INSTALLED, { core: 'v1.15.0', proxmox: 'v0.8.2' });
    const text = renderUpgradePlan(plan, []);
    expect(text.split('\n')[0]).toMatch(/^PROVIDER +TYPE +CURRENT +TARGET +CHANGE +CONTRACT +RELEASE NOTES$/);
    expect(text).toMatch(
      /^core +CoreProvider +v1\.14\.0 +v1\.15\.0 +upgrade +v1beta2 +https:\/\/github\.com\/kubernetes-sigs\/cluster-api\/releases\/tag\/v1\.15\.0$/m,
    );
    expect(text).toContain('blocked (1):\n  - proxmox would go from v0.9.0 down to v0.8.2');
    expect(text).toContain('    fix: keep proxmox at v0.9.0 or newer');
  });
});
