import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrdValidator } from '../../generate/schema/crd.js';
import { parseMgmtConfig } from './config.js';
import { credentialsSecret, managementManifests } from './manifests.js';

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const MINIMAL = readFileSync(join(REPO, 'src/mgmt/tools/fixtures/minimal.yaml'), 'utf8');
const config = (edit: (t: string) => string = (t) => t) => parseMgmtConfig(edit(MINIMAL), 'mgmt.yaml', '/');
type O = { kind: string; metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> };
const at = (o: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);
const byKind = (objs: O[], kind: string) => objs.filter((o) => o.kind === kind);

describe('the management cluster manifests (the CAPI generator, made for a new cluster)', () => {
  it('validate against the CRDs in schemas/capi', () => {
    const v = CrdValidator.fromSchemas();
    expect(managementManifests(config()).flatMap((o) => v.validate(o))).toEqual([]);
  });

  it('3 control planes rolling, not paused, no preflight skips; the guest agent expected; the capi pool', () => {
    const objs = managementManifests(config()) as unknown as O[];
    const [tcp] = byKind(objs, 'TalosControlPlane');
    expect(tcp?.spec['replicas']).toBe(3);
    expect(tcp?.spec['rolloutStrategy']).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } });
    for (const o of objs) expect(o.metadata.annotations).toBeUndefined();
    for (const t of byKind(objs, 'ProxmoxMachineTemplate')) {
      expect(at(t.spec, 'template', 'spec', 'checks')).toEqual({
        skipCloudInitStatus: true,
        skipQemuGuestAgent: false,
      });
      expect(at(t.spec, 'template', 'spec', 'pool')).toBe('capi');
    }
    expect(byKind(objs, 'ProxmoxCluster')[0]?.spec['credentialsRef']).toEqual({
      name: 'kmgt-proxmox-credentials',
      namespace: 'kmgt',
    });
    const patch = String(at(tcp?.spec, 'controlPlaneConfig', 'controlplane', 'strategicPatches', 0));
    expect(patch).toContain('ip: 10.20.0.10');
    expect(patch).toMatch(/cni:\n\s+name: none/);
  });

  it('workers and controlPlanes from mgmt.yaml; without a CCM the kubelet keeps its cloud provider', () => {
    const objs = managementManifests(
      config(
        (t) =>
          t.replace('  name: kmgt\n', '  name: kmgt\n  controlPlanes: 5\n  workers: 2\n') +
          'ccm: {name: none}\n',
      ),
    ) as unknown as O[];
    expect(byKind(objs, 'TalosControlPlane')[0]?.spec['replicas']).toBe(5);
    expect(byKind(objs, 'MachineDeployment')[0]?.spec['replicas']).toBe(2);
    expect(JSON.stringify(objs)).not.toContain('cloud-provider');
  });

  it('the credentials Secret says insecure explicitly (unset means insecure in CAPMOX)', () => {
    const s = credentialsSecret(config(), 'the-secret-value') as { stringData: Record<string, string> };
    expect(s.stringData).toEqual({
      url: 'https://127.0.0.1:8006',
      token: 'capi@pve!capi',
      secret: 'the-secret-value',
      insecure: 'false',
    });
  });
});
