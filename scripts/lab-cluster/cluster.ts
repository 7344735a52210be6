/** The example cluster's topology: names, versions, addresses and nodes that every other file agrees on. */

export const CLUSTER = {
  name: 'lab',
  kubernetesVersion: 'v1.32.4',
  etcdImage: 'registry.k8s.io/etcd:3.5.16-0',
  etcdVersion: '3.5.16',
  endpointHost: 'k8s-api.lab.example',
  endpointPort: 6443,
  vip: '10.20.0.10',
  podSubnet: '10.244.0.0/16',
  serviceSubnet: '10.96.0.0/12',
  kubernetesServiceIP: '10.96.0.1',
  dnsServiceIP: '10.96.0.10',
  dnsDomain: 'cluster.local',
  /** kubeadm's default issuer: what a Talos apiserver will NOT accept by default. */
  serviceAccountIssuer: 'https://kubernetes.default.svc.cluster.local',
  oidc: {
    issuerUrl: 'https://sso.lab.example/realms/platform',
    clientId: 'kubernetes',
    usernameClaim: 'email',
    groupsClaim: 'groups',
  },
  encryptionConfigPath: '/etc/kubernetes/encryption/config.yaml',
  encryptionKeyName: 'key-2023',
  bootstrapTokenId: 'abcdef',
  /** The external haproxy pair in front of the VIP; its HTTP check is the anonymous /healthz dependent. */
  loadBalancers: [
    { name: 'lb-1', ip: '10.20.0.5' },
    { name: 'lb-2', ip: '10.20.0.6' },
  ],
  healthCheckUserAgent: 'haproxy-healthcheck',
  ciliumVersion: 'v1.16.6',
  corednsImage: 'registry.k8s.io/coredns/coredns:v1.11.3',
  containerd: 'containerd://1.7.27',
  kernel: '6.1.0-37-amd64',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
} as const;

export type NodeRole = 'control-plane' | 'worker';

export interface NodeDef {
  name: string;
  ip: string;
  role: NodeRole;
  /** Index of the node's /24 inside the pod subnet, in the order the KCM allocated them. */
  cidrIndex: number;
  cpu: number;
  memoryKi: number;
  pool?: string;
  created: string;
}

export const NODES: readonly NodeDef[] = [
  node('cp-1', '10.20.0.11', 'control-plane', 0, 4, 8136012, '2025-02-11T09:14:27Z'),
  node('cp-2', '10.20.0.12', 'control-plane', 1, 4, 8136012, '2025-02-11T09:31:02Z'),
  node('cp-3', '10.20.0.13', 'control-plane', 2, 4, 8136012, '2025-02-11T09:44:51Z'),
  node('worker-1', '10.20.0.21', 'worker', 3, 8, 16373932, '2025-02-11T10:05:13Z', 'general'),
  node('worker-2', '10.20.0.22', 'worker', 4, 8, 16373932, '2025-02-11T10:06:40Z', 'general'),
  node('worker-3', '10.20.0.23', 'worker', 5, 8, 16373932, '2025-02-11T10:08:22Z', 'data'),
  node('worker-4', '10.20.0.24', 'worker', 6, 8, 16373932, '2025-02-11T10:09:57Z', 'data'),
  node('worker-5', '10.20.0.25', 'worker', 7, 8, 16373932, '2025-02-11T10:11:35Z', 'data'),
];

function node(
  name: string,
  ip: string,
  role: NodeRole,
  cidrIndex: number,
  cpu: number,
  memoryKi: number,
  created: string,
  pool?: string,
): NodeDef {
  return pool === undefined
    ? { name, ip, role, cidrIndex, cpu, memoryKi, created }
    : { name, ip, role, cidrIndex, cpu, memoryKi, created, pool };
}

export const CONTROL_PLANES = NODES.filter((n) => n.role === 'control-plane');

/** When the dump was taken; every status timestamp is at or before it. */
export const SNAPSHOT_AT = Date.parse('2026-11-30T09:00:00Z');
/** Last control-plane reboot (kernel update): mirror pods and DaemonSet pods date from here. */
export const LAST_REBOOT = Date.parse('2026-10-14T03:10:00Z');
export const NODE_POOL_LABEL = 'lab.example/pool';

export function nodeByName(name: string): NodeDef {
  const n = NODES.find((x) => x.name === name);
  if (!n) throw new Error(`unknown node ${name}`);
  return n;
}
