/**
 * A small kubeadm cluster as a snapshot files directory (docs/snapshot-layout.md §1), with a real
 * kubeadm-layout PKI, for the generate tests. Options switch on the traps a test needs.
 *
 * The cluster: control planes cp-1 and cp-2 (stacked etcd) and one worker, Cilium with kube-proxy
 * replacement (so kubeadm runs with proxy.disabled and there is no kube-proxy DaemonSet), and
 * everything `ferry generate` derives from: Node objects, the kube-system DaemonSets and ConfigMaps,
 * the kube-dns Service, and the etcd state as `etcdctl -w json` prints it.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writeKubeadmPki } from '../pki/kubeadm-layout.js';

export interface FixtureOptions {
  /** Encryption at rest: none, or the write provider/key name (with identity last). */
  encryption?: { provider: 'aescbc' | 'secretbox'; keyName: string; secret: string };
  /** Apiserver certificate SANs include 127.0.0.1 and localhost already. */
  loopbackSans?: boolean;
  /** First --service-account-issuer of every apiserver. */
  issuer?: string;
  /** Only cp-1 (whose apiserver.crt is the one in pki/) as control plane and etcd member. */
  singleNode?: boolean;
  /** etcd server version every member runs (image tag, endpoint status, /version); default kubeadm's 3.5.16. */
  etcdVersion?: string;
}

export const NODES = [
  { name: 'cp-1', ip: '10.0.0.11' },
  { name: 'cp-2', ip: '10.0.0.12' },
];
export const WORKERS = [{ name: 'worker-1', ip: '10.0.0.21' }];
export const ENDPOINT = 'https://api.demo.example:6443';
export const KUBERNETES_VERSION = 'v1.32.4';
/** The etcd kubeadm v1.32 installs. */
const KUBEADM_ETCD_VERSION = '3.5.16';
export const CILIUM_VERSION = '1.16.6';
export const DNS_SERVICE_IP = '10.96.0.10';
export const ENCRYPTION_PATH = '/etc/kubernetes/enc/config.yaml';

export async function writeFixture(dir: string, opts: FixtureOptions = {}): Promise<{ pki: string }> {
  const pki = join(dir, 'pki');
  await writeKubeadmPki(pki, {
    clusterName: 'demo',
    apiserver: {
      nodeName: 'cp-1',
      advertiseAddress: '10.0.0.11',
      dnsNames: [
        'kubernetes',
        'kubernetes.default',
        'api.demo.example',
        ...(opts.loopbackSans ? ['localhost'] : []),
      ],
      ipAddresses: ['10.96.0.1', ...(opts.loopbackSans ? ['127.0.0.1'] : [])],
    },
    etcdMembers: [{ name: 'cp-1', ip: '10.0.0.11' }],
    key: { algorithm: 'ECDSA' },
    serviceAccountKey: { algorithm: 'ECDSA' },
  });
  const enc = opts.encryption;
  const etcdVersion = opts.etcdVersion ?? KUBEADM_ETCD_VERSION;
  // Another etcd than kubeadm's default is pinned in ClusterConfiguration, or kubeadm upgrade reverts it.
  const etcdImageTag =
    etcdVersion === KUBEADM_ETCD_VERSION ? '' : `etcd:\n  local:\n    imageTag: ${etcdVersion}-0\n`;
  const extraArgs = enc ? `    - name: encryption-provider-config\n      value: ${ENCRYPTION_PATH}\n` : '';
  await writeFile(
    join(dir, 'kubeadm-config.yaml'),
    `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: demo
kubernetesVersion: ${KUBERNETES_VERSION}
controlPlaneEndpoint: api.demo.example:6443
networking:
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
  dnsDomain: cluster.local
apiServer:
  certSANs:
    - api.demo.example
${extraArgs ? `  extraArgs:\n${extraArgs}` : ''}${etcdImageTag}# Cilium replaces kube-proxy, so kubeadm never installed it.
proxy:
  disabled: true
`,
  );
  const issuer = opts.issuer ?? 'https://kubernetes.default.svc.cluster.local';
  const controlPlanes = opts.singleNode ? NODES.slice(0, 1) : NODES;
  for (const n of controlPlanes) {
    await mkdir(join(dir, 'manifests', n.name), { recursive: true });
    const command = [
      'kube-apiserver',
      `--advertise-address=${n.ip}`,
      '--secure-port=6443',
      '--etcd-servers=https://127.0.0.1:2379',
      `--service-account-issuer=${issuer}`,
      '--service-account-key-file=/etc/kubernetes/pki/sa.pub',
      '--service-account-signing-key-file=/etc/kubernetes/pki/sa.key',
      '--service-cluster-ip-range=10.96.0.0/12',
      ...(enc ? [`--encryption-provider-config=${ENCRYPTION_PATH}`] : []),
    ];
    await writeFile(
      join(dir, 'manifests', n.name, 'kube-apiserver.yaml'),
      `apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
  namespace: kube-system
  labels: {component: kube-apiserver, tier: control-plane}
spec:
  hostNetwork: true
  containers:
    - name: kube-apiserver
      image: registry.k8s.io/kube-apiserver:${KUBERNETES_VERSION}
      command:
${command.map((c) => `        - ${c}`).join('\n')}
`,
    );
    await writeFile(
      join(dir, 'manifests', n.name, 'etcd.yaml'),
      `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
  labels: {component: etcd, tier: control-plane}
spec:
  hostNetwork: true
  containers:
    - name: etcd
      image: registry.k8s.io/etcd:${etcdVersion}-0
      command:
        - etcd
        - --name=${n.name}
        - --advertise-client-urls=https://${n.ip}:2379
        - --listen-client-urls=https://127.0.0.1:2379,https://${n.ip}:2379
        - --initial-advertise-peer-urls=https://${n.ip}:2380
        - --listen-peer-urls=https://${n.ip}:2380
        - --data-dir=/var/lib/etcd
`,
    );
    for (const [component, flags] of Object.entries(CONTROLLERS)) {
      await writeFile(
        join(dir, 'manifests', n.name, `${component}.yaml`),
        `apiVersion: v1
kind: Pod
metadata:
  name: ${component}
  namespace: kube-system
  labels: {component: ${component}, tier: control-plane}
spec:
  hostNetwork: true
  containers:
    - name: ${component}
      image: registry.k8s.io/${component}:${KUBERNETES_VERSION}
      command:
        - ${component}
${flags.map((f) => `        - --${f}`).join('\n')}
`,
      );
    }
  }
  if (enc) {
    await writeFile(
      join(dir, 'encryption-config.yaml'),
      `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - ${enc.provider}:
          keys:
            - name: ${enc.keyName}
              secret: ${enc.secret}
      - identity: {}
`,
    );
  }
  await writeResources(join(dir, 'resources'), controlPlanes);
  await writeEtcdState(join(dir, 'etcd'), controlPlanes, etcdVersion);
  return { pki };
}

/** kube-controller-manager and kube-scheduler with the flags kubeadm v1.32 gives them, nothing more. */
const CONTROLLERS: Record<string, string[]> = {
  'kube-controller-manager': [
    'allocate-node-cidrs=true',
    'authentication-kubeconfig=/etc/kubernetes/controller-manager.conf',
    'authorization-kubeconfig=/etc/kubernetes/controller-manager.conf',
    'bind-address=127.0.0.1',
    'client-ca-file=/etc/kubernetes/pki/ca.crt',
    'cluster-cidr=10.244.0.0/16',
    'cluster-name=demo',
    'cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt',
    'cluster-signing-key-file=/etc/kubernetes/pki/ca.key',
    'controllers=*,bootstrapsigner,tokencleaner',
    'kubeconfig=/etc/kubernetes/controller-manager.conf',
    'leader-elect=true',
    'requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt',
    'root-ca-file=/etc/kubernetes/pki/ca.crt',
    'service-account-private-key-file=/etc/kubernetes/pki/sa.key',
    'service-cluster-ip-range=10.96.0.0/12',
    'use-service-account-credentials=true',
  ],
  'kube-scheduler': [
    'authentication-kubeconfig=/etc/kubernetes/scheduler.conf',
    'authorization-kubeconfig=/etc/kubernetes/scheduler.conf',
    'bind-address=127.0.0.1',
    'kubeconfig=/etc/kubernetes/scheduler.conf',
    'leader-elect=true',
  ],
};

type Obj = Record<string, unknown>;

const CREATED = '2025-03-04T08:15:00Z';
const KUBE_SYSTEM_HELM = {
  'meta.helm.sh/release-name': 'cilium',
  'meta.helm.sh/release-namespace': 'kube-system',
};

/** A stable uid per object, so two fixtures of the same cluster are the same bytes. */
function uid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function meta(kind: string, name: string, namespace?: string, extra: Obj = {}): Obj {
  return {
    name,
    ...(namespace ? { namespace } : {}),
    uid: uid(`${kind}/${namespace ?? ''}/${name}`),
    resourceVersion: '48211',
    creationTimestamp: CREATED,
    ...extra,
  };
}

function list(items: Obj[]): string {
  return stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items });
}

/** A Node as kubeadm registers it: control planes labelled and tainted NoSchedule (kubeadm's default). */
function nodeObject(n: { name: string; ip: string }, index: number, controlPlane: boolean): Obj {
  const podCIDR = `10.244.${index}.0/24`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta('Node', n.name, undefined, {
      annotations: {
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///var/run/containerd/containerd.sock',
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': n.name,
        'kubernetes.io/os': 'linux',
        ...(controlPlane
          ? {
              'node-role.kubernetes.io/control-plane': '',
              'node.kubernetes.io/exclude-from-external-load-balancers': '',
            }
          : {}),
      },
    }),
    spec: {
      podCIDR,
      podCIDRs: [podCIDR],
      ...(controlPlane
        ? { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] }
        : {}),
    },
    status: {
      addresses: [
        { type: 'InternalIP', address: n.ip },
        { type: 'Hostname', address: n.name },
      ],
      capacity: { cpu: '4', memory: '8136012Ki', 'ephemeral-storage': '51290592Ki', pods: '110' },
      allocatable: { cpu: '4', memory: '8033612Ki', 'ephemeral-storage': '47268185973', pods: '110' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: '2025-06-02T10:00:00Z',
          lastTransitionTime: CREATED,
        },
      ],
      nodeInfo: {
        architecture: 'amd64',
        containerRuntimeVersion: 'containerd://1.7.24',
        kernelVersion: '6.1.0-31-amd64',
        kubeProxyVersion: '',
        kubeletVersion: KUBERNETES_VERSION,
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
      },
    },
  };
}

/** The Cilium agent DaemonSet as the Helm chart installs it (API address set: kube-proxy replacement). */
function ciliumAgent(): Obj {
  const labels = {
    'k8s-app': 'cilium',
    'app.kubernetes.io/name': 'cilium-agent',
    'app.kubernetes.io/part-of': 'cilium',
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta('DaemonSet', 'cilium', 'kube-system', {
      annotations: { ...KUBE_SYSTEM_HELM, 'deprecated.daemonset.template.generation': '1' },
      labels: { ...labels, 'app.kubernetes.io/managed-by': 'Helm' },
      generation: 1,
    }),
    spec: {
      selector: { matchLabels: { 'k8s-app': 'cilium' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, maxSurge: 0 } },
      template: {
        metadata: { labels },
        spec: {
          hostNetwork: true,
          serviceAccountName: 'cilium',
          containers: [
            {
              name: 'cilium-agent',
              image: `quay.io/cilium/cilium:v${CILIUM_VERSION}`,
              command: ['cilium-agent'],
              args: ['--config-dir=/tmp/cilium/config-map'],
              env: [
                { name: 'K8S_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
                { name: 'KUBERNETES_SERVICE_HOST', value: 'api.demo.example' },
                { name: 'KUBERNETES_SERVICE_PORT', value: '6443' },
              ],
            },
          ],
          tolerations: [{ operator: 'Exists' }],
        },
      },
    },
  };
}

/** Cilium ≥ 1.16 runs Envoy in its own DaemonSet. */
function ciliumEnvoy(): Obj {
  const labels = {
    'k8s-app': 'cilium-envoy',
    'app.kubernetes.io/name': 'cilium-envoy',
    'app.kubernetes.io/part-of': 'cilium',
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta('DaemonSet', 'cilium-envoy', 'kube-system', {
      annotations: KUBE_SYSTEM_HELM,
      labels: { ...labels, 'app.kubernetes.io/managed-by': 'Helm' },
    }),
    spec: {
      selector: { matchLabels: { 'k8s-app': 'cilium-envoy' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } },
      template: {
        metadata: { labels },
        spec: {
          hostNetwork: true,
          containers: [
            {
              name: 'cilium-envoy',
              image:
                'quay.io/cilium/cilium-envoy:v1.30.9-1737073743-40a016d11c0d863b772961ed0168eea6fe6b10a5',
            },
          ],
        },
      },
    },
  };
}

/** kube-system/kubelet-config as kubeadm writes it: clusterDNS and clusterDomain from ClusterConfiguration. */
function kubeletConfig(): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: {
      anonymous: { enabled: false },
      webhook: { cacheTTL: '0s', enabled: true },
      x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
    cgroupDriver: 'systemd',
    clusterDNS: [DNS_SERVICE_IP],
    clusterDomain: 'cluster.local',
    containerRuntimeEndpoint: '',
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    maxPods: 110,
    rotateCertificates: true,
    staticPodPath: '/etc/kubernetes/manifests',
    syncFrequency: '0s',
  });
}

function ciliumConfig(): Obj {
  return {
    'cluster-name': 'demo',
    'cluster-id': '0',
    'cni-exclusive': 'true',
    'enable-ipv4': 'true',
    'enable-ipv6': 'false',
    'enable-hubble': 'false',
    ipam: 'kubernetes',
    'k8s-require-ipv4-pod-cidr': 'true',
    'k8s-service-host': 'api.demo.example',
    'k8s-service-port': '6443',
    'kube-proxy-replacement': 'true',
    'routing-mode': 'tunnel',
    'tunnel-protocol': 'vxlan',
    'write-cni-conf-when-ready': '/host/etc/cni/net.d/05-cilium.conflist',
  };
}

function configMap(name: string, data: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('ConfigMap', name, 'kube-system', extra),
    data,
  };
}

function service(namespace: string, name: string, clusterIP: string, spec: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta('Service', name, namespace, extra),
    spec: {
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      type: 'ClusterIP',
      ...spec,
    },
  };
}

/** resources/: what `kubectl get nodes` and `kubectl -n kube-system get ds,cm,svc -o yaml` print. */
async function writeResources(dir: string, controlPlanes: { name: string; ip: string }[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  const nodes = [
    ...controlPlanes.map((n, i) => nodeObject(n, i, true)),
    ...WORKERS.map((n, i) => nodeObject(n, NODES.length + i, false)),
  ];
  await writeFile(join(dir, 'nodes.yaml'), list(nodes));
  await writeFile(
    join(dir, 'kube-system.yaml'),
    list([
      ciliumAgent(),
      ciliumEnvoy(),
      configMap('kubelet-config', { kubelet: kubeletConfig() }),
      configMap('cilium-config', ciliumConfig(), {
        annotations: KUBE_SYSTEM_HELM,
        labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      }),
      service(
        'kube-system',
        'kube-dns',
        DNS_SERVICE_IP,
        {
          selector: { 'k8s-app': 'kube-dns' },
          ports: [
            { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
            { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
            { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
          ],
        },
        {
          labels: {
            'k8s-app': 'kube-dns',
            'kubernetes.io/cluster-service': 'true',
            'kubernetes.io/name': 'CoreDNS',
          },
        },
      ),
      service(
        'default',
        'kubernetes',
        '10.96.0.1',
        { ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
        { labels: { component: 'apiserver', provider: 'kubernetes' } },
      ),
    ]),
  );
}

/** A uint64 etcd id above 2^53, as etcdctl prints it: a bare JSON number JSON.parse would round. */
function etcdId(seed: string): string {
  const h = BigInt(`0x${createHash('sha256').update(`demo/etcd/${seed}`).digest('hex').slice(0, 16)}`);
  return (h | (1n << 63n)).toString();
}

/** etcd/: `etcdctl member list -w json`, `etcdctl endpoint status --cluster -w json`, /version, alarms. */
async function writeEtcdState(
  dir: string,
  members: { name: string; ip: string }[],
  version: string,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const clusterId = etcdId('cluster');
  const leader = etcdId(members[0]?.name ?? '');
  const header = (member: string, revision?: number) =>
    `{"cluster_id":${clusterId},"member_id":${etcdId(member)},${revision === undefined ? '' : `"revision":${revision},`}"raft_term":3}`;
  const memberList = members.map(
    (m) =>
      `{"ID":${etcdId(m.name)},"name":"${m.name}","peerURLs":["https://${m.ip}:2380"],"clientURLs":["https://${m.ip}:2379"]}`,
  );
  await writeFile(
    join(dir, 'member-list.json'),
    `{"header":${header(members[0]?.name ?? '')},"members":[${memberList.join(',')}]}\n`,
  );
  const status = members.map(
    (m, i) =>
      `{"Endpoint":"https://${m.ip}:2379","Status":{"header":${header(m.name, 52110)},"version":"${version}",` +
      `"dbSize":${24_113_152 + i * 4096},"leader":${leader},"raftIndex":${60_412 + i},"raftTerm":3,` +
      `"raftAppliedIndex":${60_412 + i},"dbSizeInUse":${11_988_992 + i * 4096}}}`,
  );
  await writeFile(join(dir, 'endpoint-status.json'), `[${status.join(',')}]\n`);
  const minor = version.split('.').slice(0, 2).join('.');
  await writeFile(
    join(dir, 'version.json'),
    `${JSON.stringify({ etcdserver: version, etcdcluster: `${minor}.0` })}\n`,
  );
  // No alarms: etcdctl prints only the header.
  await writeFile(join(dir, 'alarms.json'), `{"header":${header(members[0]?.name ?? '', 52110)}}\n`);
}
