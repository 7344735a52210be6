import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeCluster,
  RECORDED_TOKEN_SECRET,
  startFakeCluster,
} from '../../test/support/fake-cluster.js';
import type { EtcdReader } from '../adapters/etcd/port.js';
import { KubeApiError, type KubeReader } from '../adapters/kube/port.js';
import { createKubeReader } from '../adapters/kube/reader.js';
import { FerryError } from '../errors.js';
import { bootstrapTokenSecretWithoutSecret, collectSnapshot } from './collect.js';
import type { Snapshot } from './model.js';

let cluster: FakeCluster;
let snap: Snapshot;
const progress: string[] = [];

beforeAll(async () => {
  cluster = await startFakeCluster();
  snap = await collectSnapshot({
    kube: createKubeReader({ kubeconfig: cluster.kubeconfig }),
    now: new Date('2025-06-01T12:00:00Z'),
    progress: (l) => progress.push(l),
  });
});
afterAll(async () => cluster?.close());

const names = (objs: { metadata: { name: string } }[]) => objs.map((o) => o.metadata.name);

describe('collectSnapshot against recorded API responses', () => {
  it('holds every collected kind, with apiVersion/kind on list items', () => {
    const r = snap.resources;
    expect(names(r.nodes)).toEqual(['cp1', 'cp2', 'w1']);
    expect(names(r.namespaces)).toContain('web');
    expect(r.pods).toHaveLength(8);
    expect(new Set(names(r.pods)).size).toBe(8); // the 410 restart did not duplicate page 1
    expect(names(r.deployments)).toEqual(['coredns', 'web']);
    expect(names(r.replicasets)).toEqual(['coredns-668d6bf9bc', 'web-7d9f8c6b5d']);
    expect(names(r.daemonsets)).toEqual(['cilium']);
    expect(r.daemonsets[0]).toMatchObject({ apiVersion: 'apps/v1', kind: 'DaemonSet' });
    expect(names(r.poddisruptionbudgets)).toEqual(['web']);
    expect(names(r.services)).toEqual(['kubernetes', 'kube-dns']);
    expect(names(r.endpointslices)).toEqual(['kubernetes']);
    expect(names(r.csidrivers)).toEqual(['nfs.csi.k8s.io']);
    expect(names(r.storageclasses)).toEqual(['nfs-csi']);
    expect(r.statefulsets).toEqual([]);
    expect(names(r.configmaps).sort()).toEqual([
      'cluster-info',
      'coredns',
      'kube-proxy',
      'kubeadm-config',
      'kubelet-config',
    ]);
  });

  it('keeps pod owner references', () => {
    const web = snap.resources.pods.find((p) => p.metadata.name.startsWith('web-'));
    expect(web?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: 'web-7d9f8c6b5d' });
  });

  it('drops managedFields and the last-applied annotation at ingest', () => {
    const json = JSON.stringify(snap);
    expect(json).not.toContain('managedFields');
    expect(json).not.toContain('last-applied-configuration');
  });

  it('keeps only bindings with anonymous subjects', () => {
    expect(snap.resources.anonymousBindings.map((b) => `${b.kind} ${b.metadata.name}`).sort()).toEqual([
      'ClusterRoleBinding healthz-anonymous',
      'ClusterRoleBinding system:public-info-viewer',
      'RoleBinding kubeadm:bootstrap-signer-clusterinfo',
    ]);
  });

  it('keeps the bootstrap token id, expiry, usages and groups, never its secret', () => {
    expect(snap.resources.bootstrapTokens).toEqual([
      expect.objectContaining({
        id: 'abcdef',
        expiration: '2030-01-01T00:00:00Z',
        usages: ['authentication', 'signing'],
        authExtraGroups: ['system:bootstrappers:kubeadm:default-node-token'],
      }),
    ]);
    const json = JSON.stringify(snap);
    expect(json).not.toContain(RECORDED_TOKEN_SECRET);
    expect(json).not.toContain(Buffer.from(RECORDED_TOKEN_SECRET).toString('base64'));
  });

  it('parses the control-plane mirror pods into static pods with flags', () => {
    expect(snap.staticPods.map((p) => `${p.component}@${p.node}`).sort()).toEqual([
      'etcd@cp1',
      'kube-apiserver@cp1',
      'kube-apiserver@cp2',
      'kube-controller-manager@cp1',
      'kube-scheduler@cp1',
    ]);
    const api = snap.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === 'cp1')!;
    expect(api.flags).toContainEqual({
      name: 'oidc-issuer-url',
      value: 'https://sso.example.com/realms/k8s',
    });
    expect(api.flags).toContainEqual({ name: 'service-cluster-ip-range', value: '10.96.0.0/12' });
    expect(api.source).toEqual({
      kind: 'object',
      objectKind: 'Pod',
      namespace: 'kube-system',
      name: 'kube-apiserver-cp1',
    });
    expect(api.hostPathVolumes.map((v) => v.path)).toContain('/etc/kubernetes/pki');
  });

  it('reads kubeadm, kubelet and kube-proxy configuration from their ConfigMaps', () => {
    const cc = snap.kubeadm.clusterConfiguration!;
    expect(cc.sourceApiVersion).toBe('kubeadm.k8s.io/v1beta4');
    expect(cc.networking).toEqual({
      podSubnet: '10.244.0.0/16',
      serviceSubnet: '10.96.0.0/12',
      dnsDomain: 'cluster.local',
    });
    expect(cc.controlPlaneEndpoint).toBe('10.0.0.10:6443');
    expect(cc.source).toMatchObject({ kind: 'object', objectKind: 'ConfigMap', name: 'kubeadm-config' });
    expect(snap.kubelet?.spec['clusterDNS']).toEqual(['10.96.0.10']);
    expect(snap.kubeProxy?.kind).toBe('KubeProxyConfiguration');
  });

  it('inventories the served certificate of the endpoint and of each control plane', () => {
    const byAddress = new Map(snap.servedCertificates.map((c) => [`${c.role} ${c.address}`, c]));
    const endpoint = byAddress.get(`endpoint 127.0.0.1:${cluster.api.port}`)!;
    expect(endpoint.certificate?.fingerprintSha256).toBe(
      new X509Certificate(cluster.endpointCert.certPem).fingerprint256.replace(/:/g, '').toLowerCase(),
    );
    expect(endpoint.certificate?.ipAddresses).toContain('127.0.0.1');

    const cp1 = byAddress.get(`control-plane 127.0.0.1:${cluster.cp1Port}`)!;
    expect(cp1.node).toBe('cp1');
    expect(cp1.certificate?.dnsNames).toContain('cp1');
    expect(cp1.certificate?.ipAddresses).not.toContain('127.0.0.1');

    // cp2's apiserver (advertise address from its flags) does not answer: recorded, not fatal
    const cp2 = byAddress.get(`control-plane 127.0.0.1:${cluster.cp2Port}`)!;
    expect(cp2.node).toBe('cp2');
    expect(cp2.certificate).toBeUndefined();
    expect(cp2.error).toMatch(/ECONNREFUSED/);
    expect(snap.manifest.warnings.some((w) => w.includes(`127.0.0.1:${cluster.cp2Port}`))).toBe(true);
  });

  it('writes a manifest naming the live source and the parts present', () => {
    expect(snap.manifest).toMatchObject({
      createdAt: '2025-06-01T12:00:00.000Z',
      source: { kind: 'live', server: cluster.api.url, context: 'kubernetes-admin@kubernetes' },
    });
    expect([...snap.manifest.parts].sort()).toEqual([
      'flags',
      'kube-proxy',
      'kubeadm',
      'kubelet',
      'resources',
      'served-certs',
    ]);
    expect(progress.some((l) => l.startsWith('listing pods'))).toBe(true);
  });

  it('asks for bootstrap tokens with a field selector, in kube-system only', () => {
    expect(cluster.api.requests).toContain(
      '/api/v1/namespaces/kube-system/secrets?limit=500&fieldSelector=type%3Dbootstrap.kubernetes.io%2Ftoken',
    );
    expect(cluster.api.requests.some((r) => r.startsWith('/api/v1/secrets'))).toBe(false);
  });
});

describe('collectSnapshot decisions (fake ports)', () => {
  const emptyKube = (over: Partial<KubeReader> = {}): KubeReader => ({
    server: 'https://10.0.0.10:6443',
    context: 'admin',
    version: async () => ({ gitVersion: 'v1.23.17', major: '1', minor: '23' }),
    list: async () => [],
    get: async () => undefined,
    ...over,
  });
  const noTls = async () => {
    throw new Error('no TLS in this test');
  };

  it('turns 404 and 403 lists into warnings, and 401 into bad input', async () => {
    const denied = (status: number) => async (kind: string) => {
      if (kind === 'cronjobs' || kind === 'secrets') {
        throw new KubeApiError({
          status: kind === 'cronjobs' ? 404 : status,
          message: 'x',
          path: `/${kind}`,
          address: 'a:1',
        });
      }
      return [];
    };
    const s = await collectSnapshot({ kube: emptyKube({ list: denied(403) }), fetchPeerCertificate: noTls });
    expect(s.manifest.warnings.filter((w) => /HTTP 40[34]/.test(w))).toEqual([
      expect.stringContaining('batch/v1 cronjobs: not served'),
      expect.stringContaining('v1 secrets in kube-system: forbidden'),
    ]);
    const err = await collectSnapshot({
      kube: emptyKube({ list: denied(401) }),
      fetchPeerCertificate: noTls,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).kind).toBe('input');
    expect((err as FerryError).message).toMatch(/rejected the credentials of context "admin"/);
  });

  it('falls back to the versioned kubelet-config ConfigMap of kubeadm before 1.24', async () => {
    const asked: string[] = [];
    const kube = emptyKube({
      get: async (_kind, ns, name) => {
        asked.push(`${ns}/${name}`);
        if (name !== 'kubelet-config-1.23') return undefined;
        return {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: 'kube-system' },
          data: {
            kubelet:
              'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDomain: cluster.local\n',
          },
        };
      },
    });
    const s = await collectSnapshot({ kube, fetchPeerCertificate: noTls });
    expect(asked).toContain('kube-system/kubelet-config-1.23');
    expect(s.kubelet?.source).toMatchObject({ name: 'kubelet-config-1.23', field: 'data.kubelet' });
  });

  it('merges etcd state and its warnings', async () => {
    const etcd = {
      readState: async () => ({
        state: {
          source: { kind: 'etcd' as const, endpoint: 'https://10.0.0.11:2379' },
          members: [],
          endpoints: [],
          alarms: [],
        },
        warnings: ['etcd alarm list failed: x'],
      }),
    } as unknown as EtcdReader;
    const s = await collectSnapshot({ kube: emptyKube(), etcd, fetchPeerCertificate: noTls });
    expect(s.manifest.parts).toContain('etcd');
    expect(s.etcd?.source).toEqual({ kind: 'etcd', endpoint: 'https://10.0.0.11:2379' });
    expect(s.manifest.warnings).toContain('etcd alarm list failed: x');
  });

  it('strips a bootstrap-token Secret to the keys that carry no secret', () => {
    const out = bootstrapTokenSecretWithoutSecret({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'bootstrap.kubernetes.io/token',
      metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
      data: {
        'token-id': 'YWJjZGVm',
        'token-secret': 'c2VjcmV0',
        'usage-bootstrap-signing': 'dHJ1ZQ==',
        extra: 'eA==',
      },
      stringData: { 'token-secret': 'secret' },
    });
    expect(out?.data).toEqual({ 'token-id': 'YWJjZGVm', 'usage-bootstrap-signing': 'dHJ1ZQ==' });
    expect(out?.stringData).toBeUndefined();
    expect(
      bootstrapTokenSecretWithoutSecret({
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: 'x' },
      }),
    ).toBeUndefined();
  });
});
