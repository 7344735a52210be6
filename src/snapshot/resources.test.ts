import { describe, expect, it } from 'vitest';
import type { KubeObject } from './model.js';
import { classifyObjects, type SkipReason, stripIngestNoise } from './resources.js';

const obj = (
  kind: string,
  name: string,
  extra: Record<string, unknown> = {},
  namespace?: string,
): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  ...extra,
});

describe('stripIngestNoise', () => {
  it('drops managedFields and the last-applied annotation, keeps other annotations, shares nested data', () => {
    const spec = { replicas: 3 };
    const o: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'web',
        managedFields: [{ manager: 'kubectl' }],
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', keep: 'me' },
      },
      spec,
    };
    const s = stripIngestNoise(o);
    expect(s.metadata).toEqual({ name: 'web', annotations: { keep: 'me' } });
    expect(s.spec).toBe(spec);
    // The input is not modified.
    expect(o.metadata.managedFields).toBeDefined();
  });

  it('removes an annotations map left empty, and returns clean objects as they are', () => {
    const o = obj('Pod', 'p', {}, 'ns');
    o.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    expect(stripIngestNoise(o).metadata).toEqual({ name: 'p', namespace: 'ns' });
    const clean = obj('Pod', 'q');
    expect(stripIngestNoise(clean)).toBe(clean);
  });
});

describe('classifyObjects', () => {
  it('routes by kind, expands Lists and typed lists, and filters ConfigMaps, bindings and Secrets', () => {
    const skipped: [string, SkipReason][] = [];
    const r = classifyObjects(
      [
        obj('Node', 'n1', { metadata: { name: 'n1', managedFields: [{}] } }),
        {
          apiVersion: 'v1',
          kind: 'PodList',
          metadata: { name: '' },
          items: [{ metadata: { name: 'p1', namespace: 'a' } }, { metadata: { name: 'p2', namespace: 'a' } }],
        } as unknown as KubeObject,
        {
          apiVersion: 'v1',
          kind: 'List',
          metadata: { name: '' },
          items: [obj('Service', 's1', {}, 'a'), obj('Namespace', 'a')],
        } as unknown as KubeObject,
        obj('ConfigMap', 'kubeadm-config', {}, 'kube-system'),
        obj('ConfigMap', 'kubelet-config-1.23', {}, 'kube-system'),
        obj('ConfigMap', 'cluster-info', {}, 'kube-public'),
        obj('ConfigMap', 'app', { data: { password: 'x' } }, 'shop'),
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'anon' },
          subjects: [{ kind: 'User', name: 'system:anonymous' }],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'admins', namespace: 'x' },
          subjects: [{ kind: 'Group', name: 'system:masters' }],
        },
        obj('Secret', 'db', { type: 'Opaque', data: { password: 'aHVudGVyMg==' } }, 'shop'),
        obj('Widget', 'w'),
      ],
      undefined,
      (o, reason) => skipped.push([(o as KubeObject).metadata.name, reason]),
    );
    expect(r.nodes).toEqual([{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }]);
    expect(r.pods.map((p) => [p.kind, p.apiVersion, p.metadata.name])).toEqual([
      ['Pod', 'v1', 'p1'],
      ['Pod', 'v1', 'p2'],
    ]);
    expect(r.services.map((s) => s.metadata.name)).toEqual(['s1']);
    expect(r.namespaces.map((s) => s.metadata.name)).toEqual(['a']);
    expect(r.configmaps.map((c) => c.metadata.name)).toEqual([
      'kubeadm-config',
      'kubelet-config-1.23',
      'cluster-info',
    ]);
    expect(r.anonymousBindings.map((b) => b.metadata.name)).toEqual(['anon']);
    expect(r.bootstrapTokens).toEqual([]);
    expect(skipped).toEqual([
      ['app', 'unused-configmap'],
      ['admins', 'no-anonymous-subject'],
      ['db', 'secret'],
      ['w', 'unknown-kind'],
    ]);
    expect(JSON.stringify(r)).not.toContain('aHVudGVyMg');
  });

  it('turns bootstrap-token Secrets into tokens without the secret half', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const r = classifyObjects([
      obj(
        'Secret',
        'bootstrap-token-abcdef',
        {
          type: 'bootstrap.kubernetes.io/token',
          data: {
            'token-id': b64('abcdef'),
            'token-secret': b64('0123456789abcdef'),
            expiration: b64('2030-01-01T00:00:00Z'),
            'usage-bootstrap-signing': b64('true'),
            'usage-bootstrap-authentication': b64('true'),
            'auth-extra-groups': b64(
              'system:bootstrappers:kubeadm:default-node-token, system:bootstrappers:x',
            ),
            description: b64('made by kubeadm'),
          },
        },
        'kube-system',
      ),
      obj(
        'Secret',
        'bootstrap-token-zzzzzz',
        { type: 'bootstrap.kubernetes.io/token', stringData: { 'token-secret': 'ffffffffffffffff' } },
        'kube-system',
      ),
    ]);
    expect(r.bootstrapTokens).toEqual([
      {
        id: 'abcdef',
        expiration: '2030-01-01T00:00:00Z',
        usages: ['authentication', 'signing'],
        authExtraGroups: ['system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:x'],
        description: 'made by kubeadm',
        source: {
          kind: 'object',
          objectKind: 'Secret',
          namespace: 'kube-system',
          name: 'bootstrap-token-abcdef',
        },
      },
      {
        id: 'zzzzzz',
        usages: [],
        authExtraGroups: [],
        source: {
          kind: 'object',
          objectKind: 'Secret',
          namespace: 'kube-system',
          name: 'bootstrap-token-zzzzzz',
        },
      },
    ]);
    const all = JSON.stringify(r);
    expect(all).not.toContain('0123456789abcdef');
    expect(all).not.toContain(b64('0123456789abcdef'));
    expect(all).not.toContain('ffffffffffffffff');
  });

  it('appends to an existing Resources and stays linear on a large input', () => {
    const first = classifyObjects([obj('Pod', 'a', {}, 'x')]);
    const many = Array.from({ length: 100_000 }, (_, i) => obj('Pod', `p${i}`, {}, 'x'));
    const r = classifyObjects(many, first);
    expect(r).toBe(first);
    expect(r.pods.length).toBe(100_001);
    expect(r.pods[100_000]).toBe(many[99_999]);
  });
});

describe('classifyObjects: GitOps owners', () => {
  it("keeps Argo CD and Flux objects by API group, without Helm values; kustomize's own Kustomization is not one", () => {
    const skipped: string[] = [];
    const r = classifyObjects(
      [
        {
          apiVersion: 'argoproj.io/v1alpha1',
          kind: 'Application',
          metadata: { name: 'cilium', namespace: 'argocd' },
          spec: {
            source: {
              repoURL: 'https://charts.example.com',
              chart: 'cilium',
              helm: { values: 'hubble:\n  tls: {key: s3cr3t}' },
            },
            syncPolicy: { automated: { selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
          },
        },
        {
          apiVersion: 'helm.toolkit.fluxcd.io/v2',
          kind: 'HelmRelease',
          metadata: { name: 'cni', namespace: 'flux-system' },
          spec: {
            releaseName: 'cilium',
            values: { password: 's3cr3t' },
            chart: { spec: { chart: 'cilium' } },
          },
        },
        { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', metadata: { name: 'k' } },
      ],
      undefined,
      (o, why) => skipped.push(`${(o as KubeObject).kind}: ${why}`),
    );
    expect(r.gitops.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Application/cilium',
      'HelmRelease/cni',
    ]);
    expect(r.gitops[0]!.spec).toEqual({
      source: { repoURL: 'https://charts.example.com', chart: 'cilium' },
      syncPolicy: { automated: { selfHeal: true } },
    });
    expect(r.gitops[1]!.spec).toEqual({ releaseName: 'cilium', chart: { spec: { chart: 'cilium' } } });
    expect(JSON.stringify(r)).not.toContain('s3cr3t');
    expect(skipped).toEqual(['Kustomization: unknown-kind']);
  });
});
