import { describe, expect, it } from 'vitest';
import { thrown } from '../testing-errors.js';
import { parseKubeadmDocuments } from './kubeadm.js';
import type { SourceRef } from './model.js';

const mapArgs = (v: string) => `apiVersion: kubeadm.k8s.io/${v}
kind: ClusterConfiguration
clusterName: prod
kubernetesVersion: v1.30.4
controlPlaneEndpoint: api.example.com:6443
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
  dnsDomain: cluster.local
apiServer:
  certSANs: [api.example.com, 10.0.0.10]
  extraArgs:
    oidc-issuer-url: https://sso.example.com
    audit-log-maxage: 30
    anonymous-auth: false
  extraVolumes:
  - name: audit
    hostPath: /var/log/kubernetes
    mountPath: /var/log/kubernetes
    pathType: DirectoryOrCreate
controllerManager:
  extraArgs:
    node-cidr-mask-size: "24"
scheduler: {}
etcd:
  local:
    dataDir: /var/lib/etcd
    extraArgs:
      quota-backend-bytes: "8589934592"
    serverCertSANs: [etcd.local]
featureGates:
  SomeGate: true
`;

const listArgs = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: prod
kubernetesVersion: v1.30.4
controlPlaneEndpoint: api.example.com:6443
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
  dnsDomain: cluster.local
apiServer:
  certSANs: [api.example.com, 10.0.0.10]
  extraArgs:
  - name: oidc-issuer-url
    value: https://sso.example.com
  - name: audit-log-maxage
    value: "30"
  - name: anonymous-auth
    value: "false"
  extraVolumes:
  - name: audit
    hostPath: /var/log/kubernetes
    mountPath: /var/log/kubernetes
    pathType: DirectoryOrCreate
controllerManager:
  extraArgs:
  - {name: node-cidr-mask-size, value: "24"}
scheduler: {}
etcd:
  local:
    dataDir: /var/lib/etcd
    extraArgs:
    - {name: quota-backend-bytes, value: "8589934592"}
    serverCertSANs: [etcd.local]
featureGates:
  SomeGate: true
`;

describe('parseKubeadmDocuments: normalization', () => {
  it('gives v1beta2, v1beta3 and v1beta4 the same shape', () => {
    const shapes = [mapArgs('v1beta2'), mapArgs('v1beta3'), listArgs].map((text) => {
      const cc = parseKubeadmDocuments(text, { file: 'k.yaml' }).kubeadm.clusterConfiguration;
      expect(cc).toBeDefined();
      const { sourceApiVersion: _v, source: _s, ...rest } = cc!;
      return rest;
    });
    expect(shapes[0]).toEqual(shapes[1]);
    expect(shapes[1]).toEqual(shapes[2]);
    expect(shapes[2]).toMatchObject({
      clusterName: 'prod',
      networking: { podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/12', dnsDomain: 'cluster.local' },
      apiServer: {
        certSANs: ['api.example.com', '10.0.0.10'],
        extraArgs: [
          { name: 'oidc-issuer-url', value: 'https://sso.example.com' },
          { name: 'audit-log-maxage', value: '30' },
          { name: 'anonymous-auth', value: 'false' },
        ],
      },
      etcd: {
        local: { extraArgs: [{ name: 'quota-backend-bytes', value: '8589934592' }], peerCertSANs: [] },
      },
      featureGates: { SomeGate: true },
      unknownFields: [],
    });
  });

  it('keeps repeated v1beta4 flags in order and records unmodelled fields', () => {
    const text = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
encryptionAlgorithm: ECDSA-P256
certificateValidityPeriod: 8760h
apiServer:
  extraArgs:
  - {name: service-account-issuer, value: https://a.example}
  - {name: service-account-issuer, value: https://b.example}
  extraEnvs:
  - {name: HTTP_PROXY, value: http://proxy:3128}
dns:
  disabled: true
proxy:
  disabled: true
`;
    const cc = parseKubeadmDocuments(text, { file: 'k.yaml' }).kubeadm.clusterConfiguration!;
    expect(cc.apiServer.extraArgs).toEqual([
      { name: 'service-account-issuer', value: 'https://a.example' },
      { name: 'service-account-issuer', value: 'https://b.example' },
    ]);
    expect(cc.encryptionAlgorithm).toBe('ECDSA-P256');
    expect(cc.dns.disabled).toBe(true);
    expect(cc.unknownFields.sort()).toEqual(['apiServer.extraEnvs', 'certificateValidityPeriod', 'proxy']);
    expect(cc.source).toEqual({ kind: 'file', path: 'k.yaml', line: 1 });
  });

  it('keeps v1beta2-only signals: a kube-dns dns.type and useHyperKubeImage', () => {
    const cc = parseKubeadmDocuments(
      'apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nuseHyperKubeImage: false\ndns:\n  type: kube-dns\n',
      { file: 'k.yaml' },
    ).kubeadm.clusterConfiguration!;
    expect(cc.sourceApiVersion).toBe('kubeadm.k8s.io/v1beta2');
    expect(cc.unknownFields).toEqual(['useHyperKubeImage', 'dns.type=kube-dns']);
  });

  it('reads Init/Join configurations: taints [] vs absent, token ids without secrets', () => {
    const text = `apiVersion: kubeadm.k8s.io/v1beta3
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
- token: not-a-token
localAPIEndpoint: {advertiseAddress: 10.0.0.11, bindPort: 6443}
certificateKey: e6a2eb8581237ab72a4f494f30285ec12a9694d750b9785706a83bfcbbbd2204
nodeRegistration:
  name: cp-1
  taints: []
  kubeletExtraArgs: {node-ip: 10.0.0.11}
---
apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    token: 123456.fedcba9876543210
    apiServerEndpoint: api.example.com:6443
  tlsBootstrapToken: 123456.fedcba9876543210
controlPlane:
  localAPIEndpoint: {advertiseAddress: 10.0.0.12}
nodeRegistration:
  name: cp-2
  ignorePreflightErrors: [NumCPU]
`;
    const r = parseKubeadmDocuments(text, { file: 'k.yaml' });
    const [init, join] = r.kubeadm.nodeConfigurations;
    expect(init).toMatchObject({
      kind: 'InitConfiguration',
      nodeRegistration: {
        name: 'cp-1',
        taints: [],
        kubeletExtraArgs: [{ name: 'node-ip', value: '10.0.0.11' }],
      },
      localAPIEndpoint: { advertiseAddress: '10.0.0.11', bindPort: 6443 },
      bootstrapTokenIds: ['abcdef'],
    });
    expect(join).toMatchObject({
      kind: 'JoinConfiguration',
      nodeRegistration: { name: 'cp-2', ignorePreflightErrors: ['NumCPU'] },
      localAPIEndpoint: { advertiseAddress: '10.0.0.12' },
      bootstrapTokenIds: ['123456'],
      source: { kind: 'file', path: 'k.yaml', line: 13 },
    });
    expect(join?.nodeRegistration.taints).toBeUndefined();
    const all = JSON.stringify(r);
    for (const secret of ['0123456789abcdef', 'fedcba9876543210', 'not-a-token', 'e6a2eb8581237ab7']) {
      expect(all).not.toContain(secret);
    }
  });

  it('returns Kubelet and KubeProxy configurations, and carries an object origin', () => {
    const object: SourceRef = {
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kubelet-config',
      field: 'data.kubelet',
    };
    const r = parseKubeadmDocuments(
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n',
      { object },
    );
    expect(r.kubelet).toEqual({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      source: object,
      spec: { clusterDNS: ['10.96.0.10'] },
    });
    expect(r.kubeProxy?.spec).toEqual({ mode: 'ipvs' });
    expect(r.kubeadm).toEqual({ nodeConfigurations: [] });
  });
});

describe('parseKubeadmDocuments: bad input', () => {
  it('an unknown kubeadm apiVersion says which ones are supported, with the position', () => {
    const e = thrown(() =>
      parseKubeadmDocuments('# c\napiVersion: kubeadm.k8s.io/v1beta1\nkind: ClusterConfiguration\n', {
        file: 'k.yaml',
      }),
    );
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('kubeadm.k8s.io/v1beta1');
    expect(e.message).toContain('kubeadm.k8s.io/v1beta2, kubeadm.k8s.io/v1beta3, kubeadm.k8s.io/v1beta4');
    expect(e.location).toMatchObject({ file: 'k.yaml', line: 2, column: 13, field: 'apiVersion' });
    expect(e.remediation).toContain('kubeadm config migrate');
  });

  it('a wrong kind names the document and lists the expected kinds', () => {
    const e = thrown(() =>
      parseKubeadmDocuments('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n', { file: 'k.yaml' }),
    );
    expect(e.message).toContain('v1 ConfigMap is not a kubeadm configuration document');
    expect(e.location).toMatchObject({ file: 'k.yaml', line: 2, field: 'kind' });
    expect(e.remediation).toContain('ClusterConfiguration');
    const e2 = thrown(() =>
      parseKubeadmDocuments('apiVersion: kubeadm.k8s.io/v1beta3\nkind: Nope\n', { file: 'k.yaml' }),
    );
    expect(e2.message).toContain('unexpected kind Nope');
  });

  it('extraArgs in the wrong form for the apiVersion point at the field', () => {
    const e = thrown(() =>
      parseKubeadmDocuments(
        'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    a: b\n',
        { file: 'k.yaml' },
      ),
    );
    expect(e.message).toContain('expects extraArgs as a list of {name, value}');
    expect(e.location).toMatchObject({ line: 5, column: 5, field: 'apiServer.extraArgs' });
    const e2 = thrown(() =>
      parseKubeadmDocuments(
        'apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nscheduler:\n  extraArgs:\n  - {name: a, value: b}\n',
        { file: 'k.yaml' },
      ),
    );
    expect(e2.message).toContain('expects extraArgs as a map');
    expect(e2.location?.field).toBe('scheduler.extraArgs');
  });

  it('a non-string where a string belongs says to quote it', () => {
    const e = thrown(() =>
      parseKubeadmDocuments(
        'apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: 1.30\n',
        {
          file: 'k.yaml',
        },
      ),
    );
    expect(e.location).toMatchObject({
      line: 3,
      column: 20,
      field: 'kubernetesVersion',
      object: 'ClusterConfiguration',
    });
    expect(e.remediation).toContain('quote');
  });

  it('malformed YAML, missing apiVersion and duplicate ClusterConfigurations are refused', () => {
    const bad = thrown(() =>
      parseKubeadmDocuments(
        'apiVersion: a\nkind: b\nnetworking:\n  podSubnet: 10.0.0.0/8\n serviceSubnet: x\n',
        {
          file: 'k.yaml',
        },
      ),
    );
    expect(bad.message).toBe('malformed YAML: All mapping items must start at the same column');
    expect(bad.location).toMatchObject({ file: 'k.yaml', line: 5, column: 1 });
    const list = thrown(() => parseKubeadmDocuments('- a\n- b\n', { file: 'k.yaml' }));
    expect(list.message).toContain('expected a mapping with apiVersion and kind');
    expect(list.location).toMatchObject({ file: 'k.yaml', line: 1 });
    const noVersion = thrown(() => parseKubeadmDocuments('kind: ClusterConfiguration\n', { file: 'k.yaml' }));
    expect(noVersion.message).toContain('no apiVersion');
    const twice = 'apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n';
    const dup = thrown(() => parseKubeadmDocuments(`${twice}---\n${twice}`, { file: 'k.yaml' }));
    expect(dup.message).toContain('a second ClusterConfiguration');
    expect(dup.location?.line).toBe(5);
  });

  it('errors from a ConfigMap name the object', () => {
    const object: SourceRef = {
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kubeadm-config',
      field: 'data.ClusterConfiguration',
    };
    const e = thrown(() =>
      parseKubeadmDocuments('apiVersion: kubeadm.k8s.io/v1alpha3\nkind: ClusterConfiguration\n', { object }),
    );
    expect(e.location?.object).toBe(
      'ClusterConfiguration in ConfigMap kube-system/kubeadm-config data.ClusterConfiguration',
    );
    expect(e.location?.file).toBeUndefined();
  });
});
