/**
 * Cluster networking: pod and service CIDRs, DNS domain, kube-dns IP, the kubernetes Service IP and
 * node CIDR mask sizes. Every one of these is read from several places that can disagree.
 */
import type { KubeObject } from '../snapshot/model.js';
import { canonicalIp, cidrList, nthIp, parseCidr } from '../util/ip.js';
import { absent, podCandidates } from './components.js';
import { decide, missingFact } from './decide.js';
import type { Candidate, Fact, NetworkFacts, NodeCidrMaskSize } from './model.js';
import { atField, derivedRef, objectRef } from './sources.js';
import { lastFlag, type SnapshotView } from './view.js';

export function deriveNetworkFacts(v: SnapshotView): NetworkFacts {
  const serviceSubnets = serviceSubnetsFact(v);
  return {
    podSubnets: podSubnets(v),
    serviceSubnets,
    dnsDomain: dnsDomain(v),
    kubeDnsIPs: kubeDnsIPs(v),
    kubernetesServiceIP: kubernetesServiceIP(v, serviceSubnets),
    nodeCidrMaskSize: nodeCidrMaskSize(v),
  };
}

const cidrFlag = (name: string) => (flags: { name: string; value: string }[]) => {
  const val = lastFlag(flags, name);
  return val === undefined ? undefined : cidrList(val);
};

function podSubnets(v: SnapshotView): Fact<string[]> {
  const candidates: Candidate<string[]>[] = podCandidates(
    v.controllerManagers,
    'cluster-cidr',
    cidrFlag('cluster-cidr'),
  );
  if (v.cc?.networking.podSubnet) {
    candidates.push({
      value: cidrList(v.cc.networking.podSubnet),
      source: atField(v.cc.source, 'networking.podSubnet'),
    });
  }
  const proxyCidr = v.snapshot.kubeProxy?.spec['clusterCIDR'];
  if (v.snapshot.kubeProxy && typeof proxyCidr === 'string' && proxyCidr.trim() !== '') {
    candidates.push({
      value: cidrList(proxyCidr),
      source: atField(v.snapshot.kubeProxy.source, 'clusterCIDR'),
    });
  }
  return decide({
    key: 'network.podSubnets',
    title: 'pod CIDRs',
    candidates,
    reason:
      'ferry believes kube-controller-manager --cluster-cidr: it allocates every Node.spec.podCIDR. kubeadm-config ' +
      'networking.podSubnet and kube-proxy clusterCIDR are declarations that were not kept in step',
    missing:
      'kubeadm-config.yaml (ClusterConfiguration networking.podSubnet) or the kube-controller-manager manifest (--cluster-cidr)',
  });
}

function serviceSubnetsFact(v: SnapshotView): Fact<string[]> {
  const candidates: Candidate<string[]>[] = [
    ...podCandidates(v.apiservers, 'service-cluster-ip-range', cidrFlag('service-cluster-ip-range')),
    ...podCandidates(v.controllerManagers, 'service-cluster-ip-range', cidrFlag('service-cluster-ip-range')),
  ];
  if (v.cc?.networking.serviceSubnet) {
    candidates.push({
      value: cidrList(v.cc.networking.serviceSubnet),
      source: atField(v.cc.source, 'networking.serviceSubnet'),
    });
  }
  return decide({
    key: 'network.serviceSubnets',
    title: 'service CIDRs',
    candidates,
    reason:
      'ferry believes kube-apiserver --service-cluster-ip-range: the apiserver allocates every ClusterIP from it; ' +
      'kube-controller-manager and kubeadm-config networking.serviceSubnet must be made to match',
    missing:
      'the kube-apiserver manifest (--service-cluster-ip-range) or kubeadm-config.yaml (ClusterConfiguration networking.serviceSubnet)',
  });
}

function dnsDomain(v: SnapshotView): Fact<string> {
  const candidates: Candidate<string>[] = [];
  const kubelet = v.snapshot.kubelet;
  const domain = kubelet?.spec['clusterDomain'];
  if (kubelet && typeof domain === 'string' && domain !== '') {
    candidates.push({ value: trimDot(domain), source: atField(kubelet.source, 'clusterDomain') });
  }
  if (v.cc?.networking.dnsDomain) {
    candidates.push({
      value: trimDot(v.cc.networking.dnsDomain),
      source: atField(v.cc.source, 'networking.dnsDomain'),
    });
  }
  return decide({
    key: 'network.dnsDomain',
    title: 'cluster DNS domain',
    candidates,
    reason:
      "ferry believes the KubeletConfiguration clusterDomain: kubelets write it into every pod's resolv.conf; " +
      'kubeadm-config networking.dnsDomain only seeded it',
    missing:
      'kubeadm-config.yaml (ClusterConfiguration networking.dnsDomain or KubeletConfiguration clusterDomain) or ConfigMap kube-system/kubelet-config',
  });
}

function trimDot(s: string): string {
  return s.trim().replace(/\.$/, '');
}

function kubeDnsIPs(v: SnapshotView): Fact<string[]> {
  const candidates: Candidate<string[]>[] = [];
  const kubelet = v.snapshot.kubelet;
  const clusterDNS = kubelet?.spec['clusterDNS'];
  if (kubelet && Array.isArray(clusterDNS) && clusterDNS.length > 0) {
    candidates.push({
      value: clusterDNS.map((x) => canonicalIp(String(x))),
      source: atField(kubelet.source, 'clusterDNS'),
    });
  }
  const svc = v.service('kube-system', 'kube-dns');
  const ips = svc ? serviceIPs(svc) : [];
  if (svc && ips.length > 0) candidates.push({ value: ips, source: objectRef(svc, 'spec.clusterIPs') });
  return decide({
    key: 'network.kubeDnsIPs',
    title: 'cluster DNS IPs (kubelet clusterDNS / kube-dns Service)',
    candidates,
    reason:
      "ferry believes the kubelet's clusterDNS: it is what pods resolve through. It differs from the kube-dns " +
      'Service when a node-local DNS cache listens on another address; Talos kubelets must get the same clusterDNS',
    missing:
      'ConfigMap kube-system/kubelet-config (clusterDNS) or Service kube-system/kube-dns in resources/',
  });
}

function serviceIPs(svc: KubeObject): string[] {
  const ips: unknown = svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : []);
  if (!Array.isArray(ips)) return [];
  return ips.filter((x): x is string => typeof x === 'string' && x !== 'None').map(canonicalIp);
}

function kubernetesServiceIP(v: SnapshotView, serviceSubnets: Fact<string[]>): Fact<string> {
  const candidates: Candidate<string>[] = [];
  const svc = v.service('default', 'kubernetes');
  const ip = svc ? serviceIPs(svc)[0] : undefined;
  if (svc && ip) candidates.push({ value: ip, source: objectRef(svc, 'spec.clusterIP') });
  const first = serviceSubnets.value?.[0];
  const derived = first ? nthIp(first, 1) : undefined;
  if (first && derived) {
    candidates.push({
      value: derived,
      source: derivedRef(
        `first address of the service CIDR ${first} (fact network.serviceSubnets)`,
        serviceSubnets.provenance,
      ),
    });
  }
  return decide({
    key: 'network.kubernetesServiceIP',
    title: 'kubernetes Service IP',
    candidates,
    reason:
      'ferry believes Service default/kubernetes: in-cluster clients use its ClusterIP and every apiserver ' +
      "certificate must carry it. It is not the service CIDR's first address when the CIDR changed after creation",
    missing: 'Service default/kubernetes in resources/, or the service CIDR',
  });
}

function nodeCidrMaskSize(v: SnapshotView): Fact<NodeCidrMaskSize> {
  const key = 'network.nodeCidrMaskSize';
  const title = 'node pod-CIDR mask sizes';
  const candidates: Candidate<NodeCidrMaskSize>[] = podCandidates(
    v.controllerManagers,
    'node-cidr-mask-size',
    (flags) => kcmMaskSizes(flags),
  );
  // Group nodes by the prefix lengths of their spec.podCIDRs, one candidate per group.
  const groups = new Map<string, { value: NodeCidrMaskSize; first: KubeObject; count: number }>();
  for (const node of v.snapshot.resources.nodes) {
    const cidrs: unknown = node.spec?.podCIDRs ?? (node.spec?.podCIDR ? [node.spec.podCIDR] : []);
    if (!Array.isArray(cidrs) || cidrs.length === 0) continue;
    const value: NodeCidrMaskSize = {};
    for (const c of cidrs) {
      const p = typeof c === 'string' ? parseCidr(c) : undefined;
      if (p?.family === 4) value.ipv4 = p.prefix;
      if (p?.family === 6) value.ipv6 = p.prefix;
    }
    const k = `${value.ipv4 ?? ''}/${value.ipv6 ?? ''}`;
    const g = groups.get(k);
    if (g) g.count++;
    else groups.set(k, { value, first: node, count: 1 });
  }
  for (const g of groups.values()) {
    candidates.push({
      value: g.value,
      source: derivedRef(`spec.podCIDRs of ${g.count} node(s), e.g. ${g.first.metadata.name}`, [
        objectRef(g.first, 'spec.podCIDRs'),
      ]),
    });
  }
  if (candidates.length === 0) {
    return missingFact(key, title, 'the kube-controller-manager manifest, or Node objects in resources/');
  }
  return decide({
    key,
    title,
    candidates,
    reason:
      'ferry believes kube-controller-manager: it allocates new node CIDRs with these sizes. Existing nodes keep ' +
      'the CIDRs they were given, so nodes that differ were allocated under other settings',
    missing: '',
  });
}

/** Mask sizes a kube-controller-manager uses: explicit flags, or its built-in 24 (IPv4) / 64 (IPv6). */
function kcmMaskSizes(flags: { name: string; value: string }[]) {
  const families = new Set(
    cidrList(lastFlag(flags, 'cluster-cidr') ?? '')
      .map((c) => parseCidr(c)?.family)
      .filter((f) => f !== undefined),
  );
  if (families.size === 0) return undefined;
  const single = lastFlag(flags, 'node-cidr-mask-size');
  const v4 = lastFlag(flags, 'node-cidr-mask-size-ipv4');
  const v6 = lastFlag(flags, 'node-cidr-mask-size-ipv6');
  const value: NodeCidrMaskSize = {};
  const dual = families.size > 1;
  if (families.has(4)) value.ipv4 = Number(v4 ?? (dual ? undefined : single) ?? 24);
  if (families.has(6)) value.ipv6 = Number(v6 ?? (dual ? undefined : single) ?? 64);
  if (single === undefined && v4 === undefined && v6 === undefined) {
    return absent(value, 'kube-controller-manager built-in mask sizes (24 for IPv4, 64 for IPv6) apply');
  }
  return value;
}
