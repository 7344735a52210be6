import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeReader } from '../adapters/kube/reader.js';
import { type FakeCluster, startFakeCluster } from '../adapters/kube/testing-fake-cluster.js';
import { FerryError } from '../errors.js';
import type { EtcdReader } from '../ports/etcd.js';
import { KubeApiError, type KubeReader } from '../ports/kube.js';
import { bootstrapTokenSecretWithoutSecret, type CollectEvent, collectSnapshot } from './collect.js';
import type { Snapshot } from './model.js';

let cluster: FakeCluster;
let snap: Snapshot;
const progress: CollectEvent[] = [];

beforeAll(async () => {
  cluster = await startFakeCluster();
  snap = await collectSnapshot({
    kube: createKubeReader({ kubeconfig: cluster.kubeconfig }),
    now: new Date('2025-06-01T12:00:00Z'),
    progress: (l) => progress.push(l),
  });
});
afterAll(async () => cluster?.close());

describe('collectSnapshot against recorded API responses', () => {
  it('drops managedFields and the last-applied annotation at ingest', () => {
    const json = JSON.stringify(snap);
    expect(json).not.toContain('managedFields');
    expect(json).not.toContain('last-applied-configuration');
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
      'server-version',
    ]);
    expect(progress).toContainEqual(expect.objectContaining({ kind: 'list-done', list: 'pods', objects: 8 }));
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

  it('records a refused or unserved list as not observed, with what to grant, never as empty', async () => {
    const refuse = (status: number, resource: string) =>
      new KubeApiError({
        status,
        reason: status === 403 ? 'Forbidden' : 'NotFound',
        message: `${resource} is forbidden: User "u" cannot list resource "${resource}"`,
        path: `/${resource}`,
        address: 'a:1',
      });
    const s = await collectSnapshot({
      kube: emptyKube({
        list: async (kind) => {
          if (kind === 'nodes' || kind === 'rolebindings') throw refuse(403, kind);
          if (kind === 'cronjobs') throw refuse(404, kind);
          return [];
        },
      }),
      fetchPeerCertificate: noTls,
    });
    expect(s.manifest.unobserved).toEqual([
      {
        input: 'nodes',
        reason: 'forbidden',
        verb: 'list',
        group: '',
        resource: 'nodes',
        message: 'nodes is forbidden: User "u" cannot list resource "nodes"',
      },
      expect.objectContaining({
        input: 'cronjobs',
        reason: 'not-served',
        group: 'batch',
        resource: 'cronjobs',
      }),
      expect.objectContaining({
        input: 'anonymousBindings',
        reason: 'forbidden',
        group: 'rbac.authorization.k8s.io',
        resource: 'rolebindings',
      }),
    ]);
    expect(s.manifest.warnings).toContain(
      'v1 nodes: forbidden for this user (HTTP 403): not observed, the snapshot does not know what it holds (grant list, see `ferry snapshot --print-clusterrole`)',
    );
  });

  it('reads a GitOps CRD that is not served as none (no controller), a refused one as not observed', async () => {
    const notFound = (resource: string) =>
      new KubeApiError({
        status: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
        path: `/${resource}`,
        address: 'a:1',
      });
    const events: CollectEvent[] = [];
    const absent = await collectSnapshot({
      kube: emptyKube({
        list: async (kind, opts) => {
          if (kind === 'argocd-applications' || kind === 'flux-helmreleases') throw notFound(kind);
          if (kind === 'flux-kustomizations')
            // The reader hands each item to `map` as its page arrives.
            return [
              {
                apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
                kind: 'Kustomization',
                metadata: { name: 'infra', namespace: 'flux-system' },
                spec: { interval: '10m', path: './infra', postBuild: { substitute: { token: 'hunter2' } } },
              },
            ].flatMap((o) => {
              opts?.map?.(o);
              return [];
            });
          return [];
        },
      }),
      fetchPeerCertificate: noTls,
      progress: (e) => events.push(e),
    });
    expect(absent.manifest.unobserved ?? []).toEqual([]);
    expect(events.filter((e) => e.kind === 'list-absent')).toEqual([
      { kind: 'list-absent', list: 'applications.argoproj.io' },
      { kind: 'list-absent', list: 'helmreleases.helm.toolkit.fluxcd.io' },
    ]);
    expect(absent.resources.gitops).toEqual([
      {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'infra', namespace: 'flux-system' },
        spec: { interval: '10m', path: './infra' },
      },
    ]);
    expect(JSON.stringify(absent)).not.toContain('hunter2');

    const refused = await collectSnapshot({
      kube: emptyKube({
        list: async (kind) => {
          if (kind === 'argocd-applications')
            throw new KubeApiError({
              status: 403,
              reason: 'Forbidden',
              message: 'applications.argoproj.io is forbidden',
              path: '/apps',
              address: 'a:1',
            });
          return [];
        },
      }),
      fetchPeerCertificate: noTls,
    });
    expect(refused.manifest.unobserved).toEqual([
      expect.objectContaining({
        input: 'gitops',
        reason: 'forbidden',
        group: 'argoproj.io',
        resource: 'applications',
      }),
    ]);
  });

  it('a forbidden kubeadm-config is one warning saying so, not also "not found"', async () => {
    const s = await collectSnapshot({
      kube: emptyKube({
        get: async (_kind, ns, name) => {
          if (name === 'kubeadm-config')
            throw new KubeApiError({
              status: 403,
              reason: 'Forbidden',
              message: `configmaps "${name}" is forbidden`,
              path: `/api/v1/namespaces/${ns}/configmaps/${name}`,
              address: 'a:1',
            });
          return undefined;
        },
      }),
      fetchPeerCertificate: noTls,
    });
    const about = s.manifest.warnings.filter((w) => w.includes('kubeadm-config'));
    expect(about).toEqual([
      'ConfigMap kube-system/kubeadm-config: forbidden for this user (HTTP 403): not observed, the snapshot does not know what it holds (grant get, see `ferry snapshot --print-clusterrole`)',
    ]);
    expect(s.manifest.unobserved).toEqual([
      {
        input: 'configmap kube-system/kubeadm-config',
        reason: 'forbidden',
        verb: 'get',
        group: '',
        resource: 'configmaps',
        namespace: 'kube-system',
        name: 'kubeadm-config',
        message: 'configmaps "kubeadm-config" is forbidden',
      },
    ]);
    // Absent (404) stays an answer: the not-found text, and nothing unobserved.
    const absent = await collectSnapshot({ kube: emptyKube(), fetchPeerCertificate: noTls });
    expect(absent.manifest.unobserved).toEqual([]);
    expect(absent.manifest.warnings.filter((w) => w.includes('kubeadm-config'))).toEqual([
      expect.stringContaining('kubeadm-config not found'),
    ]);
  });

  it('checks the values ferry takes from live objects too: a cilium-config pool that is no CIDR', async () => {
    const kube = emptyKube({
      get: async (_kind, ns, name) =>
        ns === 'kube-system' && name === 'cilium-config'
          ? {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, namespace: ns },
              data: { 'cluster-pool-ipv4-cidr': '10.0.0.0/8 garbage' },
            }
          : undefined,
    });
    const err = await collectSnapshot({ kube, fetchPeerCertificate: noTls }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).exitCode).toBe(2);
    expect((err as FerryError).location).toEqual({
      object: 'ConfigMap kube-system/cilium-config',
      field: 'data.cluster-pool-ipv4-cidr',
    });
    expect((err as FerryError).message).toBe(
      '"10.0.0.0/8 garbage" is not a CIDR list: "garbage" is not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)',
    );
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
