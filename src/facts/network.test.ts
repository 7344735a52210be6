import { describe, expect, it } from 'vitest';
import { describeSource } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import { clusterConfiguration, emptySnapshot, flags, labCluster, service } from './testing-builders.js';

describe('network facts', () => {
  it('agreeing CIDRs, domain and DNS IP', () => {
    const n = deriveFacts(labCluster()).network;
    expect(n.podSubnets.value).toEqual(['10.244.0.0/16']);
    // 3 controller managers + kubeadm-config + kube-proxy clusterCIDR
    expect(n.podSubnets.provenance).toHaveLength(5);
    expect(n.serviceSubnets.value).toEqual(['10.96.0.0/12']);
    expect(n.serviceSubnets.provenance).toHaveLength(7);
    expect(n.dnsDomain.value).toBe('cluster.local');
    expect(n.kubeDnsIPs.value).toEqual(['10.96.0.10']);
    expect(n.kubernetesServiceIP.value).toBe('10.96.0.1');
    expect(n.nodeCidrMaskSize.value).toEqual({ ipv4: 24 });
    for (const f of Object.values(n)) expect(f.conflict).toBeUndefined();
  });

  it('ConfigMap says one pod CIDR, the live controller-manager flag another: both shown, the flag believed', () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.networking.podSubnet = '10.32.0.0/12';
    const fact = deriveFacts(s).network.podSubnets;
    expect(fact.value).toEqual(['10.244.0.0/16']);
    expect(fact.conflict?.believed).toEqual(['10.244.0.0/16']);
    const kubeadm = fact.conflict?.candidates.find((c) =>
      describeSource(c.source).includes('kubeadm-config'),
    );
    expect(kubeadm?.value).toEqual(['10.32.0.0/12']);
    expect(fact.conflict?.reason).toMatch(/--cluster-cidr/);
    // provenance lists only the sources that agree with the believed value
    expect(fact.provenance.map(describeSource).some((d) => d.includes('kubeadm-config'))).toBe(false);
  });

  it('service CIDR: the apiserver flag wins over controller-manager and kubeadm-config', () => {
    const s = labCluster();
    for (const p of s.staticPods) {
      if (p.component === 'kube-controller-manager') {
        p.flags = p.flags.map((f) =>
          f.name === 'service-cluster-ip-range' ? { ...f, value: '10.100.0.0/16' } : f,
        );
      }
    }
    const fact = deriveFacts(s).network.serviceSubnets;
    expect(fact.value).toEqual(['10.96.0.0/12']);
    expect(fact.conflict?.candidates.filter((c) => c.value[0] === '10.100.0.0/16')).toHaveLength(3);
  });

  it('dual-stack CIDR lists are canonicalized and keep their order', () => {
    const s = labCluster();
    s.kubeadm.clusterConfiguration!.networking.podSubnet = '10.244.0.0/16, FD00:10:244:0:0::/56';
    for (const p of s.staticPods) {
      if (p.component === 'kube-controller-manager') {
        p.flags = p.flags.map((f) =>
          f.name === 'cluster-cidr' ? { ...f, value: '10.244.0.0/16,fd00:10:244::/56' } : f,
        );
      }
    }
    s.kubeProxy = undefined;
    const fact = deriveFacts(s).network.podSubnets;
    expect(fact.conflict).toBeUndefined();
    expect(fact.value).toEqual(['10.244.0.0/16', 'fd00:10:244::/56']);
  });

  it('kubelet clusterDomain differs from kubeadm networking.dnsDomain: conflict, kubelet believed', () => {
    const s = labCluster();
    s.kubelet!.spec['clusterDomain'] = 'corp.local.';
    const fact = deriveFacts(s).network.dnsDomain;
    expect(fact.value).toBe('corp.local');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual(['corp.local', 'cluster.local']);
  });

  it('node-local DNS: kubelet clusterDNS differs from the kube-dns Service, kubelet believed', () => {
    const s = labCluster();
    s.kubelet!.spec['clusterDNS'] = ['169.254.20.10'];
    const fact = deriveFacts(s).network.kubeDnsIPs;
    expect(fact.value).toEqual(['169.254.20.10']);
    expect(fact.conflict?.candidates[1]).toEqual({
      value: ['10.96.0.10'],
      source: {
        kind: 'object',
        objectKind: 'Service',
        namespace: 'kube-system',
        name: 'kube-dns',
        field: 'spec.clusterIPs',
      },
    });
    expect(fact.conflict?.reason).toMatch(/node-local DNS/);
  });

  it('kubernetes Service IP not at the start of the service CIDR (the CIDR changed): conflict', () => {
    const s = labCluster();
    s.resources.services = [
      service('default', 'kubernetes', '10.100.0.1'),
      service('kube-system', 'kube-dns', '10.96.0.10'),
    ];
    const fact = deriveFacts(s).network.kubernetesServiceIP;
    expect(fact.value).toBe('10.100.0.1');
    expect(fact.conflict?.candidates.map((c) => c.value)).toEqual(['10.100.0.1', '10.96.0.1']);
  });

  it('node CIDR mask size: explicit flag vs nodes allocated under another size', () => {
    const s = labCluster();
    for (const p of s.staticPods) {
      if (p.component === 'kube-controller-manager')
        p.flags = [...p.flags, ...flags('--node-cidr-mask-size=25')];
    }
    const fact = deriveFacts(s).network.nodeCidrMaskSize;
    expect(fact.value).toEqual({ ipv4: 25 });
    expect(fact.conflict?.candidates.at(-1)?.value).toEqual({ ipv4: 24 });
    expect(describeSource(fact.conflict!.candidates.at(-1)!.source)).toMatch(
      /spec.podCIDRs of 8 node\(s\), e.g. cp-1/,
    );
  });

  it('missing: an empty snapshot names what to provide', () => {
    const n = deriveFacts(emptySnapshot()).network;
    expect(n.podSubnets.value).toBeUndefined();
    expect(n.podSubnets.missing).toMatch(/networking.podSubnet/);
    expect(n.serviceSubnets.missing).toMatch(/--service-cluster-ip-range/);
    expect(n.dnsDomain.missing).toMatch(/clusterDomain/);
    expect(n.kubeDnsIPs.missing).toMatch(/kube-dns/);
    expect(n.kubernetesServiceIP.missing).toMatch(/default\/kubernetes/);
    expect(n.nodeCidrMaskSize.missing).toMatch(/Node objects/);
  });

  it('the kubernetes Service IP can be derived from the service CIDR alone', () => {
    const s = emptySnapshot();
    s.kubeadm.clusterConfiguration = clusterConfiguration({
      networking: { serviceSubnet: '10.112.0.0/16', podSubnet: '10.244.0.0/16', dnsDomain: 'cluster.local' },
    });
    const fact = deriveFacts(s).network.kubernetesServiceIP;
    expect(fact.value).toBe('10.112.0.1');
    expect(describeSource(fact.provenance[0]!)).toMatch(/first address of the service CIDR 10.112.0.0\/16/);
  });
});
