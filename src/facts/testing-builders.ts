/**
 * Hand-built snapshots for the facts tests: a realistic kubeadm cluster (3 control planes, stacked
 * etcd, Cilium) that each test then bends into the case it needs.
 */
import {
  type ClusterConfiguration,
  type ComponentConfig,
  type EtcdState,
  emptyResources,
  type Flag,
  type KubeObject,
  type Snapshot,
  type SourceRef,
  type StaticPod,
  type Taint,
} from '../snapshot/model.js';

export const CC_SOURCE: SourceRef = {
  kind: 'object',
  objectKind: 'ConfigMap',
  namespace: 'kube-system',
  name: 'kubeadm-config',
  field: 'data.ClusterConfiguration',
};

export function flags(...args: string[]): Flag[] {
  return args.map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`bad flag ${a}`);
    return { name: m[1]!, value: m[2] ?? 'true' };
  });
}

export function emptySnapshot(): Snapshot {
  return {
    manifest: {
      formatVersion: 1,
      createdAt: '2026-01-02T03:04:05.000Z',
      source: { kind: 'files', path: '/tmp/cluster' },
      ferryVersion: '0.0.0-test',
      parts: [],
      warnings: [],
    },
    kubeadm: { nodeConfigurations: [] },
    staticPods: [],
    servedCertificates: [],
    resources: emptyResources(),
  };
}

export function clusterConfiguration(over: Partial<ClusterConfiguration> = {}): ClusterConfiguration {
  return {
    sourceApiVersion: 'kubeadm.k8s.io/v1beta4',
    source: CC_SOURCE,
    clusterName: 'lab',
    kubernetesVersion: 'v1.32.4',
    controlPlaneEndpoint: 'k8s-api.lab.example:6443',
    certificatesDir: '/etc/kubernetes/pki',
    featureGates: {},
    networking: { podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/12', dnsDomain: 'cluster.local' },
    apiServer: { extraArgs: [], extraVolumes: [], certSANs: ['k8s-api.lab.example'] },
    controllerManager: { extraArgs: [], extraVolumes: [] },
    scheduler: { extraArgs: [], extraVolumes: [] },
    etcd: { local: { imageTag: '3.5.16-0', extraArgs: [], serverCertSANs: [], peerCertSANs: [] } },
    dns: {},
    unknownFields: [],
    ...over,
  };
}

export function staticPod(
  component: string,
  node: string | undefined,
  image: string,
  args: Flag[],
): StaticPod {
  const source: SourceRef = node
    ? { kind: 'file', path: `manifests/${node}/${component}.yaml` }
    : { kind: 'file', path: `manifests/${component}.yaml` };
  const pod: StaticPod = {
    component,
    image,
    command: [component, ...args.map((f) => `--${f.name}=${f.value}`)],
    flags: args,
    hostPathVolumes: [],
    source,
  };
  if (node) pod.node = node;
  return pod;
}

export const CONTROL_PLANES = [
  { name: 'cp-1', ip: '10.20.0.11', memberId: '10276657743932975437' },
  { name: 'cp-2', ip: '10.20.0.12', memberId: '17115582512862521359' },
  { name: 'cp-3', ip: '10.20.0.13', memberId: '9372538179322589801' },
];

export function apiserverFlags(ip: string, extra: Flag[] = []): Flag[] {
  return [
    ...flags(
      `--advertise-address=${ip}`,
      '--allow-privileged=true',
      '--authorization-mode=Node,RBAC',
      '--client-ca-file=/etc/kubernetes/pki/ca.crt',
      '--enable-admission-plugins=NodeRestriction',
      '--enable-bootstrap-token-auth=true',
      '--etcd-cafile=/etc/kubernetes/pki/etcd/ca.crt',
      '--etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt',
      '--etcd-keyfile=/etc/kubernetes/pki/apiserver-etcd-client.key',
      '--etcd-servers=https://127.0.0.1:2379',
      '--kubelet-client-certificate=/etc/kubernetes/pki/apiserver-kubelet-client.crt',
      '--kubelet-client-key=/etc/kubernetes/pki/apiserver-kubelet-client.key',
      '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
      '--proxy-client-cert-file=/etc/kubernetes/pki/front-proxy-client.crt',
      '--proxy-client-key-file=/etc/kubernetes/pki/front-proxy-client.key',
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-username-headers=X-Remote-User',
      '--secure-port=6443',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--service-account-key-file=/etc/kubernetes/pki/sa.pub',
      '--service-account-signing-key-file=/etc/kubernetes/pki/sa.key',
      '--service-cluster-ip-range=10.96.0.0/12',
      '--tls-cert-file=/etc/kubernetes/pki/apiserver.crt',
      '--tls-private-key-file=/etc/kubernetes/pki/apiserver.key',
    ),
    ...extra,
  ];
}

export function controllerManagerFlags(extra: Flag[] = []): Flag[] {
  return [
    ...flags(
      '--allocate-node-cidrs=true',
      '--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf',
      '--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf',
      '--bind-address=127.0.0.1',
      '--client-ca-file=/etc/kubernetes/pki/ca.crt',
      '--cluster-cidr=10.244.0.0/16',
      '--cluster-name=lab',
      '--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt',
      '--cluster-signing-key-file=/etc/kubernetes/pki/ca.key',
      '--controllers=*,bootstrapsigner,tokencleaner',
      '--kubeconfig=/etc/kubernetes/controller-manager.conf',
      '--leader-elect=true',
      '--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt',
      '--root-ca-file=/etc/kubernetes/pki/ca.crt',
      '--service-account-private-key-file=/etc/kubernetes/pki/sa.key',
      '--service-cluster-ip-range=10.96.0.0/12',
      '--use-service-account-credentials=true',
    ),
    ...extra,
  ];
}

export function etcdFlags(name: string, ip: string, extra: Flag[] = []): Flag[] {
  return [
    ...flags(
      `--advertise-client-urls=https://${ip}:2379`,
      '--cert-file=/etc/kubernetes/pki/etcd/server.crt',
      '--client-cert-auth=true',
      '--data-dir=/var/lib/etcd',
      '--experimental-initial-corrupt-check=true',
      '--experimental-watch-progress-notify-interval=5s',
      `--initial-advertise-peer-urls=https://${ip}:2380`,
      `--initial-cluster=${name}=https://${ip}:2380`,
      '--key-file=/etc/kubernetes/pki/etcd/server.key',
      `--listen-client-urls=https://127.0.0.1:2379,https://${ip}:2379`,
      '--listen-metrics-urls=http://127.0.0.1:2381',
      `--listen-peer-urls=https://${ip}:2380`,
      `--name=${name}`,
      '--peer-cert-file=/etc/kubernetes/pki/etcd/peer.crt',
      '--peer-client-cert-auth=true',
      '--peer-key-file=/etc/kubernetes/pki/etcd/peer.key',
      '--peer-trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt',
      '--snapshot-count=10000',
      '--trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt',
    ),
    ...extra,
  ];
}

export function node(
  name: string,
  opts: { ip: string; controlPlane?: boolean; taints?: Taint[]; kubeletVersion?: string; podCIDR?: string },
): KubeObject {
  const labels: Record<string, string> = { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' };
  if (opts.controlPlane) labels['node-role.kubernetes.io/control-plane'] = '';
  const spec: Record<string, unknown> = {};
  if (opts.taints) spec['taints'] = opts.taints;
  if (opts.podCIDR) {
    spec['podCIDR'] = opts.podCIDR;
    spec['podCIDRs'] = [opts.podCIDR];
  }
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels },
    spec,
    status: {
      addresses: [
        { type: 'InternalIP', address: opts.ip },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: { kubeletVersion: opts.kubeletVersion ?? 'v1.32.4' },
    },
  };
}

export function configMap(namespace: string, name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

export function service(namespace: string, name: string, clusterIP: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { clusterIP, clusterIPs: [clusterIP], type: 'ClusterIP' },
  };
}

export function daemonSet(
  namespace: string,
  name: string,
  opts: {
    image: string;
    selector: Record<string, string>;
    updateStrategy?: unknown;
    env?: { name: string; value: string }[];
  },
): KubeObject {
  const container: Record<string, unknown> = { name: name.replace(/-.*/, ''), image: opts.image };
  if (opts.env) container['env'] = opts.env;
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace, labels: opts.selector },
    spec: {
      selector: { matchLabels: opts.selector },
      updateStrategy: opts.updateStrategy ?? {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
      },
      template: { metadata: { labels: opts.selector }, spec: { containers: [container] } },
    },
  };
}

export function kubeletConfig(spec: Record<string, unknown>): ComponentConfig {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    source: {
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kubelet-config',
      field: 'data.kubelet',
    },
    spec,
  };
}

export function etcdState(opts: { version?: string; versions?: string[]; leader?: string } = {}): EtcdState {
  const leader = opts.leader ?? CONTROL_PLANES[1]!.memberId;
  return {
    source: { kind: 'file', path: 'etcd' },
    members: CONTROL_PLANES.map((cp) => ({
      id: cp.memberId,
      name: cp.name,
      peerURLs: [`https://${cp.ip}:2380`],
      clientURLs: [`https://${cp.ip}:2379`],
      isLearner: false,
    })),
    endpoints: CONTROL_PLANES.map((cp, i) => ({
      endpoint: `https://${cp.ip}:2379`,
      memberId: cp.memberId,
      leaderId: leader,
      version: opts.versions?.[i] ?? opts.version ?? '3.5.16',
      dbSize: 25_000_000,
      dbSizeInUse: 12_000_000,
      raftTerm: '7',
      raftIndex: '123456',
      errors: [],
    })),
    version: { server: opts.version ?? '3.5.16', cluster: '3.5.0' },
    alarms: [],
  };
}

/**
 * A consistent kubeadm cluster: every source agrees. Tests change one thing and look at the fact.
 */
export function labCluster(): Snapshot {
  const s = emptySnapshot();
  s.manifest.parts = ['kubeadm', 'flags', 'kubelet', 'kube-proxy', 'encryption', 'etcd', 'resources'];
  s.kubeadm.clusterConfiguration = clusterConfiguration({
    apiServer: {
      extraArgs: flags(
        '--encryption-provider-config=/etc/kubernetes/enc/config.yaml',
        '--oidc-issuer-url=https://sso.lab.example/realms/k8s',
        '--oidc-client-id=kubernetes',
      ),
      extraVolumes: [],
      certSANs: ['k8s-api.lab.example'],
    },
  });
  for (const cp of CONTROL_PLANES) {
    s.staticPods.push(
      staticPod(
        'kube-apiserver',
        cp.name,
        'registry.k8s.io/kube-apiserver:v1.32.4',
        apiserverFlags(
          cp.ip,
          flags(
            '--encryption-provider-config=/etc/kubernetes/enc/config.yaml',
            '--oidc-issuer-url=https://sso.lab.example/realms/k8s',
            '--oidc-client-id=kubernetes',
          ),
        ),
      ),
      staticPod(
        'kube-controller-manager',
        cp.name,
        'registry.k8s.io/kube-controller-manager:v1.32.4',
        controllerManagerFlags(),
      ),
      staticPod('kube-scheduler', cp.name, 'registry.k8s.io/kube-scheduler:v1.32.4', [
        ...flags(
          '--authentication-kubeconfig=/etc/kubernetes/scheduler.conf',
          '--authorization-kubeconfig=/etc/kubernetes/scheduler.conf',
          '--bind-address=127.0.0.1',
          '--kubeconfig=/etc/kubernetes/scheduler.conf',
          '--leader-elect=true',
        ),
      ]),
      staticPod('etcd', cp.name, 'registry.k8s.io/etcd:3.5.16-0', etcdFlags(cp.name, cp.ip)),
    );
  }
  s.kubelet = kubeletConfig({
    clusterDNS: ['10.96.0.10'],
    clusterDomain: 'cluster.local',
    cgroupDriver: 'systemd',
    maxPods: 110,
    rotateCertificates: true,
    authentication: { anonymous: { enabled: false } },
    authorization: { mode: 'Webhook' },
    evictionHard: { 'memory.available': '100Mi' },
    staticPodPath: '/etc/kubernetes/manifests',
  });
  s.kubeProxy = {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    source: {
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: 'kube-proxy',
      field: 'data.config.conf',
    },
    spec: { clusterCIDR: '10.244.0.0/16', mode: '' },
  };
  s.encryption = {
    source: { kind: 'file', path: 'encryption-config.yaml' },
    resources: [
      {
        resources: ['secrets'],
        providers: [
          { type: 'aescbc', keyNames: ['key-2023'], keyFingerprints: ['ab'.repeat(32)] },
          { type: 'identity', keyNames: [], keyFingerprints: [] },
        ],
      },
    ],
  };
  s.etcd = etcdState();
  const r = s.resources;
  CONTROL_PLANES.forEach((cp, i) => {
    r.nodes.push(node(cp.name, { ip: cp.ip, controlPlane: true, podCIDR: `10.244.${i}.0/24` }));
  });
  for (let i = 1; i <= 5; i++)
    r.nodes.push(node(`worker-${i}`, { ip: `10.20.0.2${i}`, podCIDR: `10.244.${10 + i}.0/24` }));
  r.services.push(
    service('default', 'kubernetes', '10.96.0.1'),
    service('kube-system', 'kube-dns', '10.96.0.10'),
  );
  r.configmaps.push(
    configMap('kube-public', 'cluster-info', {
      kubeconfig: [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: ""',
        '  cluster:',
        '    certificate-authority-data: LS0tLS1CRUdJTi0tLS0t',
        '    server: https://k8s-api.lab.example:6443',
      ].join('\n'),
    }),
    configMap('kube-system', 'cilium-config', {
      'kube-proxy-replacement': 'true',
      'k8s-service-host': 'k8s-api.lab.example',
      'k8s-service-port': '6443',
      ipam: 'kubernetes',
    }),
  );
  r.daemonsets.push(
    daemonSet('kube-system', 'cilium', {
      image:
        'quay.io/cilium/cilium:v1.16.5@sha256:758ca0793f5995bb938a2fa219dcce63dc0b3fa7fc4ce5cc851125281fb7361d',
      selector: { 'k8s-app': 'cilium' },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
    }),
  );
  return s;
}
