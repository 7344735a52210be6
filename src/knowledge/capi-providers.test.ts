import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../mgmt/bootstrap/config.js';
import { compareVersionText } from '../util/semver.js';
import { compatibleContracts, contractOf, PROVIDERS, providerFacts, UNSAFE_LINES } from './capi-providers.js';

describe('the Cluster API provider table', () => {
  it('knows the contract of every release ferry mgmt bootstrap pins by default, and they fit together', () => {
    const d = DEFAULTS.providers;
    const pins: [string, string, string][] = [
      ['CoreProvider', 'cluster-api', d.core],
      ['BootstrapProvider', 'talos', d.bootstrapTalos],
      ['ControlPlaneProvider', 'talos', d.controlPlaneTalos],
      ['InfrastructureProvider', 'proxmox', d.proxmox],
      ['InfrastructureProvider', 'vsphere', d.vsphere],
      ['IPAMProvider', 'in-cluster', d.ipamInCluster],
    ];
    const core = contractOf(providerFacts('CoreProvider', 'cluster-api')!, d.core)!;
    for (const [type, name, version] of pins) {
      const c = contractOf(providerFacts(type, name)!, version);
      expect(c, `${type} ${name} ${version}`).toBeDefined();
      expect(compatibleContracts(core), `${type} ${name}`).toContain(c);
    }
    // No default sits on a line ferry knows to be unsafe.
    for (const u of UNSAFE_LINES) {
      const pin = pins.find(([t, n]) => t === u.type && n === u.name)!;
      expect(compareVersionText(pin[2], u.below)).toBeGreaterThanOrEqual(0);
    }
  });

  it('records the series as each metadata.yaml declares them, and nothing it does not', () => {
    const core = providerFacts('CoreProvider', 'cluster-api')!;
    expect([contractOf(core, 'v1.10.9'), contractOf(core, 'v1.11.0'), contractOf(core, 'v1.16.0')]).toEqual([
      'v1beta1',
      'v1beta2',
      undefined,
    ]);
    expect(contractOf(providerFacts('BootstrapProvider', 'talos')!, 'v0.7.0-alpha.2')).toBe('v1beta2');
    expect(contractOf(providerFacts('InfrastructureProvider', 'proxmox')!, 'v0.7.5')).toBe('v1beta1');
    expect(compatibleContracts('v1beta1')).toEqual(['v1beta1']);
    // Each provider once, with the flag its manager takes.
    expect(new Set(PROVIDERS.map((p) => `${p.type}/${p.name}`)).size).toBe(PROVIDERS.length);
    expect(
      PROVIDERS.filter((p) => p.leaderElectFlag === '--enable-leader-election').map((p) => p.repo),
    ).toEqual([
      'siderolabs/cluster-api-bootstrap-provider-talos',
      'siderolabs/cluster-api-control-plane-provider-talos',
    ]);
  });
});
