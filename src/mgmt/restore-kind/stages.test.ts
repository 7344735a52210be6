import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import type { ProviderEntry } from '../model.js';
import { buildRestoreStages, pinsFromManifest, restorePaths } from './stages.js';

const p = (type: string, providerName: string, version: string): ProviderEntry => ({
  namespace: 'ns',
  name: `${type}-${providerName}`,
  providerName,
  type,
  version,
});

describe('restore into kind: provider pins from the backup manifest', () => {
  it('pins every recorded provider at its recorded version, core first', () => {
    const pins = pinsFromManifest(
      [p('InfrastructureProvider', 'vsphere', 'v1.16.1'), p('CoreProvider', 'cluster-api', 'v1.13.2')],
      'backup',
    );
    expect(pins.map((x) => `${x.flag} ${x.name}:${x.version}`)).toEqual([
      '--core cluster-api:v1.13.2',
      '--infrastructure vsphere:v1.16.1',
    ]);
    expect(pins[1]?.url).toBe(
      'https://github.com/kubernetes-sigs/cluster-api-provider-vsphere/releases/v1.16.1/infrastructure-components.yaml',
    );
    const stages = buildRestoreStages({
      providers: pins,
      paths: restorePaths('/st'),
      kindName: 'dr',
      source: 's3://b/p version 1',
      providerTimeoutSeconds: 60,
      objects: 3,
    });
    expect(stages.map((s) => s.kind)).toEqual([
      'kind-cluster',
      'clusterctl-config',
      'clusterctl-init',
      'restore',
    ]);
    const config = stages[1]!.kind === 'clusterctl-config' ? stages[1]!.text : '';
    expect(config).toContain('cluster-api/releases/v1.13.2/core-components.yaml');
    expect(config).not.toContain('cert-manager');
  });

  it('refuses a provider it cannot pin, and a backup without a core provider', () => {
    const unknown = () =>
      pinsFromManifest(
        [p('CoreProvider', 'cluster-api', 'v1.14.0'), p('BootstrapProvider', 'kubeadm', 'v1.14.0')],
        'b',
      );
    expect(unknown).toThrow(FerryError);
    expect(unknown).toThrow(/BootstrapProvider kubeadm v1.14.0, which ferry cannot install into kind/);
    expect(() => pinsFromManifest([], 'b')).toThrow(/records no core provider/);
  });
});
