import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { ClusterConfiguration } from '../../snapshot/model.js';
import { parseEncryptionConfigWithKeys } from '../secrets/encryption.js';
import { editClusterConfigurationText, renderClusterConfiguration } from './cluster-config.js';
import { rotationConfigs } from './encryption.js';

const K1 = Buffer.alloc(32, 1).toString('base64');
const K2 = Buffer.alloc(32, 2).toString('base64');

function cfg(providers: string): ReturnType<typeof parseEncryptionConfigWithKeys> {
  return parseEncryptionConfigWithKeys(
    `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [configmaps]
    providers:
      - identity: {}
  - resources: [secrets]
    providers:
${providers}`,
    'enc.yaml',
  );
}

type Providers = Record<string, { keys?: { name: string; secret: string }[] }>[];
const secretsProviders = (text: string): Providers =>
  (parse(text) as { resources: { resources: string[]; providers: Providers }[] }).resources.find((r) =>
    r.resources.includes('secrets'),
  )?.providers ?? [];
const shape = (ps: Providers) =>
  ps.map((p) => `${Object.keys(p)[0]}:${(Object.values(p)[0]?.keys ?? []).map((k) => k.name).join(',')}`);

describe('rotationConfigs', () => {
  it('adds secretbox key2 as a read key, then makes it the writer; other rules untouched', () => {
    const r = rotationConfigs(
      cfg(
        `      - aescbc:\n          keys:\n            - {name: key-2023, secret: ${K1}}\n      - identity: {}\n`,
      ),
    );
    expect(r.reusedKey).toBe(false);
    expect(shape(secretsProviders(r.phase1))).toEqual(['aescbc:key-2023', 'secretbox:key2', 'identity:']);
    expect(shape(secretsProviders(r.phase2))).toEqual(['secretbox:key2', 'aescbc:key-2023', 'identity:']);
    const doc = parse(r.phase1) as { resources: { resources: string[]; providers: unknown[] }[] };
    expect(doc.resources[0]).toEqual({ resources: ['configmaps'], providers: [{ identity: {} }] });
  });

  it('puts key2 into an existing secretbox provider behind its write key', () => {
    const r = rotationConfigs(
      cfg(
        `      - secretbox:\n          keys:\n            - {name: old, secret: ${K1}}\n      - identity: {}\n`,
      ),
    );
    expect(shape(secretsProviders(r.phase1))).toEqual(['secretbox:old,key2', 'identity:']);
    expect(shape(secretsProviders(r.phase2))).toEqual(['secretbox:key2,old', 'identity:']);
  });

  it('reuses the key2 secret already in the file (phase 1 applied earlier) instead of forking the key', () => {
    const r = rotationConfigs(
      cfg(
        `      - aescbc:\n          keys:\n            - {name: key-2023, secret: ${K1}}\n      - secretbox:\n          keys:\n            - {name: key2, secret: ${K2}}\n      - identity: {}\n`,
      ),
    );
    expect(r.reusedKey).toBe(true);
    expect(secretsProviders(r.phase2)[0]?.['secretbox']?.keys).toEqual([{ name: 'key2', secret: K2 }]);
    expect(shape(secretsProviders(r.phase1))).toEqual(['aescbc:key-2023', 'secretbox:key2', 'identity:']);
  });

  it('keeps a kms provider block as it was', () => {
    const r = rotationConfigs(
      cfg(
        `      - kms:\n          apiVersion: v2\n          name: vault\n          endpoint: unix:///run/kms.sock\n      - identity: {}\n`,
      ),
    );
    const p2 = secretsProviders(r.phase2);
    expect(shape(p2)).toEqual(['secretbox:key2', 'kms:', 'identity:']);
    expect(p2[1]).toEqual({ kms: { apiVersion: 'v2', name: 'vault', endpoint: 'unix:///run/kms.sock' } });
  });
});

describe('editClusterConfigurationText', () => {
  it('adds SANs and keeps fields ferry does not model', () => {
    const text = `# comment
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  certSANs:
  - k8s-api.lab.example
certificateValidityPeriod: 8760h0m0s
proxy:
  disabled: true
`;
    const out = editClusterConfigurationText(text, ['k8s-api.lab.example', '127.0.0.1', 'localhost']);
    const v = parse(out ?? '') as Record<string, unknown>;
    expect((v['apiServer'] as { certSANs: string[] }).certSANs).toEqual([
      'k8s-api.lab.example',
      '127.0.0.1',
      'localhost',
    ]);
    expect(v['proxy']).toEqual({ disabled: true });
    expect(v['certificateValidityPeriod']).toBe('8760h0m0s');
  });

  it('creates certSANs when there are none, and picks the ClusterConfiguration out of several documents', () => {
    const text = `apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
apiServer:
  extraArgs:
    authorization-mode: Node,RBAC
`;
    const out = editClusterConfigurationText(text, ['127.0.0.1', 'localhost']) ?? '';
    const docs = parseAllDocuments(out).map((d) => d.toJS());
    expect(docs).toHaveLength(1);
    expect(docs[0].apiServer).toEqual({
      extraArgs: { 'authorization-mode': 'Node,RBAC' },
      certSANs: ['127.0.0.1', 'localhost'],
    });
    expect(editClusterConfigurationText('kind: InitConfiguration\n', ['x'])).toBeUndefined();
  });
});

describe('renderClusterConfiguration (no text available)', () => {
  const cc: ClusterConfiguration = {
    sourceApiVersion: 'kubeadm.k8s.io/v1beta3',
    source: { kind: 'file', path: 'kubeadm-config.yaml' },
    clusterName: 'demo',
    featureGates: {},
    networking: { serviceSubnet: '10.96.0.0/12' },
    apiServer: {
      extraArgs: [
        { name: 'service-account-issuer', value: 'a' },
        { name: 'service-account-issuer', value: 'b' },
      ],
      extraVolumes: [],
      certSANs: [],
    },
    controllerManager: { extraArgs: [], extraVolumes: [] },
    scheduler: { extraArgs: [], extraVolumes: [] },
    etcd: { local: { extraArgs: [], serverCertSANs: [], peerCertSANs: [] } },
    dns: {},
    unknownFields: ['proxy'],
  };
  it('writes v1beta3 extraArgs as a map and says what it could not keep', () => {
    const r = renderClusterConfiguration(cc, { certSANs: ['127.0.0.1'] });
    expect(r.apiVersion).toBe('kubeadm.k8s.io/v1beta3');
    expect(r.doc['apiServer']).toEqual({
      certSANs: ['127.0.0.1'],
      extraArgs: { 'service-account-issuer': 'b' },
    });
    expect(r.losses.join('\n')).toMatch(/repeats --service-account-issuer/);
    expect(r.losses.join('\n')).toMatch(/proxy/);
  });
  it('writes v1beta4 extraArgs as a repeatable list', () => {
    const r = renderClusterConfiguration(
      { ...cc, sourceApiVersion: 'kubeadm.k8s.io/v1beta4' },
      { certSANs: [] },
    );
    expect((r.doc['apiServer'] as { extraArgs: unknown }).extraArgs).toEqual([
      { name: 'service-account-issuer', value: 'a' },
      { name: 'service-account-issuer', value: 'b' },
    ]);
  });
});
