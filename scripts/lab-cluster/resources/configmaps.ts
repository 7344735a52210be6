/** The ConfigMaps the migration reads: kubeadm's two, CoreDNS's Corefile and the Cilium configuration. */
import type { Allocator } from '../allocator.js';
import { CLUSTER } from '../cluster.js';
import { clusterConfiguration } from '../kubeadm-config.js';
import { kubeletConfigurationStored } from '../kubelet-config.js';
import type { K8s, Obj } from '../objects.js';
import { toYaml } from '../serialize.js';
import { ciliumConfigData } from './cilium-config.js';

const COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes ${CLUSTER.dnsDomain} in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success ${CLUSTER.dnsDomain}
       disable denial ${CLUSTER.dnsDomain}
    }
    loop
    reload
    loadbalance
}
lab.example:53 {
    errors
    cache 30
    forward . 10.20.0.2 10.20.0.3
}
`;

export function configMaps(alloc: Allocator): K8s[] {
  const cm = (
    namespace: string,
    name: string,
    created: string,
    data: Record<string, string>,
    extra: Obj = {},
  ): K8s => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: alloc.meta('ConfigMap', name, namespace, created, extra),
    data,
  });
  return [
    cm('kube-system', 'kubeadm-config', '2025-02-11T09:14:33Z', {
      ClusterConfiguration: toYaml(clusterConfiguration()),
    }),
    cm('kube-system', 'kubelet-config', '2025-02-11T09:14:33Z', {
      kubelet: toYaml(kubeletConfigurationStored()),
    }),
    cm('kube-system', 'coredns', '2025-02-11T09:14:41Z', { Corefile: COREFILE }),
    cm('kube-system', 'cilium-config', '2025-02-11T09:20:03Z', ciliumConfigData(), {
      annotations: { 'meta.helm.sh/release-name': 'cilium', 'meta.helm.sh/release-namespace': 'kube-system' },
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
    }),
  ];
}
