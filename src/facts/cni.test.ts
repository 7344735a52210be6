import { describe, expect, it } from 'vitest';
import { describeSource } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import { daemonSet, emptySnapshot, labCluster } from './testing-builders.js';

describe('CNI and kube-proxy facts', () => {
  it('Cilium with kube-proxy replacement and no kube-proxy DaemonSet', () => {
    const f = deriveFacts(labCluster());
    expect(f.cni.plugin.value).toBe('cilium');
    expect(f.cni.ciliumVersion.value).toBe('1.16.5');
    expect(f.cni.ciliumKubeProxyReplacement.value).toBe('true');
    expect(f.cni.ciliumK8sServiceHost.value).toBe('k8s-api.lab.example');
    expect(f.cni.ciliumK8sServicePort.value).toBe('6443');
    expect(f.cni.ciliumAgent.value?.updateStrategy).toEqual({
      type: 'RollingUpdate',
      maxUnavailable: 2,
      maxSurge: null,
    });
    expect(f.cni.ciliumIpam.value).toEqual({
      mode: 'kubernetes',
      clusterPoolCIDRs: [],
      clusterPoolMaskSize: null,
    });
    expect(f.kubeProxy.daemonSet.value).toBeNull();
    expect(f.kubeProxy.mode.value).toBeNull();
    expect(f.kubeProxy.mode.note).toMatch(/no kube-proxy DaemonSet runs it/);
    expect(describeSource(f.kubeProxy.daemonSet.provenance[0]!)).toMatch(
      /no DaemonSet kube-system\/kube-proxy.*\/tmp\/cluster\/resources/,
    );
  });

  it("the agent's KUBERNETES_SERVICE_HOST env differing from cilium-config is a conflict", () => {
    const s = labCluster();
    s.resources.daemonsets = [
      daemonSet('kube-system', 'cilium', {
        image: 'quay.io/cilium/cilium:v1.15.9',
        selector: { 'k8s-app': 'cilium' },
        env: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'localhost' }],
      }),
    ];
    const fact = deriveFacts(s).cni.ciliumK8sServiceHost;
    expect(fact.value).toBe('k8s-api.lab.example');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual(['k8s-api.lab.example', 'localhost']);
  });

  it('Cilium IPAM cluster-pool CIDRs are read', () => {
    const s = labCluster();
    const cm = s.resources.configmaps.find((c) => c.metadata.name === 'cilium-config')!;
    cm.data = {
      ipam: 'cluster-pool',
      'cluster-pool-ipv4-cidr': '10.0.0.0/8',
      'cluster-pool-ipv4-mask-size': '24',
    };
    const fact = deriveFacts(s).cni.ciliumIpam;
    expect(fact.value).toEqual({
      mode: 'cluster-pool',
      clusterPoolCIDRs: ['10.0.0.0/8'],
      clusterPoolMaskSize: 24,
    });
    expect(fact.note).toMatch(/not from Node.spec.podCIDR/);
  });

  it('Calico with kube-proxy in ipvs mode; Cilium facts are null', () => {
    const s = labCluster();
    s.resources.configmaps = s.resources.configmaps.filter((c) => c.metadata.name !== 'cilium-config');
    s.resources.daemonsets = [
      daemonSet('kube-system', 'calico-node', {
        image: 'docker.io/calico/node:v3.28.0',
        selector: { 'k8s-app': 'calico-node' },
      }),
      daemonSet('kube-system', 'kube-proxy', {
        image: 'registry.k8s.io/kube-proxy:v1.32.4',
        selector: { 'k8s-app': 'kube-proxy' },
      }),
    ];
    s.kubeProxy!.spec['mode'] = 'ipvs';
    const f = deriveFacts(s);
    expect(f.cni.plugin.value).toBe('calico');
    expect(f.cni.ciliumKubeProxyReplacement.value).toBeNull();
    expect(f.cni.ciliumKubeProxyReplacement.note).toBe('Cilium is not the CNI');
    expect(f.kubeProxy.daemonSet.value?.selector).toEqual({ 'k8s-app': 'kube-proxy' });
    expect(f.kubeProxy.mode.value).toBe('ipvs');
  });

  it('kube-proxy with an empty mode runs iptables, and the fact says why', () => {
    const s = labCluster();
    s.resources.daemonsets.push(
      daemonSet('kube-system', 'kube-proxy', {
        image: 'registry.k8s.io/kube-proxy:v1.32.4',
        selector: { 'k8s-app': 'kube-proxy' },
      }),
    );
    const mode = deriveFacts(s).kubeProxy.mode;
    expect(mode.value).toBe('iptables');
    expect(describeSource(mode.provenance[0]!)).toMatch(/mode is empty/);
  });

  it('two CNIs at once is a conflict, not a silent pick', () => {
    const s = labCluster();
    s.resources.daemonsets.push(
      daemonSet('kube-flannel', 'kube-flannel-ds', {
        image: 'docker.io/flannel/flannel:v0.25.6',
        selector: { app: 'flannel' },
      }),
    );
    const fact = deriveFacts(s).cni.plugin;
    expect(fact.value).toBe('cilium');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual(['cilium', 'flannel']);
  });

  it('no resources: CNI and kube-proxy facts are missing; resources without a CNI: none-detected', () => {
    const f = deriveFacts(emptySnapshot());
    expect(f.cni.plugin.missing).toMatch(/DaemonSets/);
    expect(f.cni.ciliumVersion.value).toBeUndefined();
    expect(f.kubeProxy.daemonSet.value).toBeUndefined();
    const s = labCluster();
    s.resources.daemonsets = [];
    s.resources.configmaps = [];
    expect(deriveFacts(s).cni.plugin.value).toBe('none-detected');
  });
});
