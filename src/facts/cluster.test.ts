import { describe, expect, it } from 'vitest';
import { describeSource, type ServerVersionInfo } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import { CONTROL_PLANES, configMap, emptySnapshot, flags, labCluster } from './testing-builders.js';

/** What kube-apiserver answers on GET /version, as a live snapshot records it. */
function versionAnswer(gitVersion: string): ServerVersionInfo {
  const [, major = '', minor = ''] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? [];
  return {
    source: { kind: 'api', server: 'https://10.20.0.10:6443', path: '/version' },
    info: { major, minor, gitVersion, platform: 'linux/amd64' },
  };
}

describe('cluster facts', () => {
  it('agreeing sources give one value with every source as provenance', () => {
    const f = deriveFacts(labCluster());
    expect(f.cluster.name.value).toBe('lab');
    expect(f.cluster.name.conflict).toBeUndefined();
    // three kube-controller-manager --cluster-name flags plus kubeadm-config clusterName
    expect(f.cluster.name.provenance).toHaveLength(4);
    expect(f.cluster.name.provenance.map(describeSource)).toContain(
      'ConfigMap kube-system/kubeadm-config data.ClusterConfiguration.clusterName',
    );
    expect(f.cluster.name.provenance.map(describeSource)).toContain(
      'kube-controller-manager@cp-1 --cluster-name (manifests/cp-1/kube-controller-manager.yaml)',
    );
    expect(f.cluster.kubernetesVersion.value).toBe('v1.32.4');
    expect(f.cluster.controlPlaneEndpoint.value).toEqual({
      host: 'k8s-api.lab.example',
      port: 6443,
      url: 'https://k8s-api.lab.example:6443',
      node: null,
      from: 'kubeadm',
    });
    expect(f.cluster.controlPlaneEndpoint.provenance.map(describeSource)).toEqual([
      'ConfigMap kube-system/kubeadm-config data.ClusterConfiguration.controlPlaneEndpoint',
      'ConfigMap kube-public/cluster-info data.kubeconfig clusters[0].cluster.server',
    ]);
  });

  it('control planes on different versions: conflict, the lowest running version is believed', () => {
    const s = labCluster();
    const cp3 = s.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === 'cp-3')!;
    cp3.image = 'registry.k8s.io/kube-apiserver:v1.31.9';
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.31.9');
    expect(fact.conflict?.believed).toBe('v1.31.9');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual([
      'v1.32.4',
      'v1.32.4',
      'v1.31.9',
      'v1.32.4',
    ]);
    expect(fact.conflict?.reason).toMatch(/lowest/);
    expect(fact.provenance).toHaveLength(1);
  });

  it('kubeadm-config disagreeing with the running image: the running image wins, both are listed', () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.kubernetesVersion = 'v1.31.2';
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.32.4');
    expect(fact.conflict?.candidates.at(-1)).toEqual({
      value: 'v1.31.2',
      source: expect.objectContaining({ field: 'data.ClusterConfiguration.kubernetesVersion' }),
    });
  });

  it("a live snapshot's GET /version is the first source and is cited as such", () => {
    const s = labCluster();
    s.serverVersion = versionAnswer('v1.32.4');
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.32.4');
    expect(fact.conflict).toBeUndefined();
    expect(fact.provenance[0]).toEqual({
      kind: 'api',
      server: 'https://10.20.0.10:6443',
      path: '/version',
      field: 'gitVersion',
    });
    expect(describeSource(fact.provenance[0]!)).toBe('GET /version gitVersion (https://10.20.0.10:6443)');
    // and the three images plus kubeadm-config agree with it
    expect(fact.provenance).toHaveLength(5);
  });

  it('GET /version alone gives the version (a cluster ferry sees no manifests or kubeadm-config of)', () => {
    const s = emptySnapshot();
    s.serverVersion = versionAnswer('v1.36.2');
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.36.2');
    expect(fact.missing).toBeUndefined();
    expect(fact.provenance.map(describeSource)).toEqual([
      'GET /version gitVersion (https://10.20.0.10:6443)',
    ]);
  });

  it('GET /version disagreeing with kubeadm-config and the images: /version is believed, every source is listed', () => {
    const s = labCluster();
    s.serverVersion = versionAnswer('v1.32.5');
    s.kubeadm.clusterConfiguration!.kubernetesVersion = 'v1.31.2';
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.32.5');
    expect(fact.conflict?.believed).toBe('v1.32.5');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual([
      'v1.32.5',
      'v1.32.4',
      'v1.32.4',
      'v1.32.4',
      'v1.31.2',
    ]);
    expect(fact.conflict?.candidates[0]?.source).toMatchObject({ kind: 'api', path: '/version' });
    expect(fact.conflict?.reason).toMatch(/GET \/version/);
    expect(fact.provenance).toEqual([expect.objectContaining({ kind: 'api' })]);
  });

  it('GET /version with kubeadm-config only (no manifests): a disagreement is a conflict, not a silent pick', () => {
    const s = labCluster();
    s.staticPods = s.staticPods.filter((p) => p.component !== 'kube-apiserver');
    s.serverVersion = versionAnswer('v1.36.2');
    s.kubeadm.clusterConfiguration!.kubernetesVersion = 'v1.35.4';
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.36.2');
    expect(fact.conflict?.candidates.map((c) => [c.value, describeSource(c.source)])).toEqual([
      ['v1.36.2', 'GET /version gitVersion (https://10.20.0.10:6443)'],
      ['v1.35.4', 'ConfigMap kube-system/kubeadm-config data.ClusterConfiguration.kubernetesVersion'],
    ]);
  });

  it('control planes on different versions: the lowest running one is believed, even over GET /version', () => {
    const s = labCluster();
    // An upgrade under way: cp-1 already runs v1.32.5 and answered GET /version; cp-3 is behind.
    s.serverVersion = versionAnswer('v1.32.5');
    const image = (node: string, tag: string) => {
      s.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === node)!.image =
        `registry.k8s.io/kube-apiserver:${tag}`;
    };
    image('cp-1', 'v1.32.5');
    image('cp-3', 'v1.31.9');
    const fact = deriveFacts(s).cluster.kubernetesVersion;
    expect(fact.value).toBe('v1.31.9');
    expect(fact.conflict?.candidates.map((c) => [c.value, c.source.kind])).toEqual([
      ['v1.32.5', 'api'],
      ['v1.32.5', 'derived'],
      ['v1.32.4', 'derived'],
      ['v1.31.9', 'derived'],
      ['v1.32.4', 'object'],
    ]);
    expect(fact.conflict?.reason).toMatch(/lowest.*GET \/version is answered by one of them/);
  });

  it('endpoint without a port takes the apiserver --secure-port and says so', () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.controlPlaneEndpoint = 'k8s-api.lab.example';
    for (const p of s.staticPods) {
      if (p.component === 'kube-apiserver')
        p.flags = p.flags.map((f) => (f.name === 'secure-port' ? { name: f.name, value: '8443' } : f));
    }
    s.resources.configmaps = [];
    const fact = deriveFacts(s).cluster.controlPlaneEndpoint;
    expect(fact.value?.url).toBe('https://k8s-api.lab.example:8443');
    expect(describeSource(fact.provenance[0]!)).toMatch(/has no port; kubeadm uses --secure-port 8443/);
  });

  it("an endpoint that is one control plane's own address names that node", () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.controlPlaneEndpoint = `${CONTROL_PLANES[0]!.ip}:6443`;
    s.resources.configmaps = [];
    expect(deriveFacts(s).cluster.controlPlaneEndpoint.value?.node).toBe('cp-1');
  });

  it('kubeadm-config endpoint vs a stale cluster-info: conflict with both candidates', () => {
    const s = labCluster();
    const info = s.resources.configmaps.find((c) => c.metadata.name === 'cluster-info')!;
    info.data.kubeconfig = info.data.kubeconfig.replace(
      'https://k8s-api.lab.example:6443',
      'https://10.20.0.11:6443',
    );
    const fact = deriveFacts(s).cluster.controlPlaneEndpoint;
    expect(fact.value?.host).toBe('k8s-api.lab.example');
    expect(fact.conflict?.candidates.map((c) => `${c.value.host}:${c.value.port}`)).toEqual([
      'k8s-api.lab.example:6443',
      '10.20.0.11:6443',
    ]);
    expect(fact.conflict?.candidates[1]?.value.node).toBe('cp-1');
  });

  it('without kubeadm-config the endpoint comes from cluster-info; IPv6 hosts are bracketed in the URL', () => {
    const s = emptySnapshot();
    s.resources.configmaps.push(
      configMap('kube-public', 'cluster-info', {
        kubeconfig: 'clusters:\n- cluster:\n    server: https://[FD00:0:0::10]:6443\n',
      }),
    );
    const fact = deriveFacts(s).cluster.controlPlaneEndpoint;
    expect(fact.value).toEqual({
      host: 'fd00::10',
      port: 6443,
      url: 'https://[fd00::10]:6443',
      node: null,
      from: 'cluster-info',
    });
  });

  it('names what to provide when nothing says', () => {
    const f = deriveFacts(emptySnapshot());
    expect(f.cluster.name.value).toBeUndefined();
    expect(f.cluster.name.missing).toMatch(/kubeadm-config\.yaml/);
    expect(f.cluster.kubernetesVersion.missing).toMatch(/kube-apiserver manifest/);
    expect(f.cluster.kubernetesVersion.missing).toMatch(/GET \/version/);
    expect(f.cluster.controlPlaneEndpoint.missing).toMatch(/cluster-info/);
  });

  it('--cluster-name on a controller manager that differs from kubeadm-config is a conflict', () => {
    const s = labCluster();
    const kcm = s.staticPods.find((p) => p.component === 'kube-controller-manager' && p.node === 'cp-2')!;
    kcm.flags = [...kcm.flags.filter((x) => x.name !== 'cluster-name'), ...flags('--cluster-name=prod')];
    const fact = deriveFacts(s).cluster.name;
    expect(fact.conflict).toBeDefined();
    expect(fact.value).toBe('lab');
    expect(new Set(fact.conflict?.candidates.map((c) => c.value))).toEqual(new Set(['lab', 'prod']));
  });
});
