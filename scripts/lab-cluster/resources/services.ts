/** The Services (kubectl get services -A -o yaml): cluster add-ons and the applications. */
import type { Allocator } from '../allocator.js';
import { CLUSTER } from '../cluster.js';
import type { K8s, Obj } from '../objects.js';

function service(
  alloc: Allocator,
  namespace: string,
  name: string,
  created: string,
  spec: Obj,
  extra: Obj = {},
): K8s {
  const ip = spec['clusterIP'] as string;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: alloc.meta('Service', name, namespace, created, extra),
    spec: {
      clusterIP: ip,
      clusterIPs: [ip],
      internalTrafficPolicy: 'Cluster',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      type: 'ClusterIP',
      ...spec,
    },
    status: { loadBalancer: {} },
  };
}

export function services(alloc: Allocator): K8s[] {
  const port = (name: string, p: number, target: number | string, protocol = 'TCP') => ({
    name,
    port: p,
    protocol,
    targetPort: target,
  });
  /** An application's Service: one port, selecting its pods by `app.kubernetes.io/name`. */
  const app = (
    namespace: string,
    name: string,
    created: string,
    clusterIP: string,
    p: Obj,
    extra: Obj = {},
  ) =>
    service(alloc, namespace, name, created, {
      clusterIP,
      ports: [p],
      selector: { 'app.kubernetes.io/name': name },
      ...extra,
    });
  return [
    service(
      alloc,
      'default',
      'kubernetes',
      '2025-02-11T09:14:30Z',
      { clusterIP: CLUSTER.kubernetesServiceIP, ports: [port('https', 443, CLUSTER.endpointPort)] },
      { labels: { component: 'apiserver', provider: 'kubernetes' } },
    ),
    service(
      alloc,
      'kube-system',
      'kube-dns',
      '2025-02-11T09:14:41Z',
      {
        clusterIP: CLUSTER.dnsServiceIP,
        ports: [port('dns', 53, 53, 'UDP'), port('dns-tcp', 53, 53), port('metrics', 9153, 9153)],
        selector: { 'k8s-app': 'kube-dns' },
      },
      {
        annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
        labels: {
          'k8s-app': 'kube-dns',
          'kubernetes.io/cluster-service': 'true',
          'kubernetes.io/name': 'CoreDNS',
        },
      },
    ),
    service(
      alloc,
      'kube-system',
      'hubble-peer',
      '2025-02-11T09:20:03Z',
      {
        clusterIP: '10.104.88.201',
        internalTrafficPolicy: 'Local',
        ports: [port('peer-service', 443, 4244)],
        selector: { 'k8s-app': 'cilium' },
      },
      {
        labels: {
          'app.kubernetes.io/name': 'hubble-peer',
          'app.kubernetes.io/part-of': 'cilium',
          'k8s-app': 'cilium',
        },
      },
    ),
    app(
      'shop',
      'frontend',
      '2025-03-04T10:12:00Z',
      '10.108.23.140',
      { ...port('http', 80, 'http'), nodePort: 30080 },
      { externalTrafficPolicy: 'Cluster', type: 'NodePort' },
    ),
    app('shop', 'api', '2025-03-04T10:12:00Z', '10.101.5.77', port('http', 8080, 'http')),
    app('shop', 'checkout', '2025-05-19T08:40:00Z', '10.99.141.12', port('http', 8080, 'http')),
    // Headless: the StatefulSet's members get DNS names.
    app('shop', 'postgres', '2025-03-04T10:15:00Z', 'None', port('postgres', 5432, 5432)),
    app('apps', 'wiki', '2025-06-02T11:00:00Z', '10.110.64.9', port('http', 80, 'http')),
  ];
}
