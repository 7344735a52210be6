/**
 * Generates `examples/lab-cluster`: an offline "files directory" (docs/snapshot-layout.md §1) of a
 * realistic kubeadm cluster that carries the traps real kubeadm→Talos migrations hit, plus a README
 * that lists each trap, where it lives and which audit rule finds it.
 *
 *   npx tsx scripts/make-example.ts [OUT_DIR]        (default examples/lab-cluster)
 *
 * Everything is deterministic (names, UIDs, IPs, timestamps come from fixed seeds) except key
 * material: the PKI, the encryption key, the bootstrap-token secret and what is derived from them
 * (kube-public/cluster-info). Those live only in the files listed in KEY_MATERIAL_FILES, so a test
 * can compare every other file byte for byte with the committed copy. The output is built in a
 * temporary sibling directory and renamed into place.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { describeError, FerryError, usageError } from '../src/errors.js';
import { writeKubeadmPki } from '../src/pki/kubeadm-layout.js';
import { writeDirAtomic } from '../src/util/atomic-write.js';

// =============================================================================================
// The cluster

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
const SNAPSHOT_AT = Date.parse('2026-11-30T09:00:00Z');
/** Last control-plane reboot (kernel update): mirror pods and DaemonSet pods date from here. */
const LAST_REBOOT = Date.parse('2026-10-14T03:10:00Z');
const NODE_POOL_LABEL = 'lab.example/pool';

/** Files whose content includes key material (new on every run); everything else is reproducible. */
export const KEY_MATERIAL_FILES: readonly string[] = [
  'pki/',
  'encryption-config.yaml',
  'resources/bootstrap-token.yaml',
  'resources/cluster-info.yaml',
];

// =============================================================================================
// Deterministic helpers

type Obj = Record<string, unknown>;
interface K8s {
  apiVersion: string;
  kind: string;
  metadata: Obj & { name: string; namespace?: string; uid?: string };
  [key: string]: unknown;
}

function sha(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

/** A UUID (v4 layout) derived from a seed, so UIDs are stable across runs. */
export function uidFor(seed: string): string {
  const h = sha(`uid/${seed}`).toString('hex');
  const variant = ((Number.parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Kubernetes' "safe" alphabet for generated name suffixes (no vowels, no confusable digits). */
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

function suffix(seed: string, len: number): string {
  const h = sha(`suffix/${seed}`);
  let out = '';
  for (let i = 0; i < len; i++) out += SAFE[(h[i] ?? 0) % SAFE.length];
  return out;
}

function hex(seed: string, len: number): string {
  return sha(`hex/${seed}`).toString('hex').slice(0, len);
}

/** etcd member/cluster ids: uint64 above 2^63 (so always above 2^53), as decimal strings. */
export function etcdIdFor(seed: string): string {
  const v = sha(`etcd/${seed}`).readBigUInt64BE(0) | (1n << 63n);
  return v.toString();
}

function at(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function plus(iso: string, seconds: number): string {
  return at(Date.parse(iso) + seconds * 1000);
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

function b64url(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

function nodeByName(name: string): NodeDef {
  const n = NODES.find((x) => x.name === name);
  if (!n) throw new Error(`unknown node ${name}`);
  return n;
}

/** Pod IPs per node, handed out in creation order from the node's /24 (Cilium ipam: kubernetes). */
const nextPodHost = new Map<string, number>();
function podIpOn(n: NodeDef): string {
  const host = nextPodHost.get(n.name) ?? 17;
  nextPodHost.set(n.name, host + 1);
  return `10.244.${n.cidrIndex}.${host}`;
}

// =============================================================================================
// Serialization (kubectl / kubeadm style)

/** Go's YAML marshaller sorts keys and does not indent sequences under their key. */
function toYaml(doc: unknown): string {
  return stringify(doc, { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
}

function kubectlYamlList(items: K8s[]): string {
  return toYaml({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } });
}

function kubectlJsonList(items: K8s[]): string {
  return `${JSON.stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }, null, 4)}\n`;
}

function multiDoc(items: K8s[]): string {
  return items.map((i) => `---\n${toYaml(i)}`).join('');
}

// =============================================================================================
// Object metadata

let resourceVersion = 4_812_000;
function meta(
  kind: string,
  name: string,
  namespace: string | undefined,
  created: string,
  extra: Obj = {},
): K8s['metadata'] {
  resourceVersion += 17;
  const m: K8s['metadata'] = {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    uid: uidFor(`${kind}/${namespace ?? ''}/${name}`),
    resourceVersion: String(resourceVersion),
    creationTimestamp: created,
    ...extra,
  };
  return m;
}

interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

function ownerRef(owner: K8s): OwnerRef {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

// =============================================================================================
// kubeadm configuration

function clusterConfiguration(): Obj {
  const o = CLUSTER.oidc;
  return {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'ClusterConfiguration',
    clusterName: CLUSTER.name,
    kubernetesVersion: CLUSTER.kubernetesVersion,
    controlPlaneEndpoint: `${CLUSTER.endpointHost}:${CLUSTER.endpointPort}`,
    certificatesDir: '/etc/kubernetes/pki',
    imageRepository: 'registry.k8s.io',
    encryptionAlgorithm: 'RSA-2048',
    caCertificateValidityPeriod: '87600h0m0s',
    certificateValidityPeriod: '8760h0m0s',
    networking: {
      dnsDomain: CLUSTER.dnsDomain,
      podSubnet: CLUSTER.podSubnet,
      serviceSubnet: CLUSTER.serviceSubnet,
    },
    apiServer: {
      // kubeadm adds the endpoint host itself; the VIP is listed so direct-IP clients verify too.
      // No 127.0.0.1 / localhost: the KubePrism trap.
      certSANs: [CLUSTER.endpointHost, CLUSTER.vip],
      extraArgs: [
        { name: 'oidc-issuer-url', value: o.issuerUrl },
        { name: 'oidc-client-id', value: o.clientId },
        { name: 'oidc-username-claim', value: o.usernameClaim },
        { name: 'oidc-groups-claim', value: o.groupsClaim },
        { name: 'encryption-provider-config', value: CLUSTER.encryptionConfigPath },
        { name: 'audit-policy-file', value: '/etc/kubernetes/audit/policy.yaml' },
        { name: 'audit-log-path', value: '/var/log/kubernetes/audit/audit.log' },
        { name: 'audit-log-maxage', value: '7' },
        { name: 'audit-log-maxbackup', value: '4' },
        { name: 'audit-log-maxsize', value: '100' },
      ],
      extraVolumes: [
        {
          name: 'encryption-config',
          hostPath: dirname(CLUSTER.encryptionConfigPath),
          mountPath: dirname(CLUSTER.encryptionConfigPath),
          readOnly: true,
          pathType: 'DirectoryOrCreate',
        },
        {
          name: 'audit-policy',
          hostPath: '/etc/kubernetes/audit',
          mountPath: '/etc/kubernetes/audit',
          readOnly: true,
          pathType: 'DirectoryOrCreate',
        },
        {
          name: 'audit-log',
          hostPath: '/var/log/kubernetes/audit',
          mountPath: '/var/log/kubernetes/audit',
          pathType: 'DirectoryOrCreate',
        },
      ],
    },
    // Prometheus scrapes KCM and scheduler from the node network, hence the wider bind address.
    controllerManager: { extraArgs: [{ name: 'bind-address', value: '0.0.0.0' }] },
    scheduler: { extraArgs: [{ name: 'bind-address', value: '0.0.0.0' }] },
    etcd: {
      local: {
        dataDir: '/var/lib/etcd',
        extraArgs: [{ name: 'listen-metrics-urls', value: 'http://0.0.0.0:2381' }],
      },
    },
    dns: {},
    // Cilium runs with kubeProxyReplacement=true, so kubeadm never installed kube-proxy.
    proxy: { disabled: true },
  };
}

function initConfiguration(): Obj {
  const cp1 = nodeByName('cp-1');
  return {
    apiVersion: 'kubeadm.k8s.io/v1beta4',
    kind: 'InitConfiguration',
    localAPIEndpoint: { advertiseAddress: cp1.ip, bindPort: CLUSTER.endpointPort },
    nodeRegistration: {
      name: cp1.name,
      criSocket: 'unix:///var/run/containerd/containerd.sock',
      imagePullPolicy: 'IfNotPresent',
      kubeletExtraArgs: [{ name: 'node-ip', value: cp1.ip }],
      // Empty list: kubeadm registers the control planes without the NoSchedule taint.
      taints: [],
    },
  };
}

/** What the operator put in the kubeadm config file (the kubelet-config ConfigMap holds the defaulted form). */
const KUBELET_CUSTOM = {
  cgroupDriver: 'systemd',
  maxPods: 150,
  systemReserved: { cpu: '250m', memory: '1Gi' },
  kubeReserved: { cpu: '250m', memory: '512Mi' },
  evictionHard: { 'memory.available': '300Mi', 'nodefs.available': '10%' },
  shutdownGracePeriod: '60s',
  shutdownGracePeriodCriticalPods: '20s',
};

function kubeletConfigurationInput(): Obj {
  return { apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...KUBELET_CUSTOM };
}

function kubeletConfigurationStored(): Obj {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: {
      anonymous: { enabled: false },
      webhook: { cacheTTL: '0s', enabled: true },
      x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
    },
    authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
    clusterDNS: [CLUSTER.dnsServiceIP],
    clusterDomain: CLUSTER.dnsDomain,
    containerRuntimeEndpoint: '',
    cpuManagerReconcilePeriod: '0s',
    evictionPressureTransitionPeriod: '0s',
    fileCheckFrequency: '0s',
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    httpCheckFrequency: '0s',
    imageMaximumGCAge: '0s',
    imageMinimumGCAge: '0s',
    logging: {
      flushFrequency: 0,
      options: { json: { infoBufferSize: '0' }, text: { infoBufferSize: '0' } },
      verbosity: 0,
    },
    memorySwap: {},
    nodeStatusReportFrequency: '0s',
    nodeStatusUpdateFrequency: '0s',
    rotateCertificates: true,
    runtimeRequestTimeout: '0s',
    staticPodPath: '/etc/kubernetes/manifests',
    streamingConnectionIdleTimeout: '0s',
    syncFrequency: '0s',
    volumeStatsAggPeriod: '0s',
    ...KUBELET_CUSTOM,
  };
}

function kubeadmConfigFile(): string {
  const header = [
    '# The kubeadm configuration cp-1 was initialised with (`kubeadm init --config kubeadm-config.yaml',
    '# --upload-certs`); cp-2/cp-3 joined with `kubeadm join --control-plane`. No KubeProxyConfiguration:',
    '# kube-proxy is disabled (proxy.disabled) because Cilium replaces it (kubeProxyReplacement=true).',
    '',
  ].join('\n');
  return (
    header + multiDoc([clusterConfiguration(), initConfiguration(), kubeletConfigurationInput()] as K8s[])
  );
}

// =============================================================================================
// Static pods (/etc/kubernetes/manifests) as kubeadm v1.32 writes them

interface HostVol {
  name: string;
  path: string;
  type: string;
  mountPath?: string;
  readOnly?: boolean;
}

function flagsToCommand(binary: string, flags: [string, string][]): string[] {
  const sorted = [...flags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return [binary, ...sorted.map(([k, v]) => `--${k}=${v}`)];
}

function hostVolumes(vols: HostVol[]): { volumes: Obj[]; volumeMounts: Obj[] } {
  const sorted = [...vols].sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    volumes: sorted.map((v) => ({ hostPath: { path: v.path, type: v.type }, name: v.name })),
    volumeMounts: sorted.map((v) => ({
      mountPath: v.mountPath ?? v.path,
      name: v.name,
      ...(v.readOnly ? { readOnly: true } : {}),
    })),
  };
}

const CA_VOLUMES: HostVol[] = [
  { name: 'ca-certs', path: '/etc/ssl/certs', type: 'DirectoryOrCreate', readOnly: true },
  { name: 'etc-ca-certificates', path: '/etc/ca-certificates', type: 'DirectoryOrCreate', readOnly: true },
  {
    name: 'usr-local-share-ca-certificates',
    path: '/usr/local/share/ca-certificates',
    type: 'DirectoryOrCreate',
    readOnly: true,
  },
  {
    name: 'usr-share-ca-certificates',
    path: '/usr/share/ca-certificates',
    type: 'DirectoryOrCreate',
    readOnly: true,
  },
];

function probe(
  host: string,
  path: string,
  port: number,
  scheme: string,
  failureThreshold: number,
  extra: Obj = {},
) {
  return { failureThreshold, httpGet: { host, path, port, scheme }, ...extra };
}

function staticPod(
  component: string,
  image: string,
  command: string[],
  vols: HostVol[],
  probes: Obj,
  requests: Obj,
  annotations?: Obj,
): K8s {
  const { volumes, volumeMounts } = hostVolumes(vols);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(annotations ? { annotations } : {}),
      creationTimestamp: null,
      labels: { component, tier: 'control-plane' },
      name: component,
      namespace: 'kube-system',
    } as K8s['metadata'],
    spec: {
      containers: [
        {
          command,
          image,
          imagePullPolicy: 'IfNotPresent',
          ...probes,
          name: component,
          resources: { requests },
          volumeMounts,
        },
      ],
      hostNetwork: true,
      priority: 2000001000,
      priorityClassName: 'system-node-critical',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      volumes,
    },
    status: {},
  };
}

function apiserverManifest(n: NodeDef): K8s {
  const o = CLUSTER.oidc;
  const flags: [string, string][] = [
    ['advertise-address', n.ip],
    ['allow-privileged', 'true'],
    ['audit-log-maxage', '7'],
    ['audit-log-maxbackup', '4'],
    ['audit-log-maxsize', '100'],
    ['audit-log-path', '/var/log/kubernetes/audit/audit.log'],
    ['audit-policy-file', '/etc/kubernetes/audit/policy.yaml'],
    ['authorization-mode', 'Node,RBAC'],
    ['client-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['enable-admission-plugins', 'NodeRestriction'],
    ['enable-bootstrap-token-auth', 'true'],
    ['encryption-provider-config', CLUSTER.encryptionConfigPath],
    ['etcd-cafile', '/etc/kubernetes/pki/etcd/ca.crt'],
    ['etcd-certfile', '/etc/kubernetes/pki/apiserver-etcd-client.crt'],
    ['etcd-keyfile', '/etc/kubernetes/pki/apiserver-etcd-client.key'],
    ['etcd-servers', 'https://127.0.0.1:2379'],
    ['kubelet-client-certificate', '/etc/kubernetes/pki/apiserver-kubelet-client.crt'],
    ['kubelet-client-key', '/etc/kubernetes/pki/apiserver-kubelet-client.key'],
    ['kubelet-preferred-address-types', 'InternalIP,ExternalIP,Hostname'],
    ['oidc-client-id', o.clientId],
    ['oidc-groups-claim', o.groupsClaim],
    ['oidc-issuer-url', o.issuerUrl],
    ['oidc-username-claim', o.usernameClaim],
    ['proxy-client-cert-file', '/etc/kubernetes/pki/front-proxy-client.crt'],
    ['proxy-client-key-file', '/etc/kubernetes/pki/front-proxy-client.key'],
    ['requestheader-allowed-names', 'front-proxy-client'],
    ['requestheader-client-ca-file', '/etc/kubernetes/pki/front-proxy-ca.crt'],
    ['requestheader-extra-headers-prefix', 'X-Remote-Extra-'],
    ['requestheader-group-headers', 'X-Remote-Group'],
    ['requestheader-username-headers', 'X-Remote-User'],
    ['secure-port', String(CLUSTER.endpointPort)],
    ['service-account-issuer', CLUSTER.serviceAccountIssuer],
    ['service-account-key-file', '/etc/kubernetes/pki/sa.pub'],
    ['service-account-signing-key-file', '/etc/kubernetes/pki/sa.key'],
    ['service-cluster-ip-range', CLUSTER.serviceSubnet],
    ['tls-cert-file', '/etc/kubernetes/pki/apiserver.crt'],
    ['tls-private-key-file', '/etc/kubernetes/pki/apiserver.key'],
  ];
  const vols: HostVol[] = [
    ...CA_VOLUMES,
    { name: 'k8s-certs', path: '/etc/kubernetes/pki', type: 'DirectoryOrCreate', readOnly: true },
    {
      name: 'encryption-config',
      path: dirname(CLUSTER.encryptionConfigPath),
      type: 'DirectoryOrCreate',
      readOnly: true,
    },
    { name: 'audit-policy', path: '/etc/kubernetes/audit', type: 'DirectoryOrCreate', readOnly: true },
    { name: 'audit-log', path: '/var/log/kubernetes/audit', type: 'DirectoryOrCreate' },
  ];
  const port = CLUSTER.endpointPort;
  const probes = {
    livenessProbe: probe(n.ip, '/livez', port, 'HTTPS', 8, {
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 15,
    }),
    readinessProbe: probe(n.ip, '/readyz', port, 'HTTPS', 3, { periodSeconds: 1, timeoutSeconds: 15 }),
    startupProbe: probe(n.ip, '/livez', port, 'HTTPS', 24, {
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 15,
    }),
  };
  return staticPod(
    'kube-apiserver',
    `registry.k8s.io/kube-apiserver:${CLUSTER.kubernetesVersion}`,
    flagsToCommand('kube-apiserver', flags),
    vols,
    probes,
    { cpu: '250m' },
    { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': `${n.ip}:${port}` },
  );
}

function controllerManagerManifest(): K8s {
  const flags: [string, string][] = [
    ['allocate-node-cidrs', 'true'],
    ['authentication-kubeconfig', '/etc/kubernetes/controller-manager.conf'],
    ['authorization-kubeconfig', '/etc/kubernetes/controller-manager.conf'],
    ['bind-address', '0.0.0.0'],
    ['client-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['cluster-cidr', CLUSTER.podSubnet],
    ['cluster-name', CLUSTER.name],
    ['cluster-signing-cert-file', '/etc/kubernetes/pki/ca.crt'],
    ['cluster-signing-key-file', '/etc/kubernetes/pki/ca.key'],
    ['controllers', '*,bootstrapsigner,tokencleaner'],
    ['kubeconfig', '/etc/kubernetes/controller-manager.conf'],
    ['leader-elect', 'true'],
    ['requestheader-client-ca-file', '/etc/kubernetes/pki/front-proxy-ca.crt'],
    ['root-ca-file', '/etc/kubernetes/pki/ca.crt'],
    ['service-account-private-key-file', '/etc/kubernetes/pki/sa.key'],
    ['service-cluster-ip-range', CLUSTER.serviceSubnet],
    ['use-service-account-credentials', 'true'],
  ];
  const vols: HostVol[] = [
    ...CA_VOLUMES,
    {
      name: 'flexvolume-dir',
      path: '/usr/libexec/kubernetes/kubelet-plugins/volume/exec',
      type: 'DirectoryOrCreate',
    },
    { name: 'k8s-certs', path: '/etc/kubernetes/pki', type: 'DirectoryOrCreate', readOnly: true },
    {
      name: 'kubeconfig',
      path: '/etc/kubernetes/controller-manager.conf',
      type: 'FileOrCreate',
      readOnly: true,
    },
  ];
  const probes = {
    livenessProbe: probe('127.0.0.1', '/healthz', 10257, 'HTTPS', 8, {
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 15,
    }),
    startupProbe: probe('127.0.0.1', '/healthz', 10257, 'HTTPS', 24, {
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 15,
    }),
  };
  return staticPod(
    'kube-controller-manager',
    `registry.k8s.io/kube-controller-manager:${CLUSTER.kubernetesVersion}`,
    flagsToCommand('kube-controller-manager', flags),
    vols,
    probes,
    { cpu: '200m' },
  );
}

function schedulerManifest(): K8s {
  const flags: [string, string][] = [
    ['authentication-kubeconfig', '/etc/kubernetes/scheduler.conf'],
    ['authorization-kubeconfig', '/etc/kubernetes/scheduler.conf'],
    ['bind-address', '0.0.0.0'],
    ['kubeconfig', '/etc/kubernetes/scheduler.conf'],
    ['leader-elect', 'true'],
  ];
  const vols: HostVol[] = [
    { name: 'kubeconfig', path: '/etc/kubernetes/scheduler.conf', type: 'FileOrCreate', readOnly: true },
  ];
  const timing = { initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 15 };
  const probes = {
    livenessProbe: probe('127.0.0.1', '/livez', 10259, 'HTTPS', 8, timing),
    readinessProbe: probe('127.0.0.1', '/readyz', 10259, 'HTTPS', 3, {
      periodSeconds: 1,
      timeoutSeconds: 15,
    }),
    startupProbe: probe('127.0.0.1', '/livez', 10259, 'HTTPS', 24, timing),
  };
  return staticPod(
    'kube-scheduler',
    `registry.k8s.io/kube-scheduler:${CLUSTER.kubernetesVersion}`,
    flagsToCommand('kube-scheduler', flags),
    vols,
    probes,
    { cpu: '100m' },
  );
}

function etcdManifest(n: NodeDef): K8s {
  // Members joined in order; each saw the members before it plus itself (kubeadm join --control-plane).
  const upTo = CONTROL_PLANES.slice(0, CONTROL_PLANES.findIndex((c) => c.name === n.name) + 1);
  const flags: [string, string][] = [
    ['advertise-client-urls', `https://${n.ip}:2379`],
    ['cert-file', '/etc/kubernetes/pki/etcd/server.crt'],
    ['client-cert-auth', 'true'],
    ['data-dir', '/var/lib/etcd'],
    ['experimental-initial-corrupt-check', 'true'],
    ['experimental-watch-progress-notify-interval', '5s'],
    ['initial-advertise-peer-urls', `https://${n.ip}:2380`],
    ['initial-cluster', upTo.map((c) => `${c.name}=https://${c.ip}:2380`).join(',')],
    ['key-file', '/etc/kubernetes/pki/etcd/server.key'],
    ['listen-client-urls', `https://127.0.0.1:2379,https://${n.ip}:2379`],
    ['listen-metrics-urls', 'http://0.0.0.0:2381'],
    ['listen-peer-urls', `https://${n.ip}:2380`],
    ['name', n.name],
    ['peer-cert-file', '/etc/kubernetes/pki/etcd/peer.crt'],
    ['peer-client-cert-auth', 'true'],
    ['peer-key-file', '/etc/kubernetes/pki/etcd/peer.key'],
    ['peer-trusted-ca-file', '/etc/kubernetes/pki/etcd/ca.crt'],
    ['snapshot-count', '10000'],
    ['trusted-ca-file', '/etc/kubernetes/pki/etcd/ca.crt'],
  ];
  if (upTo.length > 1) flags.push(['initial-cluster-state', 'existing']);
  const vols: HostVol[] = [
    { name: 'etcd-certs', path: '/etc/kubernetes/pki/etcd', type: 'DirectoryOrCreate' },
    { name: 'etcd-data', path: '/var/lib/etcd', type: 'DirectoryOrCreate' },
  ];
  const timing = { initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 15 };
  const probes = {
    livenessProbe: probe('127.0.0.1', '/livez', 2381, 'HTTP', 8, timing),
    readinessProbe: probe('127.0.0.1', '/readyz', 2381, 'HTTP', 3, { periodSeconds: 1, timeoutSeconds: 15 }),
    startupProbe: probe('127.0.0.1', '/readyz', 2381, 'HTTP', 24, timing),
  };
  return staticPod(
    'etcd',
    CLUSTER.etcdImage,
    flagsToCommand('etcd', flags),
    vols,
    probes,
    { cpu: '100m', memory: '100Mi' },
    { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': `https://${n.ip}:2379` },
  );
}

export const STATIC_COMPONENTS = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
] as const;

function staticManifests(n: NodeDef): Record<(typeof STATIC_COMPONENTS)[number], K8s> {
  return {
    'kube-apiserver': apiserverManifest(n),
    'kube-controller-manager': controllerManagerManifest(),
    'kube-scheduler': schedulerManifest(),
    etcd: etcdManifest(n),
  };
}

// =============================================================================================
// Pod templates and pods

function withContainerDefaults(c: Obj): Obj {
  const out: Obj = {
    imagePullPolicy: 'IfNotPresent',
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    ...c,
  };
  for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const pr = out[p] as Obj | undefined;
    if (pr)
      out[p] = { failureThreshold: 3, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 1, ...pr };
  }
  const ports = out['ports'] as Obj[] | undefined;
  if (ports) out['ports'] = ports.map((p) => ({ protocol: 'TCP', ...p }));
  return out;
}

function withVolumeDefaults(v: Obj): Obj {
  const cm = v['configMap'] as Obj | undefined;
  const secret = v['secret'] as Obj | undefined;
  const hp = v['hostPath'] as Obj | undefined;
  if (cm) return { ...v, configMap: { defaultMode: 420, ...cm } };
  if (secret) return { ...v, secret: { defaultMode: 420, ...secret } };
  if (hp) return { ...v, hostPath: { type: '', ...hp } };
  return v;
}

/** A pod template as the API server returns it inside a workload (defaults filled in). */
function template(labels: Record<string, string>, spec: Obj, annotations?: Record<string, string>): Obj {
  const containers = (spec['containers'] as Obj[]).map(withContainerDefaults);
  const initContainers = (spec['initContainers'] as Obj[] | undefined)?.map(withContainerDefaults);
  const volumes = (spec['volumes'] as Obj[] | undefined)?.map(withVolumeDefaults);
  return {
    metadata: { ...(annotations ? { annotations } : {}), creationTimestamp: null, labels },
    spec: {
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      ...spec,
      containers,
      ...(initContainers ? { initContainers } : {}),
      ...(volumes ? { volumes } : {}),
    },
  };
}

const PRIORITY: Record<string, number> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

function qosClass(containers: Obj[]): string {
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const r = (c['resources'] ?? {}) as { requests?: Obj; limits?: Obj };
    if (r.requests || r.limits) any = true;
    const lim = r.limits ?? {};
    const req = r.requests ?? lim;
    if (!lim['cpu'] || !lim['memory'] || req['cpu'] !== lim['cpu'] || req['memory'] !== lim['memory'])
      guaranteed = false;
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

interface PodArgs {
  namespace: string;
  name: string;
  template: Obj;
  node: NodeDef;
  created: string;
  owner?: K8s;
  extraLabels?: Record<string, string>;
  daemonSet?: boolean;
  phase?: 'Running' | 'Succeeded';
  /** For the mirror pods of static pods: no service account, kubelet-specific metadata. */
  mirror?: { annotations: Obj; ownerNode: K8s };
}

/** Service-account token volume the admission plugin injects into every pod that mounts one. */
function kubeApiAccess(seed: string): { volume: Obj; mount: Obj } {
  const name = `kube-api-access-${suffix(seed, 5)}`;
  return {
    volume: {
      name,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
          {
            downwardAPI: {
              items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }],
            },
          },
        ],
      },
    },
    mount: { mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', name, readOnly: true },
  };
}

function daemonSetTolerations(hostNetwork: boolean): Obj[] {
  const t: Obj[] = [
    { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists' },
    { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists' },
    { effect: 'NoSchedule', key: 'node.kubernetes.io/disk-pressure', operator: 'Exists' },
    { effect: 'NoSchedule', key: 'node.kubernetes.io/memory-pressure', operator: 'Exists' },
    { effect: 'NoSchedule', key: 'node.kubernetes.io/pid-pressure', operator: 'Exists' },
    { effect: 'NoSchedule', key: 'node.kubernetes.io/unschedulable', operator: 'Exists' },
  ];
  if (hostNetwork)
    t.push({ effect: 'NoSchedule', key: 'node.kubernetes.io/network-unavailable', operator: 'Exists' });
  return t;
}

function containerStatus(
  c: Obj,
  seed: string,
  started: string,
  phase: 'Running' | 'Succeeded',
  init: boolean,
): Obj {
  const done = init || phase === 'Succeeded';
  return {
    containerID: `containerd://${hex(`ctr/${seed}/${String(c['name'])}`, 64)}`,
    image: c['image'],
    lastState: {},
    name: c['name'],
    ready: !done,
    restartCount: 0,
    started: !done,
    state: done
      ? {
          terminated: {
            containerID: `containerd://${hex(`ctr/${seed}/${String(c['name'])}`, 64)}`,
            exitCode: 0,
            finishedAt: plus(started, init ? 3 : 412),
            reason: 'Completed',
            startedAt: started,
          },
        }
      : { running: { startedAt: plus(started, 4) } },
  };
}

function makePod(a: PodArgs): K8s {
  const tmeta = (a.template['metadata'] ?? {}) as Obj;
  const tspec = structuredClone(a.template['spec']) as Obj;
  const hostNetwork = tspec['hostNetwork'] === true;
  const seed = `${a.namespace}/${a.name}`;
  const phase = a.phase ?? 'Running';

  let containers = tspec['containers'] as Obj[];
  let initContainers = tspec['initContainers'] as Obj[] | undefined;
  let volumes = (tspec['volumes'] as Obj[] | undefined) ?? [];
  if (!a.mirror && tspec['automountServiceAccountToken'] !== false) {
    const acc = kubeApiAccess(seed);
    const mount = (c: Obj): Obj => ({
      ...c,
      volumeMounts: [...((c['volumeMounts'] as Obj[]) ?? []), acc.mount],
    });
    containers = containers.map(mount);
    initContainers = initContainers?.map(mount);
    volumes = [...volumes, acc.volume];
  }
  let tolerations = (tspec['tolerations'] as Obj[] | undefined) ?? [];
  if (a.daemonSet) tolerations = [...tolerations, ...daemonSetTolerations(hostNetwork)];
  else if (!a.mirror) {
    tolerations = [
      ...tolerations,
      {
        effect: 'NoExecute',
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        tolerationSeconds: 300,
      },
      {
        effect: 'NoExecute',
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        tolerationSeconds: 300,
      },
    ];
  } else tolerations = [{ effect: 'NoExecute', operator: 'Exists' }];

  const priorityClassName = tspec['priorityClassName'] as string | undefined;
  const spec: Obj = {
    ...tspec,
    ...(a.daemonSet
      ? {
          affinity: {
            ...((tspec['affinity'] as Obj | undefined) ?? {}),
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchFields: [{ key: 'metadata.name', operator: 'In', values: [a.node.name] }] },
                ],
              },
            },
          },
        }
      : {}),
    containers,
    ...(initContainers ? { initContainers } : {}),
    enableServiceLinks: true,
    nodeName: a.node.name,
    preemptionPolicy: 'PreemptLowerPriority',
    priority: priorityClassName ? (PRIORITY[priorityClassName] ?? 0) : 0,
    ...(a.mirror
      ? {}
      : {
          serviceAccount: (tspec['serviceAccountName'] as string | undefined) ?? 'default',
          serviceAccountName: (tspec['serviceAccountName'] as string | undefined) ?? 'default',
        }),
    tolerations,
    ...(volumes.length ? { volumes } : {}),
  };
  if (a.mirror) {
    Object.assign(spec, {
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: 30,
    });
  }

  const podIP = hostNetwork ? a.node.ip : podIpOn(a.node);
  const started = plus(a.created, 1);
  const labels = { ...((tmeta['labels'] as Obj | undefined) ?? {}), ...(a.extraLabels ?? {}) };
  const annotations = a.mirror?.annotations ?? (tmeta['annotations'] as Obj | undefined);
  // The kubelet makes the Node the controller of a mirror pod (without blockOwnerDeletion).
  const mirrorOwner = a.mirror
    ? (({ blockOwnerDeletion: _, ...rest }: OwnerRef) => rest)(ownerRef(a.mirror.ownerNode))
    : undefined;
  const generateName = a.owner && a.owner.kind !== 'StatefulSet' ? a.name.replace(/[^-]+$/, '') : undefined;
  const ready = phase === 'Running';
  const cond = (type: string, status: boolean, t: string) => ({
    lastProbeTime: null,
    lastTransitionTime: t,
    status: status ? 'True' : 'False',
    type,
    ...((type === 'Ready' || type === 'ContainersReady') && !status ? { reason: 'PodCompleted' } : {}),
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta('Pod', a.name, a.namespace, a.created, {
        ...(annotations ? { annotations } : {}),
        labels,
        ...(generateName ? { generateName } : {}),
        ...(a.owner ? { ownerReferences: [ownerRef(a.owner)] } : {}),
        ...(mirrorOwner ? { ownerReferences: [mirrorOwner] } : {}),
      }),
    },
    spec,
    status: {
      conditions: [
        cond('PodReadyToStartContainers', ready, plus(a.created, 2)),
        cond('Initialized', true, plus(a.created, initContainers ? 20 : 1)),
        cond('Ready', ready, plus(a.created, 30)),
        cond('ContainersReady', ready, plus(a.created, 30)),
        cond('PodScheduled', true, a.created),
      ],
      containerStatuses: containers.map((c) => containerStatus(c, seed, started, phase, false)),
      hostIP: a.node.ip,
      hostIPs: [{ ip: a.node.ip }],
      ...(initContainers
        ? { initContainerStatuses: initContainers.map((c) => containerStatus(c, seed, started, phase, true)) }
        : {}),
      phase,
      podIP,
      podIPs: [{ ip: podIP }],
      qosClass: qosClass(containers),
      startTime: a.created,
    },
  };
}

// =============================================================================================
// Nodes

function nodeObject(n: NodeDef): K8s {
  const cp = n.role === 'control-plane';
  const memCapacity = n.memoryKi;
  // allocatable = capacity − systemReserved (1Gi) − kubeReserved (512Mi) − evictionHard (300Mi)
  const memAllocatable = memCapacity - 1048576 - 524288 - 307200;
  const storageCapacityKi = 102626232;
  const storageAllocatable = Math.floor(storageCapacityKi * 1024 * 0.9);
  const heartbeat = at(SNAPSHOT_AT - 12_000);
  const condition = (type: string, status: string, reason: string, message: string, since: string) => ({
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: since,
    message,
    reason,
    status,
    type,
  });
  const since = cp ? at(LAST_REBOOT + 95_000) : plus(n.created, 60);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta('Node', n.name, undefined, n.created, {
      annotations: {
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({
          'cinder.csi.openstack.org': uidFor(`instance/${n.name}`),
        }),
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': n.name,
        'kubernetes.io/os': 'linux',
        'topology.cinder.csi.openstack.org/zone': 'nova',
        ...(cp
          ? {
              'node-role.kubernetes.io/control-plane': '',
              'node.kubernetes.io/exclude-from-external-load-balancers': '',
            }
          : {}),
        ...(n.pool ? { [NODE_POOL_LABEL]: n.pool } : {}),
      },
    }),
    // No taints on the control planes: kubeadm registered them with `taints: []`.
    spec: { podCIDR: `10.244.${n.cidrIndex}.0/24`, podCIDRs: [`10.244.${n.cidrIndex}.0/24`] },
    status: {
      addresses: [
        { address: n.ip, type: 'InternalIP' },
        { address: n.name, type: 'Hostname' },
      ],
      allocatable: {
        cpu: `${n.cpu * 1000 - 500}m`,
        'ephemeral-storage': String(storageAllocatable),
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memAllocatable}Ki`,
        pods: '150',
      },
      capacity: {
        cpu: String(n.cpu),
        'ephemeral-storage': `${storageCapacityKi}Ki`,
        'hugepages-1Gi': '0',
        'hugepages-2Mi': '0',
        memory: `${memCapacity}Ki`,
        pods: '150',
      },
      conditions: [
        condition('NetworkUnavailable', 'False', 'CiliumIsUp', 'Cilium is running on this node', since),
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
          since,
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', since),
        condition(
          'PIDPressure',
          'False',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
          since,
        ),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', since),
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: uidFor(`boot/${n.name}`),
        containerRuntimeVersion: CLUSTER.containerd,
        kernelVersion: CLUSTER.kernel,
        kubeProxyVersion: '',
        kubeletVersion: CLUSTER.kubernetesVersion,
        machineID: hex(`machine/${n.name}`, 32),
        operatingSystem: 'linux',
        osImage: CLUSTER.osImage,
        systemUUID: uidFor(`instance/${n.name}`),
      },
    },
  };
}

// =============================================================================================
// Workloads

interface Workloads {
  deployments: K8s[];
  replicasets: K8s[];
  daemonsets: K8s[];
  statefulsets: K8s[];
  jobs: K8s[];
  cronjobs: K8s[];
  pods: K8s[];
  pdbs: K8s[];
}

function emptyWorkloads(): Workloads {
  return {
    deployments: [],
    replicasets: [],
    daemonsets: [],
    statefulsets: [],
    jobs: [],
    cronjobs: [],
    pods: [],
    pdbs: [],
  };
}

interface DeploymentDef {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  nodes: string[];
  template: Obj;
  created: string;
  podsCreated: string;
  revision: number;
  strategy?: Obj;
  /** Older revisions kept at 0 replicas, as a rollout leaves them. */
  oldRevisions?: number;
}

function addDeployment(w: Workloads, d: DeploymentDef): K8s {
  const replicas = d.nodes.length;
  const deployment: K8s = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta('Deployment', d.name, d.namespace, d.created, {
      annotations: { 'deployment.kubernetes.io/revision': String(d.revision) },
      generation: d.revision,
      labels: d.labels,
    }),
    spec: {
      progressDeadlineSeconds: 600,
      replicas,
      revisionHistoryLimit: 10,
      selector: { matchLabels: d.selector },
      strategy: d.strategy ?? {
        rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
        type: 'RollingUpdate',
      },
      template: d.template,
    },
    status: {
      availableReplicas: replicas,
      conditions: [
        {
          lastTransitionTime: plus(d.podsCreated, 30),
          lastUpdateTime: plus(d.podsCreated, 30),
          message: 'Deployment has minimum availability.',
          reason: 'MinimumReplicasAvailable',
          status: 'True',
          type: 'Available',
        },
        {
          lastTransitionTime: d.created,
          lastUpdateTime: plus(d.podsCreated, 40),
          message: `ReplicaSet "${d.name}-${suffix(`rs/${d.namespace}/${d.name}/${d.revision}`, 10)}" has successfully progressed.`,
          reason: 'NewReplicaSetAvailable',
          status: 'True',
          type: 'Progressing',
        },
      ],
      observedGeneration: d.revision,
      readyReplicas: replicas,
      replicas,
      updatedReplicas: replicas,
    },
  };
  w.deployments.push(deployment);
  for (let rev = d.revision - (d.oldRevisions ?? 0); rev <= d.revision; rev++) {
    const current = rev === d.revision;
    const hash = suffix(`rs/${d.namespace}/${d.name}/${rev}`, 10);
    const rsName = `${d.name}-${hash}`;
    const tpl = structuredClone(d.template) as { metadata: { labels: Record<string, string> } };
    tpl.metadata.labels = { ...tpl.metadata.labels, 'pod-template-hash': hash };
    const n = current ? replicas : 0;
    const rs: K8s = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: meta(
        'ReplicaSet',
        rsName,
        d.namespace,
        current ? plus(d.podsCreated, -5) : plus(d.created, rev * 86400),
        {
          annotations: {
            'deployment.kubernetes.io/desired-replicas': String(replicas),
            'deployment.kubernetes.io/max-replicas': String(replicas + Math.ceil(replicas * 0.25)),
            'deployment.kubernetes.io/revision': String(rev),
          },
          generation: current ? 1 : 2,
          labels: { ...d.selector, 'pod-template-hash': hash },
          ownerReferences: [ownerRef(deployment)],
        },
      ),
      spec: {
        replicas: n,
        selector: { matchLabels: { ...d.selector, 'pod-template-hash': hash } },
        template: tpl,
      },
      status: current
        ? {
            availableReplicas: n,
            fullyLabeledReplicas: n,
            observedGeneration: 1,
            readyReplicas: n,
            replicas: n,
          }
        : { observedGeneration: 2, replicas: 0 },
    };
    w.replicasets.push(rs);
    if (!current) continue;
    d.nodes.forEach((nodeName, i) => {
      w.pods.push(
        makePod({
          namespace: d.namespace,
          name: `${rsName}-${suffix(`pod/${rsName}/${i}`, 5)}`,
          template: tpl,
          node: nodeByName(nodeName),
          created: plus(d.podsCreated, i * 7),
          owner: rs,
        }),
      );
    });
  }
  return deployment;
}

interface DaemonSetDef {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  selector: Record<string, string>;
  template: Obj;
  created: string;
  generation: number;
  updateStrategy: Obj;
  annotations?: Record<string, string>;
}

function addDaemonSet(w: Workloads, d: DaemonSetDef): K8s {
  const count = NODES.length;
  const ds: K8s = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: meta('DaemonSet', d.name, d.namespace, d.created, {
      annotations: {
        'deprecated.daemonset.template.generation': String(d.generation),
        ...(d.annotations ?? {}),
      },
      generation: d.generation,
      labels: d.labels,
    }),
    spec: {
      revisionHistoryLimit: 10,
      selector: { matchLabels: d.selector },
      template: d.template,
      updateStrategy: d.updateStrategy,
    },
    status: {
      currentNumberScheduled: count,
      desiredNumberScheduled: count,
      numberAvailable: count,
      numberMisscheduled: 0,
      numberReady: count,
      observedGeneration: d.generation,
      updatedNumberScheduled: count,
    },
  };
  w.daemonsets.push(ds);
  const revision = suffix(`ds/${d.namespace}/${d.name}/${d.generation}`, 10);
  for (const n of NODES) {
    const created = at(
      (n.role === 'control-plane' ? LAST_REBOOT : Date.parse('2026-10-15T02:00:00Z')) +
        120_000 +
        n.cidrIndex * 41_000,
    );
    w.pods.push(
      makePod({
        namespace: d.namespace,
        name: `${d.name}-${suffix(`dspod/${d.name}/${n.name}`, 5)}`,
        template: d.template,
        node: n,
        created,
        owner: ds,
        daemonSet: true,
        extraLabels: {
          'controller-revision-hash': revision,
          'pod-template-generation': String(d.generation),
        },
      }),
    );
  }
  return ds;
}

function pdb(
  namespace: string,
  name: string,
  selector: Record<string, string>,
  budget: { minAvailable?: number; maxUnavailable?: number },
  expected: number,
  created: string,
): K8s {
  const desired = budget.minAvailable ?? expected - (budget.maxUnavailable ?? 0);
  const allowed = Math.max(0, expected - desired);
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta('PodDisruptionBudget', name, namespace, created, { generation: 1 }),
    spec: { ...budget, selector: { matchLabels: selector } },
    status: {
      conditions: [
        {
          lastTransitionTime: plus(created, 45),
          message: '',
          observedGeneration: 1,
          reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
          status: allowed > 0 ? 'True' : 'False',
          type: 'DisruptionAllowed',
        },
      ],
      currentHealthy: expected,
      desiredHealthy: desired,
      disruptionsAllowed: allowed,
      expectedPods: expected,
      observedGeneration: 1,
    },
  };
}

function kubeSystemWorkloads(w: Workloads): void {
  // --- CoreDNS, as kubeadm installs it ---
  const dnsLabels = { 'k8s-app': 'kube-dns' };
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'coredns',
    labels: dnsLabels,
    selector: dnsLabels,
    nodes: ['cp-2', 'worker-1'],
    created: '2025-02-11T09:14:41Z',
    podsCreated: '2026-10-14T03:24:18Z',
    revision: 3,
    strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 }, type: 'RollingUpdate' },
    template: template(dnsLabels, {
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              podAffinityTerm: {
                labelSelector: {
                  matchExpressions: [{ key: 'k8s-app', operator: 'In', values: ['kube-dns'] }],
                },
                topologyKey: 'kubernetes.io/hostname',
              },
              weight: 100,
            },
          ],
        },
      },
      containers: [
        {
          args: ['-conf', '/etc/coredns/Corefile'],
          image: CLUSTER.corednsImage,
          livenessProbe: {
            failureThreshold: 5,
            httpGet: { path: '/health', port: 8080, scheme: 'HTTP' },
            initialDelaySeconds: 60,
            timeoutSeconds: 5,
          },
          name: 'coredns',
          ports: [
            { containerPort: 53, name: 'dns', protocol: 'UDP' },
            { containerPort: 53, name: 'dns-tcp' },
            { containerPort: 9153, name: 'metrics' },
          ],
          readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' } },
          resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
            readOnlyRootFilesystem: true,
          },
          volumeMounts: [{ mountPath: '/etc/coredns', name: 'config-volume', readOnly: true }],
        },
      ],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'coredns',
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { effect: 'NoSchedule', key: 'node-role.kubernetes.io/control-plane' },
      ],
      volumes: [
        {
          configMap: { items: [{ key: 'Corefile', path: 'Corefile' }], name: 'coredns' },
          name: 'config-volume',
        },
      ],
    }),
  });

  // --- Cilium agent (Helm chart defaults, kubeProxyReplacement=true) ---
  const ciliumEnv = [
    { name: 'K8S_NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
    {
      name: 'CILIUM_K8S_NAMESPACE',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
    },
    { name: 'KUBERNETES_SERVICE_HOST', value: CLUSTER.endpointHost },
    { name: 'KUBERNETES_SERVICE_PORT', value: String(CLUSTER.endpointPort) },
  ];
  const ciliumImage = `quay.io/cilium/cilium:${CLUSTER.ciliumVersion}`;
  const ciliumLabels = {
    'app.kubernetes.io/name': 'cilium-agent',
    'app.kubernetes.io/part-of': 'cilium',
    'k8s-app': 'cilium',
  };
  const seLinux = { seLinuxOptions: { level: 's0', type: 'spc_t' } };
  addDaemonSet(w, {
    namespace: 'kube-system',
    name: 'cilium',
    labels: { ...ciliumLabels, 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'cilium', 'meta.helm.sh/release-namespace': 'kube-system' },
    selector: { 'k8s-app': 'cilium' },
    created: '2025-02-11T09:20:03Z',
    generation: 6,
    // Chart default: two agents restart at once; every agent restarts when values change.
    updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 2 }, type: 'RollingUpdate' },
    template: template(
      ciliumLabels,
      {
        automountServiceAccountToken: true,
        containers: [
          {
            args: ['--config-dir=/tmp/cilium/config-map'],
            command: ['cilium-agent'],
            env: [
              ...ciliumEnv,
              {
                name: 'GOMEMLIMIT',
                valueFrom: { resourceFieldRef: { divisor: '1', resource: 'limits.memory' } },
              },
            ],
            image: ciliumImage,
            livenessProbe: {
              failureThreshold: 10,
              httpGet: {
                host: '127.0.0.1',
                httpHeaders: [{ name: 'brief', value: 'true' }],
                path: '/healthz',
                port: 9879,
                scheme: 'HTTP',
              },
              periodSeconds: 30,
              timeoutSeconds: 5,
            },
            name: 'cilium-agent',
            readinessProbe: {
              httpGet: {
                host: '127.0.0.1',
                httpHeaders: [{ name: 'brief', value: 'true' }],
                path: '/healthz',
                port: 9879,
                scheme: 'HTTP',
              },
              periodSeconds: 30,
              timeoutSeconds: 5,
            },
            securityContext: {
              capabilities: {
                add: [
                  'CHOWN',
                  'KILL',
                  'NET_ADMIN',
                  'NET_RAW',
                  'IPC_LOCK',
                  'SYS_MODULE',
                  'SYS_ADMIN',
                  'SYS_RESOURCE',
                  'DAC_OVERRIDE',
                  'FOWNER',
                  'SETGID',
                  'SETUID',
                ],
                drop: ['ALL'],
              },
              ...seLinux,
            },
            startupProbe: {
              failureThreshold: 105,
              httpGet: {
                host: '127.0.0.1',
                httpHeaders: [{ name: 'brief', value: 'true' }],
                path: '/healthz',
                port: 9879,
                scheme: 'HTTP',
              },
              initialDelaySeconds: 5,
              periodSeconds: 2,
            },
            volumeMounts: [
              { mountPath: '/host/proc/sys/net', name: 'host-proc-sys-net' },
              { mountPath: '/host/proc/sys/kernel', name: 'host-proc-sys-kernel' },
              { mountPath: '/sys/fs/bpf', mountPropagation: 'HostToContainer', name: 'bpf-maps' },
              { mountPath: '/var/run/cilium', name: 'cilium-run' },
              { mountPath: '/var/run/cilium/envoy/sockets', name: 'envoy-sockets' },
              { mountPath: '/host/etc/cni/net.d', name: 'etc-cni-netd' },
              { mountPath: '/var/lib/cilium/clustermesh', name: 'clustermesh-secrets', readOnly: true },
              { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
              { mountPath: '/run/xtables.lock', name: 'xtables-lock' },
              { mountPath: '/var/lib/cilium/tls/hubble', name: 'hubble-tls', readOnly: true },
              { mountPath: '/tmp', name: 'tmp' },
            ],
          },
        ],
        hostNetwork: true,
        initContainers: [
          {
            command: ['cilium-dbg', 'build-config'],
            env: ciliumEnv,
            image: ciliumImage,
            name: 'config',
            volumeMounts: [{ mountPath: '/tmp', name: 'tmp' }],
          },
          {
            command: [
              'sh',
              '-ec',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable for sh -ec, not a template
              'cp /usr/bin/cilium-mount /hostbin/cilium-mount;\nnsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt "${BIN_PATH}/cilium-mount" $CGROUP_ROOT;\nrm /hostbin/cilium-mount\n',
            ],
            env: [
              { name: 'CGROUP_ROOT', value: '/run/cilium/cgroupv2' },
              { name: 'BIN_PATH', value: '/opt/cni/bin' },
            ],
            image: ciliumImage,
            name: 'mount-cgroup',
            securityContext: {
              capabilities: { add: ['SYS_ADMIN', 'SYS_CHROOT', 'SYS_PTRACE'], drop: ['ALL'] },
              ...seLinux,
            },
            volumeMounts: [
              { mountPath: '/hostproc', name: 'hostproc' },
              { mountPath: '/hostbin', name: 'cni-path' },
            ],
          },
          {
            command: [
              'sh',
              '-ec',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable for sh -ec, not a template
              'cp /usr/bin/cilium-sysctlfix /hostbin/cilium-sysctlfix;\nnsenter --mount=/hostproc/1/ns/mnt "${BIN_PATH}/cilium-sysctlfix";\nrm /hostbin/cilium-sysctlfix\n',
            ],
            env: [{ name: 'BIN_PATH', value: '/opt/cni/bin' }],
            image: ciliumImage,
            name: 'apply-sysctl-overwrites',
            securityContext: {
              capabilities: { add: ['SYS_ADMIN', 'SYS_CHROOT', 'SYS_PTRACE'], drop: ['ALL'] },
              ...seLinux,
            },
            volumeMounts: [
              { mountPath: '/hostproc', name: 'hostproc' },
              { mountPath: '/hostbin', name: 'cni-path' },
            ],
          },
          {
            args: ['mount | grep "/sys/fs/bpf type bpf" || mount -t bpf bpf /sys/fs/bpf'],
            command: ['/bin/bash', '-c', '--'],
            image: ciliumImage,
            name: 'mount-bpf-fs',
            securityContext: { privileged: true },
            volumeMounts: [{ mountPath: '/sys/fs/bpf', mountPropagation: 'Bidirectional', name: 'bpf-maps' }],
          },
          {
            command: ['/init-container.sh'],
            env: [
              {
                name: 'CILIUM_ALL_STATE',
                valueFrom: {
                  configMapKeyRef: { key: 'clean-cilium-state', name: 'cilium-config', optional: true },
                },
              },
              {
                name: 'CILIUM_BPF_STATE',
                valueFrom: {
                  configMapKeyRef: { key: 'clean-cilium-bpf-state', name: 'cilium-config', optional: true },
                },
              },
              { name: 'KUBERNETES_SERVICE_HOST', value: CLUSTER.endpointHost },
              { name: 'KUBERNETES_SERVICE_PORT', value: String(CLUSTER.endpointPort) },
            ],
            image: ciliumImage,
            name: 'clean-cilium-state',
            resources: { requests: { cpu: '100m', memory: '100Mi' } },
            securityContext: {
              capabilities: { add: ['NET_ADMIN', 'SYS_MODULE', 'SYS_ADMIN', 'SYS_RESOURCE'], drop: ['ALL'] },
              ...seLinux,
            },
            volumeMounts: [
              { mountPath: '/sys/fs/bpf', name: 'bpf-maps' },
              {
                mountPath: '/run/cilium/cgroupv2',
                mountPropagation: 'HostToContainer',
                name: 'cilium-cgroup',
              },
              { mountPath: '/var/run/cilium', name: 'cilium-run' },
            ],
          },
          {
            command: ['/install-plugin.sh'],
            image: ciliumImage,
            name: 'install-cni-binaries',
            resources: { requests: { cpu: '100m', memory: '10Mi' } },
            securityContext: { capabilities: { drop: ['ALL'] }, ...seLinux },
            volumeMounts: [{ mountPath: '/host/opt/cni/bin', name: 'cni-path' }],
          },
        ],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        priorityClassName: 'system-node-critical',
        serviceAccountName: 'cilium',
        terminationGracePeriodSeconds: 1,
        tolerations: [{ operator: 'Exists' }],
        volumes: [
          { emptyDir: {}, name: 'tmp' },
          { hostPath: { path: '/var/run/cilium', type: 'DirectoryOrCreate' }, name: 'cilium-run' },
          { hostPath: { path: '/sys/fs/bpf', type: 'DirectoryOrCreate' }, name: 'bpf-maps' },
          { hostPath: { path: '/proc', type: 'Directory' }, name: 'hostproc' },
          { hostPath: { path: '/run/cilium/cgroupv2', type: 'DirectoryOrCreate' }, name: 'cilium-cgroup' },
          { hostPath: { path: '/opt/cni/bin', type: 'DirectoryOrCreate' }, name: 'cni-path' },
          { hostPath: { path: '/etc/cni/net.d', type: 'DirectoryOrCreate' }, name: 'etc-cni-netd' },
          { hostPath: { path: '/lib/modules' }, name: 'lib-modules' },
          { hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' }, name: 'xtables-lock' },
          {
            hostPath: { path: '/var/run/cilium/envoy/sockets', type: 'DirectoryOrCreate' },
            name: 'envoy-sockets',
          },
          {
            name: 'clustermesh-secrets',
            projected: {
              defaultMode: 256,
              sources: [{ secret: { name: 'cilium-clustermesh', optional: true } }],
            },
          },
          { hostPath: { path: '/proc/sys/net', type: 'Directory' }, name: 'host-proc-sys-net' },
          { hostPath: { path: '/proc/sys/kernel', type: 'Directory' }, name: 'host-proc-sys-kernel' },
          {
            name: 'hubble-tls',
            projected: {
              defaultMode: 256,
              sources: [
                {
                  secret: {
                    items: [
                      { key: 'tls.crt', path: 'server.crt' },
                      { key: 'tls.key', path: 'server.key' },
                      { key: 'ca.crt', path: 'client-ca.crt' },
                    ],
                    name: 'hubble-server-certs',
                    optional: true,
                  },
                },
              ],
            },
          },
        ],
      },
      { 'kubectl.kubernetes.io/default-container': 'cilium-agent' },
    ),
  });

  // --- Cilium operator ---
  const opLabels = {
    'app.kubernetes.io/name': 'cilium-operator',
    'app.kubernetes.io/part-of': 'cilium',
    'io.cilium/app': 'operator',
    name: 'cilium-operator',
  };
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'cilium-operator',
    labels: { ...opLabels, 'app.kubernetes.io/managed-by': 'Helm' },
    selector: { 'io.cilium/app': 'operator', name: 'cilium-operator' },
    nodes: ['cp-1', 'worker-3'],
    created: '2025-02-11T09:20:03Z',
    podsCreated: '2026-10-15T02:31:40Z',
    revision: 6,
    strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: '50%' }, type: 'RollingUpdate' },
    template: template(opLabels, {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              labelSelector: { matchLabels: { 'io.cilium/app': 'operator' } },
              topologyKey: 'kubernetes.io/hostname',
            },
          ],
        },
      },
      automountServiceAccountToken: true,
      containers: [
        {
          args: ['--config-dir=/tmp/cilium/config-map', '--debug=$(CILIUM_DEBUG)'],
          command: ['cilium-operator-generic'],
          env: [
            {
              name: 'K8S_NODE_NAME',
              valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } },
            },
            {
              name: 'CILIUM_K8S_NAMESPACE',
              valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
            },
            {
              name: 'CILIUM_DEBUG',
              valueFrom: { configMapKeyRef: { key: 'debug', name: 'cilium-config', optional: true } },
            },
            { name: 'KUBERNETES_SERVICE_HOST', value: CLUSTER.endpointHost },
            { name: 'KUBERNETES_SERVICE_PORT', value: String(CLUSTER.endpointPort) },
          ],
          image: `quay.io/cilium/operator-generic:${CLUSTER.ciliumVersion}`,
          livenessProbe: {
            httpGet: { host: '127.0.0.1', path: '/healthz', port: 9234, scheme: 'HTTP' },
            initialDelaySeconds: 60,
            periodSeconds: 10,
            timeoutSeconds: 3,
          },
          name: 'cilium-operator',
          readinessProbe: {
            failureThreshold: 5,
            httpGet: { host: '127.0.0.1', path: '/healthz', port: 9234, scheme: 'HTTP' },
            periodSeconds: 5,
            timeoutSeconds: 3,
          },
          volumeMounts: [{ mountPath: '/tmp/cilium/config-map', name: 'cilium-config-path', readOnly: true }],
        },
      ],
      hostNetwork: true,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'cilium-operator',
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ configMap: { name: 'cilium-config' }, name: 'cilium-config-path' }],
    }),
  });

  // --- OpenStack Cinder CSI: node plugin (mounts /etc/cacert) and controller (reads cloud.conf from the host) ---
  const csiImage = 'registry.k8s.io/provider-os/cinder-csi-plugin:v1.32.0';
  const nodeLabels = { app: 'csi-cinder-nodeplugin' };
  addDaemonSet(w, {
    namespace: 'kube-system',
    name: 'csi-cinder-nodeplugin',
    labels: nodeLabels,
    selector: nodeLabels,
    created: '2025-02-12T14:02:19Z',
    generation: 2,
    updateStrategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 }, type: 'RollingUpdate' },
    template: template(nodeLabels, {
      containers: [
        {
          args: ['--csi-address=$(ADDRESS)', '--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)'],
          env: [
            { name: 'ADDRESS', value: '/csi/csi.sock' },
            {
              name: 'DRIVER_REG_SOCK_PATH',
              value: '/var/lib/kubelet/plugins/cinder.csi.openstack.org/csi.sock',
            },
            {
              name: 'KUBE_NODE_NAME',
              valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } },
            },
          ],
          image: 'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0',
          name: 'node-driver-registrar',
          volumeMounts: [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/registration', name: 'registration-dir' },
          ],
        },
        {
          args: ['--csi-address=/csi/csi.sock'],
          image: 'registry.k8s.io/sig-storage/livenessprobe:v2.14.0',
          name: 'liveness-probe',
          volumeMounts: [{ mountPath: '/csi', name: 'socket-dir' }],
        },
        {
          args: [
            '/bin/cinder-csi-plugin',
            '--endpoint=$(CSI_ENDPOINT)',
            '--provide-controller-service=false',
            '--cloud-config=$(CLOUD_CONFIG)',
            '--v=1',
          ],
          env: [
            { name: 'CSI_ENDPOINT', value: 'unix://csi/csi.sock' },
            { name: 'CLOUD_CONFIG', value: '/etc/config/cloud.conf' },
          ],
          image: csiImage,
          livenessProbe: {
            failureThreshold: 5,
            httpGet: { path: '/healthz', port: 'healthz', scheme: 'HTTP' },
            initialDelaySeconds: 10,
            periodSeconds: 60,
            timeoutSeconds: 10,
          },
          name: 'cinder-csi-plugin',
          ports: [{ containerPort: 9808, name: 'healthz' }],
          securityContext: {
            allowPrivilegeEscalation: true,
            capabilities: { add: ['SYS_ADMIN'] },
            privileged: true,
          },
          volumeMounts: [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/var/lib/kubelet', mountPropagation: 'Bidirectional', name: 'kubelet-dir' },
            { mountPath: '/dev', mountPropagation: 'HostToContainer', name: 'pods-probe-dir' },
            { mountPath: '/etc/cacert', name: 'cacert', readOnly: true },
            { mountPath: '/etc/config', name: 'secret-cinderplugin', readOnly: true },
          ],
        },
      ],
      hostNetwork: true,
      serviceAccountName: 'csi-cinder-node-sa',
      tolerations: [{ operator: 'Exists' }],
      volumes: [
        {
          hostPath: { path: '/var/lib/kubelet/plugins/cinder.csi.openstack.org', type: 'DirectoryOrCreate' },
          name: 'socket-dir',
        },
        {
          hostPath: { path: '/var/lib/kubelet/plugins_registry/', type: 'Directory' },
          name: 'registration-dir',
        },
        { hostPath: { path: '/var/lib/kubelet', type: 'Directory' }, name: 'kubelet-dir' },
        { hostPath: { path: '/dev', type: 'Directory' }, name: 'pods-probe-dir' },
        { name: 'secret-cinderplugin', secret: { secretName: 'cloud-config' } },
        // The OpenStack API's private CA, dropped on every node by the provisioning playbook.
        { hostPath: { path: '/etc/cacert', type: 'Directory' }, name: 'cacert' },
      ],
    }),
  });

  const ctlLabels = { app: 'csi-cinder-controllerplugin' };
  const sidecar = (name: string, image: string, args: string[]): Obj => ({
    args: ['--csi-address=$(ADDRESS)', '--timeout=3m', '--leader-election=true', ...args],
    env: [{ name: 'ADDRESS', value: '/var/lib/csi/sockets/pluginproxy/csi.sock' }],
    image,
    name,
    volumeMounts: [{ mountPath: '/var/lib/csi/sockets/pluginproxy/', name: 'socket-dir' }],
  });
  addDeployment(w, {
    namespace: 'kube-system',
    name: 'csi-cinder-controllerplugin',
    labels: ctlLabels,
    selector: ctlLabels,
    nodes: ['cp-3'],
    created: '2025-02-12T14:02:19Z',
    podsCreated: '2026-10-14T03:41:55Z',
    revision: 2,
    template: template(ctlLabels, {
      containers: [
        sidecar('csi-attacher', 'registry.k8s.io/sig-storage/csi-attacher:v4.7.0', []),
        sidecar('csi-provisioner', 'registry.k8s.io/sig-storage/csi-provisioner:v5.1.0', [
          '--default-fstype=ext4',
          '--feature-gates=Topology=true',
          '--extra-create-metadata',
        ]),
        sidecar('csi-resizer', 'registry.k8s.io/sig-storage/csi-resizer:v1.12.0', [
          '--handle-volume-inuse-error=false',
        ]),
        {
          args: [
            '/bin/cinder-csi-plugin',
            '--endpoint=$(CSI_ENDPOINT)',
            '--cloud-config=$(CLOUD_CONFIG)',
            '--cluster=$(CLUSTER_NAME)',
            '--provide-node-service=false',
            '--v=1',
          ],
          env: [
            { name: 'CSI_ENDPOINT', value: 'unix://csi/csi.sock' },
            { name: 'CLOUD_CONFIG', value: '/etc/kubernetes/cloud.conf' },
            { name: 'CLUSTER_NAME', value: CLUSTER.name },
          ],
          image: csiImage,
          livenessProbe: {
            failureThreshold: 5,
            httpGet: { path: '/healthz', port: 'healthz', scheme: 'HTTP' },
            initialDelaySeconds: 10,
            periodSeconds: 60,
            timeoutSeconds: 10,
          },
          name: 'cinder-csi-plugin',
          ports: [{ containerPort: 9808, name: 'healthz' }],
          volumeMounts: [
            { mountPath: '/csi', name: 'socket-dir' },
            { mountPath: '/etc/kubernetes/cloud.conf', name: 'cloud-config', readOnly: true },
          ],
        },
      ],
      nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
      serviceAccountName: 'csi-cinder-controller-sa',
      volumes: [
        { emptyDir: {}, name: 'socket-dir' },
        // Written by the provisioning playbook on the control planes; the chart's Secret option is unused.
        { hostPath: { path: '/etc/kubernetes/cloud.conf', type: 'File' }, name: 'cloud-config' },
      ],
    }),
  });
}

function appContainer(
  name: string,
  image: string,
  port: number,
  cpu: string,
  memory: string,
  extra: Obj = {},
): Obj {
  return {
    image,
    livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, periodSeconds: 10 },
    name,
    ports: [{ containerPort: port, name: 'http' }],
    readinessProbe: { httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' }, periodSeconds: 5 },
    resources: { limits: { memory }, requests: { cpu, memory } },
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 10001,
    },
    ...extra,
  };
}

function appWorkloads(w: Workloads): void {
  const app = (ns: string, name: string, part: string) => ({
    labels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': part },
    selector: { 'app.kubernetes.io/name': name },
    ns,
  });

  const fe = app('shop', 'frontend', 'shop');
  addDeployment(w, {
    namespace: fe.ns,
    name: 'frontend',
    labels: fe.labels,
    selector: fe.selector,
    nodes: ['worker-1', 'worker-2', 'cp-1'],
    created: '2025-03-04T10:12:00Z',
    podsCreated: '2026-11-18T13:05:22Z',
    revision: 14,
    oldRevisions: 1,
    template: template(fe.labels, {
      containers: [
        appContainer('frontend', 'registry.lab.example/shop/frontend:2.14.1', 8080, '200m', '256Mi', {
          volumeMounts: [{ mountPath: '/var/cache/frontend', name: 'cache' }],
        }),
      ],
      volumes: [{ emptyDir: { sizeLimit: '1Gi' }, name: 'cache' }],
    }),
  });
  w.pdbs.push(pdb('shop', 'frontend', fe.selector, { maxUnavailable: 1 }, 3, '2025-03-04T10:12:00Z'));

  const api = app('shop', 'api', 'shop');
  addDeployment(w, {
    namespace: api.ns,
    name: 'api',
    labels: api.labels,
    selector: api.selector,
    nodes: ['worker-2', 'worker-3', 'cp-2'],
    created: '2025-03-04T10:12:00Z',
    podsCreated: '2026-11-18T13:09:47Z',
    revision: 21,
    template: template(api.labels, {
      containers: [
        appContainer('api', 'registry.lab.example/shop/api:3.8.0', 8080, '500m', '512Mi', {
          env: [
            { name: 'DATABASE_HOST', value: 'postgres-0.postgres.shop.svc.cluster.local' },
            { name: 'CHECKOUT_URL', value: 'http://checkout.shop.svc.cluster.local:8080' },
          ],
        }),
      ],
    }),
  });
  w.pdbs.push(pdb('shop', 'api', api.selector, { minAvailable: 2 }, 3, '2025-03-04T10:12:00Z'));

  // The trap: minAvailable equals replicas, so no voluntary eviction is ever allowed and drains hang.
  const co = app('shop', 'checkout', 'shop');
  addDeployment(w, {
    namespace: co.ns,
    name: 'checkout',
    labels: co.labels,
    selector: co.selector,
    nodes: ['worker-1', 'worker-4'],
    created: '2025-05-19T08:40:00Z',
    podsCreated: '2026-11-20T16:44:03Z',
    revision: 9,
    template: template(co.labels, {
      containers: [
        appContainer('checkout', 'registry.lab.example/shop/checkout:1.22.3', 8080, '250m', '384Mi'),
      ],
    }),
  });
  w.pdbs.push(pdb('shop', 'checkout', co.selector, { minAvailable: 2 }, 2, '2025-05-19T08:40:00Z'));

  // The trap: one replica and no PDB, so draining its node is an outage.
  const wiki = app('apps', 'wiki', 'wiki');
  addDeployment(w, {
    namespace: wiki.ns,
    name: 'wiki',
    labels: wiki.labels,
    selector: wiki.selector,
    nodes: ['cp-3'],
    created: '2025-06-02T11:00:00Z',
    podsCreated: '2026-11-02T07:15:31Z',
    revision: 5,
    template: template(wiki.labels, {
      containers: [
        appContainer('wiki', 'ghcr.io/requarks/wiki:2.5.303', 3000, '100m', '512Mi', {
          env: [
            { name: 'DB_TYPE', value: 'postgres' },
            { name: 'DB_HOST', value: 'postgres-0.postgres.shop.svc.cluster.local' },
            { name: 'DB_NAME', value: 'wiki' },
          ],
        }),
      ],
    }),
  });

  // --- StatefulSet pinned to the "data" pool by a node label ---
  const pgLabels = { 'app.kubernetes.io/name': 'postgres', 'app.kubernetes.io/part-of': 'shop' };
  const pgSelector = { 'app.kubernetes.io/name': 'postgres' };
  const pgTemplate = template(pgLabels, {
    containers: [
      {
        env: [
          { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
          {
            name: 'POSTGRES_PASSWORD',
            valueFrom: { secretKeyRef: { key: 'password', name: 'postgres-superuser' } },
          },
        ],
        image: 'docker.io/library/postgres:16.4',
        name: 'postgres',
        ports: [{ containerPort: 5432, name: 'postgres' }],
        readinessProbe: { exec: { command: ['pg_isready', '-U', 'postgres'] }, periodSeconds: 10 },
        resources: { limits: { memory: '2Gi' }, requests: { cpu: '500m', memory: '2Gi' } },
        volumeMounts: [{ mountPath: '/var/lib/postgresql/data', name: 'data' }],
      },
    ],
    nodeSelector: { [NODE_POOL_LABEL]: 'data' },
    securityContext: { fsGroup: 999 },
  });
  const pgRevision = `postgres-${suffix('sts/shop/postgres/4', 10)}`;
  const pgCreated = '2025-03-04T10:15:00Z';
  const postgres: K8s = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta('StatefulSet', 'postgres', 'shop', pgCreated, { generation: 4, labels: pgLabels }),
    spec: {
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      podManagementPolicy: 'OrderedReady',
      replicas: 3,
      revisionHistoryLimit: 10,
      selector: { matchLabels: pgSelector },
      serviceName: 'postgres',
      template: pgTemplate,
      updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { creationTimestamp: null, name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '20Gi' } },
            storageClassName: 'csi-cinder',
            volumeMode: 'Filesystem',
          },
          status: { phase: 'Pending' },
        },
      ],
    },
    status: {
      availableReplicas: 3,
      collisionCount: 0,
      currentReplicas: 3,
      currentRevision: pgRevision,
      observedGeneration: 4,
      readyReplicas: 3,
      replicas: 3,
      updateRevision: pgRevision,
      updatedReplicas: 3,
    },
  };
  w.statefulsets.push(postgres);
  ['worker-3', 'worker-4', 'worker-5'].forEach((nodeName, i) => {
    const tpl = structuredClone(pgTemplate) as { spec: Obj };
    tpl.spec['hostname'] = `postgres-${i}`;
    tpl.spec['subdomain'] = 'postgres';
    tpl.spec['volumes'] = [{ name: 'data', persistentVolumeClaim: { claimName: `data-postgres-${i}` } }];
    w.pods.push(
      makePod({
        namespace: 'shop',
        name: `postgres-${i}`,
        template: tpl,
        node: nodeByName(nodeName),
        created: plus('2026-10-15T02:40:00Z', i * 95),
        owner: postgres,
        extraLabels: {
          'apps.kubernetes.io/pod-index': String(i),
          'controller-revision-hash': pgRevision,
          'statefulset.kubernetes.io/pod-name': `postgres-${i}`,
        },
      }),
    );
  });
  w.pdbs.push(pdb('shop', 'postgres', pgSelector, { maxUnavailable: 1 }, 3, pgCreated));

  // --- CronJob and the Job it created last night ---
  const backupTemplate = template(
    { 'app.kubernetes.io/name': 'db-backup' },
    {
      containers: [
        {
          args: ['--host=postgres-0.postgres', '--target=s3://backups-lab/shop'],
          image: 'registry.lab.example/platform/pg-backup:1.4.2',
          name: 'backup',
          resources: { requests: { cpu: '200m', memory: '256Mi' } },
        },
      ],
      restartPolicy: 'OnFailure',
    },
  );
  const cron: K8s = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: meta('CronJob', 'db-backup', 'shop', '2025-03-10T09:00:00Z', { generation: 2 }),
    spec: {
      concurrencyPolicy: 'Forbid',
      failedJobsHistoryLimit: 1,
      jobTemplate: {
        metadata: { creationTimestamp: null },
        spec: { backoffLimit: 2, template: backupTemplate },
      },
      schedule: '15 2 * * *',
      successfulJobsHistoryLimit: 3,
      suspend: false,
    },
    status: { lastScheduleTime: '2026-11-30T02:15:00Z', lastSuccessfulTime: '2026-11-30T02:22:14Z' },
  };
  w.cronjobs.push(cron);
  const scheduled = Date.parse('2026-11-30T02:15:00Z');
  const jobName = `db-backup-${scheduled / 60_000}`;
  const jobUid = uidFor(`Job/shop/${jobName}`);
  const jobLabels = {
    'app.kubernetes.io/name': 'db-backup',
    'batch.kubernetes.io/controller-uid': jobUid,
    'batch.kubernetes.io/job-name': jobName,
    'controller-uid': jobUid,
    'job-name': jobName,
  };
  const jobTpl = structuredClone(backupTemplate) as { metadata: Obj };
  jobTpl.metadata['labels'] = jobLabels;
  const jobStart = at(scheduled + 1000);
  const job: K8s = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: meta('Job', jobName, 'shop', jobStart, {
      annotations: { 'batch.kubernetes.io/cronjob-scheduled-timestamp': at(scheduled) },
      generation: 1,
      labels: jobLabels,
      ownerReferences: [ownerRef(cron)],
    }),
    spec: {
      backoffLimit: 2,
      completionMode: 'NonIndexed',
      completions: 1,
      manualSelector: false,
      parallelism: 1,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': jobUid } },
      suspend: false,
      template: jobTpl,
    },
    status: {
      completionTime: '2026-11-30T02:22:14Z',
      conditions: [
        {
          lastProbeTime: '2026-11-30T02:22:14Z',
          lastTransitionTime: '2026-11-30T02:22:14Z',
          message: 'Reached expected number of succeeded pods',
          reason: 'CompletionsReached',
          status: 'True',
          type: 'SuccessCriteriaMet',
        },
        {
          lastProbeTime: '2026-11-30T02:22:14Z',
          lastTransitionTime: '2026-11-30T02:22:14Z',
          message: 'Reached expected number of succeeded pods',
          reason: 'CompletionsReached',
          status: 'True',
          type: 'Complete',
        },
      ],
      ready: 0,
      startTime: jobStart,
      succeeded: 1,
      terminating: 0,
      uncountedTerminatedPods: {},
    },
  };
  w.jobs.push(job);
  w.pods.push(
    makePod({
      namespace: 'shop',
      name: `${jobName}-${suffix(`jobpod/${jobName}`, 5)}`,
      template: jobTpl,
      node: nodeByName('worker-5'),
      created: at(scheduled + 1500),
      owner: job,
      phase: 'Succeeded',
    }),
  );

  // --- A bare debugging pod somebody left behind: no controller, NET_ADMIN ---
  w.pods.push(
    makePod({
      namespace: 'default',
      name: 'netshoot',
      template: template(
        { run: 'netshoot' },
        {
          containers: [
            {
              command: ['sleep', 'infinity'],
              image: 'docker.io/nicolaka/netshoot:v0.13',
              name: 'netshoot',
              securityContext: { capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } },
            },
          ],
        },
      ),
      node: nodeByName('worker-2'),
      created: '2026-09-03T15:27:12Z',
    }),
  );
}

function mirrorPods(w: Workloads, nodes: Map<string, K8s>): void {
  for (const cp of CONTROL_PLANES) {
    const manifests = staticManifests(cp);
    const nodeObj = nodes.get(cp.name);
    if (!nodeObj) throw new Error(`no Node object for ${cp.name}`);
    for (const component of STATIC_COMPONENTS) {
      const m = manifests[component];
      const hash = hex(`config-hash/${cp.name}/${component}`, 32);
      const seen = at(LAST_REBOOT + 70_000 + STATIC_COMPONENTS.indexOf(component) * 1000);
      const metaAnn = (m.metadata['annotations'] as Obj | undefined) ?? {};
      w.pods.push(
        makePod({
          namespace: 'kube-system',
          name: `${component}-${cp.name}`,
          template: template(m.metadata['labels'] as Record<string, string>, m['spec'] as Obj),
          node: cp,
          created: at(LAST_REBOOT + 80_000 + STATIC_COMPONENTS.indexOf(component) * 1000),
          mirror: {
            annotations: {
              ...metaAnn,
              'kubernetes.io/config.hash': hash,
              'kubernetes.io/config.mirror': hash,
              'kubernetes.io/config.seen': seen.replace('Z', '.418233125Z'),
              'kubernetes.io/config.source': 'file',
            },
            ownerNode: nodeObj,
          },
        }),
      );
    }
  }
}

// =============================================================================================
// Other resources

function namespaces(): K8s[] {
  const ns = (name: string, created: string, labels: Record<string, string> = {}): K8s => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: meta('Namespace', name, undefined, created, {
      labels: { 'kubernetes.io/metadata.name': name, ...labels },
    }),
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
  return [
    ns('default', '2025-02-11T09:14:31Z'),
    ns('kube-node-lease', '2025-02-11T09:14:31Z'),
    ns('kube-public', '2025-02-11T09:14:31Z'),
    ns('kube-system', '2025-02-11T09:14:31Z'),
    ns('shop', '2025-03-04T10:10:00Z', { 'app.kubernetes.io/part-of': 'shop' }),
    ns('apps', '2025-06-02T10:58:00Z'),
  ];
}

function service(namespace: string, name: string, created: string, spec: Obj, extra: Obj = {}): K8s {
  const ip = spec['clusterIP'] as string;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta('Service', name, namespace, created, extra),
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

function services(): K8s[] {
  const port = (name: string, p: number, target: number | string, protocol = 'TCP') => ({
    name,
    port: p,
    protocol,
    targetPort: target,
  });
  return [
    service(
      'default',
      'kubernetes',
      '2025-02-11T09:14:30Z',
      { clusterIP: CLUSTER.kubernetesServiceIP, ports: [port('https', 443, CLUSTER.endpointPort)] },
      { labels: { component: 'apiserver', provider: 'kubernetes' } },
    ),
    service(
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
    service('shop', 'frontend', '2025-03-04T10:12:00Z', {
      clusterIP: '10.108.23.140',
      externalTrafficPolicy: 'Cluster',
      ports: [{ ...port('http', 80, 'http'), nodePort: 30080 }],
      selector: { 'app.kubernetes.io/name': 'frontend' },
      type: 'NodePort',
    }),
    service('shop', 'api', '2025-03-04T10:12:00Z', {
      clusterIP: '10.101.5.77',
      ports: [port('http', 8080, 'http')],
      selector: { 'app.kubernetes.io/name': 'api' },
    }),
    service('shop', 'checkout', '2025-05-19T08:40:00Z', {
      clusterIP: '10.99.141.12',
      ports: [port('http', 8080, 'http')],
      selector: { 'app.kubernetes.io/name': 'checkout' },
    }),
    service('shop', 'postgres', '2025-03-04T10:15:00Z', {
      clusterIP: 'None',
      ports: [port('postgres', 5432, 5432)],
      selector: { 'app.kubernetes.io/name': 'postgres' },
    }),
    service('apps', 'wiki', '2025-06-02T11:00:00Z', {
      clusterIP: '10.110.64.9',
      ports: [port('http', 80, 'http')],
      selector: { 'app.kubernetes.io/name': 'wiki' },
    }),
  ];
}

function endpointSlices(): K8s[] {
  return [
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: meta('EndpointSlice', 'kubernetes', 'default', '2025-02-11T09:14:30Z', {
        generation: 9,
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      }),
      addressType: 'IPv4',
      endpoints: CONTROL_PLANES.map((c) => ({ addresses: [c.ip], conditions: { ready: true } })),
      ports: [{ name: 'https', port: CLUSTER.endpointPort, protocol: 'TCP' }],
    },
  ];
}

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

function ciliumConfigData(): Record<string, string> {
  return {
    'agent-not-ready-taint-key': 'node.cilium.io/agent-not-ready',
    'arping-refresh-period': '30s',
    'auto-direct-node-routes': 'false',
    'bpf-lb-acceleration': 'disabled',
    'bpf-lb-external-clusterip': 'false',
    'bpf-lb-map-max': '65536',
    'bpf-lb-sock': 'false',
    'bpf-map-dynamic-size-ratio': '0.0025',
    'bpf-policy-map-max': '16384',
    'bpf-root': '/sys/fs/bpf',
    'cgroup-root': '/run/cilium/cgroupv2',
    'cilium-endpoint-gc-interval': '5m0s',
    'cluster-id': '0',
    'cluster-name': CLUSTER.name,
    'cni-exclusive': 'true',
    'cni-log-file': '/var/run/cilium/cilium-cni.log',
    'custom-cni-conf': 'false',
    debug: 'false',
    'direct-routing-skip-unreachable': 'false',
    'dnsproxy-enable-transparent-mode': 'true',
    'egress-gateway-reconciliation-trigger-interval': '1s',
    'enable-auto-protect-node-port-range': 'true',
    'enable-bpf-clock-probe': 'false',
    'enable-endpoint-health-checking': 'true',
    'enable-health-check-loadbalancer-ip': 'false',
    'enable-health-check-nodeport': 'true',
    'enable-health-checking': 'true',
    'enable-hubble': 'true',
    'enable-ipv4': 'true',
    'enable-ipv4-masquerade': 'true',
    'enable-ipv6': 'false',
    'enable-ipv6-masquerade': 'true',
    'enable-k8s-networkpolicy': 'true',
    'enable-l2-neigh-discovery': 'true',
    'enable-l7-proxy': 'true',
    'enable-local-redirect-policy': 'false',
    'enable-masquerade-to-route-source': 'false',
    'enable-metrics': 'true',
    'enable-node-selector-labels': 'false',
    'enable-policy': 'default',
    'enable-runtime-device-detection': 'true',
    'enable-sctp': 'false',
    'enable-svc-source-range-check': 'true',
    'enable-tcx': 'true',
    'enable-vtep': 'false',
    'enable-well-known-identities': 'false',
    'enable-xt-socket-fallback': 'true',
    'external-envoy-proxy': 'false',
    'hubble-disable-tls': 'false',
    'hubble-export-file-max-backups': '5',
    'hubble-export-file-max-size-mb': '10',
    'hubble-listen-address': ':4244',
    'hubble-socket-path': '/var/run/cilium/hubble.sock',
    'hubble-tls-cert-file': '/var/lib/cilium/tls/hubble/server.crt',
    'hubble-tls-client-ca-files': '/var/lib/cilium/tls/hubble/client-ca.crt',
    'hubble-tls-key-file': '/var/lib/cilium/tls/hubble/server.key',
    'identity-allocation-mode': 'crd',
    'identity-gc-interval': '15m0s',
    'identity-heartbeat-timeout': '30m0s',
    'install-no-conntrack-iptables-rules': 'false',
    ipam: 'kubernetes',
    'ipam-cilium-node-update-rate': '15s',
    'k8s-client-burst': '20',
    'k8s-client-qps': '10',
    'k8s-require-ipv4-pod-cidr': 'true',
    'k8s-require-ipv6-pod-cidr': 'false',
    'k8s-service-host': CLUSTER.endpointHost,
    'k8s-service-port': String(CLUSTER.endpointPort),
    'kube-proxy-replacement': 'true',
    'kube-proxy-replacement-healthz-bind-address': '',
    'max-connected-clusters': '255',
    'mesh-auth-enabled': 'true',
    'mesh-auth-gc-interval': '5m0s',
    'mesh-auth-queue-size': '1024',
    'mesh-auth-rotated-identities-queue-size': '1024',
    'monitor-aggregation': 'medium',
    'monitor-aggregation-flags': 'all',
    'monitor-aggregation-interval': '5s',
    'nat-map-stats-entries': '32',
    'nat-map-stats-interval': '30s',
    'node-port-bind-protection': 'true',
    'nodeport-addresses': '',
    'nodes-gc-interval': '5m0s',
    'operator-api-serve-addr': '127.0.0.1:9234',
    'operator-prometheus-serve-addr': ':9963',
    'policy-cidr-match-mode': '',
    'preallocate-bpf-maps': 'false',
    procfs: '/host/proc',
    'prometheus-serve-addr': ':9962',
    'proxy-connect-timeout': '2',
    'proxy-idle-timeout-seconds': '60',
    'proxy-max-connection-duration-seconds': '0',
    'proxy-max-requests-per-connection': '0',
    'proxy-xff-num-trusted-hops-egress': '0',
    'proxy-xff-num-trusted-hops-ingress': '0',
    'remove-cilium-node-taints': 'true',
    'routing-mode': 'tunnel',
    'service-no-backend-response': 'reject',
    'set-cilium-is-up-condition': 'true',
    'set-cilium-node-taints': 'true',
    'synchronize-k8s-nodes': 'true',
    'tofqdns-dns-reject-response-code': 'refused',
    'tofqdns-enable-dns-compression': 'true',
    'tofqdns-endpoint-max-ip-per-hostname': '50',
    'tofqdns-idle-connection-grace-period': '0s',
    'tofqdns-max-deferred-connection-deletes': '10000',
    'tofqdns-proxy-response-max-delay': '100ms',
    'tunnel-protocol': 'vxlan',
    'unmanaged-pod-watcher-interval': '15',
    'vtep-cidr': '',
    'vtep-endpoint': '',
    'vtep-mac': '',
    'vtep-mask': '',
    'write-cni-conf-when-ready': '/host/etc/cni/net.d/05-cilium.conflist',
  };
}

function configMaps(): K8s[] {
  const cm = (
    namespace: string,
    name: string,
    created: string,
    data: Record<string, string>,
    extra: Obj = {},
  ): K8s => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('ConfigMap', name, namespace, created, extra),
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

function rbac(): K8s[] {
  const group = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name });
  const user = (name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name });
  return [
    // Bootstrap policy: every kubeadm cluster has it; health and version paths for anyone.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta('ClusterRoleBinding', 'system:public-info-viewer', undefined, '2025-02-11T09:14:30Z', {
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
        labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
      }),
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:public-info-viewer',
      },
      subjects: [group('system:authenticated'), group('system:unauthenticated')],
    },
    // Added for the external haproxy pair: `option httpchk GET /healthz` without credentials.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta('ClusterRole', 'lb-healthcheck', undefined, '2025-02-11T11:02:00Z', {
        labels: { 'app.kubernetes.io/part-of': 'lab-platform' },
      }),
      rules: [{ nonResourceURLs: ['/healthz', '/readyz', '/livez'], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta('ClusterRoleBinding', 'lb-healthcheck', undefined, '2025-02-11T11:02:00Z', {
        annotations: {
          'lab.example/purpose': `HTTP health check of the API load balancers ${CLUSTER.loadBalancers
            .map((l) => `${l.name} (${l.ip})`)
            .join(', ')} for VIP ${CLUSTER.vip}; they send no credentials`,
        },
        labels: { 'app.kubernetes.io/part-of': 'lab-platform' },
      }),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'lb-healthcheck' },
      subjects: [user('system:anonymous'), group('system:unauthenticated')],
    },
    // kubeadm's: lets `kubeadm join` read kube-public/cluster-info before it has credentials.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(
        'RoleBinding',
        'kubeadm:bootstrap-signer-clusterinfo',
        'kube-public',
        '2025-02-11T09:14:34Z',
      ),
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'kubeadm:bootstrap-signer-clusterinfo',
      },
      subjects: [user('system:anonymous')],
    },
  ];
}

function storage(): K8s[] {
  const driver = 'cinder.csi.openstack.org';
  const pvs: K8s[] = [0, 1, 2].map((i) => {
    const claimUid = uidFor(`PersistentVolumeClaim/shop/data-postgres-${i}`);
    const name = `pvc-${claimUid}`;
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: meta('PersistentVolume', name, undefined, plus('2025-03-04T10:15:20Z', i * 95), {
        annotations: {
          'pv.kubernetes.io/provisioned-by': driver,
          'volume.kubernetes.io/provisioner-deletion-secret-name': '',
        },
        finalizers: ['external-provisioner.volume.kubernetes.io/finalizer', 'kubernetes.io/pv-protection'],
      }),
      spec: {
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '20Gi' },
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          name: `data-postgres-${i}`,
          namespace: 'shop',
          uid: claimUid,
        },
        csi: {
          driver,
          fsType: 'ext4',
          volumeAttributes: {
            'storage.kubernetes.io/csiProvisionerIdentity': '1739284939122-8081-cinder.csi.openstack.org',
          },
          volumeHandle: uidFor(`cinder-volume/${i}`),
        },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.cinder.csi.openstack.org/zone', operator: 'In', values: ['nova'] },
                ],
              },
            ],
          },
        },
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'csi-cinder',
        volumeMode: 'Filesystem',
      },
      status: { lastPhaseTransitionTime: plus('2025-03-04T10:15:21Z', i * 95), phase: 'Bound' },
    };
  });
  return [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: meta('CSIDriver', driver, undefined, '2025-02-12T14:02:19Z'),
      spec: {
        attachRequired: true,
        fsGroupPolicy: 'ReadWriteOnceWithFSType',
        podInfoOnMount: true,
        requiresRepublish: false,
        seLinuxMount: false,
        storageCapacity: false,
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: meta('StorageClass', 'csi-cinder', undefined, '2025-02-12T14:02:19Z', {
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      }),
      allowVolumeExpansion: true,
      provisioner: driver,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
    ...pvs,
  ];
}

// =============================================================================================
// Key material: bootstrap token, cluster-info, encryption configuration

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomTokenSecret(): string {
  const bytes = randomBytes(16);
  let s = '';
  for (const b of bytes) s += TOKEN_ALPHABET[b % TOKEN_ALPHABET.length];
  return s;
}

const TOKEN_CREATED = '2026-11-29T16:40:12Z';

function bootstrapTokenSecret(tokenSecret: string): K8s {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta('Secret', `bootstrap-token-${CLUSTER.bootstrapTokenId}`, 'kube-system', TOKEN_CREATED),
    type: 'bootstrap.kubernetes.io/token',
    data: {
      'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
      description: b64('Worker join token, created by `kubeadm token create` (default TTL 24h)'),
      expiration: b64(plus(TOKEN_CREATED, 24 * 3600)),
      'token-id': b64(CLUSTER.bootstrapTokenId),
      'token-secret': b64(tokenSecret),
      'usage-bootstrap-authentication': b64('true'),
      'usage-bootstrap-signing': b64('true'),
    },
  };
}

/** kube-public/cluster-info with the JWS the bootstrap signer adds for each signing token. */
function clusterInfo(caPem: string, tokenSecret: string): K8s {
  const kubeconfig = toYaml({
    apiVersion: 'v1',
    clusters: [
      {
        cluster: {
          'certificate-authority-data': Buffer.from(caPem).toString('base64'),
          server: `https://${CLUSTER.endpointHost}:${CLUSTER.endpointPort}`,
        },
        name: '',
      },
    ],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
  // Detached JWS (HS256) keyed with the full token, as the bootstrapsigner controller computes it.
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: CLUSTER.bootstrapTokenId }));
  const signingInput = `${header}.${b64url(kubeconfig)}`;
  const sig = createHmac('sha256', `${CLUSTER.bootstrapTokenId}.${tokenSecret}`)
    .update(signingInput)
    .digest();
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('ConfigMap', 'cluster-info', 'kube-public', '2025-02-11T09:14:34Z'),
    data: { [`jws-kubeconfig-${CLUSTER.bootstrapTokenId}`]: `${header}..${b64url(sig)}`, kubeconfig },
  };
}

function encryptionConfig(): string {
  const doc = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      {
        resources: ['secrets'],
        providers: [
          {
            aescbc: {
              keys: [{ name: CLUSTER.encryptionKeyName, secret: randomBytes(32).toString('base64') }],
            },
          },
          { identity: {} },
        ],
      },
    ],
  };
  return `# ${CLUSTER.encryptionConfigPath} on every control plane (the same file on all three).\n${stringify(
    doc,
    {
      indentSeq: true,
      lineWidth: 0,
    },
  )}`;
}

// =============================================================================================
// etcd (etcdctl -w json): member IDs are bare JSON numbers above 2^53, as etcdctl prints them

const ETCD_CLUSTER_ID = etcdIdFor('cluster');
const ETCD_LEADER = 'cp-2';
const ETCD_RAFT_TERM = 7;

function etcdHeader(memberName: string, revision: number): string {
  return `{"cluster_id":${ETCD_CLUSTER_ID},"member_id":${etcdIdFor(memberName)},"revision":${revision},"raft_term":${ETCD_RAFT_TERM}}`;
}

function etcdMemberList(): string {
  const members = CONTROL_PLANES.map(
    (c) =>
      `{"ID":${etcdIdFor(c.name)},"name":"${c.name}","peerURLs":["https://${c.ip}:2380"],"clientURLs":["https://${c.ip}:2379"]}`,
  );
  return `{"header":${etcdHeader('cp-1', 0).replace(',"revision":0', '')},"members":[${members.join(',')}]}\n`;
}

function etcdEndpointStatus(): string {
  const rows = CONTROL_PLANES.map((c, i) => {
    const revision = 9_184_233;
    const raftIndex = 11_402_917 + i;
    return (
      `{"Endpoint":"https://${c.ip}:2379","Status":{"header":${etcdHeader(c.name, revision)},` +
      `"version":"${CLUSTER.etcdVersion}","dbSize":${88_281_088 + i * 4096},"leader":${etcdIdFor(ETCD_LEADER)},` +
      `"raftIndex":${raftIndex},"raftTerm":${ETCD_RAFT_TERM},"raftAppliedIndex":${raftIndex},"dbSizeInUse":${41_762_816 + i * 8192}}}`
    );
  });
  return `[${rows.join(',')}]\n`;
}

function etcdVersion(): string {
  return `${JSON.stringify({ etcdserver: CLUSTER.etcdVersion, etcdcluster: '3.5.0' })}\n`;
}

function etcdAlarms(): string {
  // No alarms: etcdctl omits the empty list and prints only the header.
  return `{"header":${etcdHeader('cp-1', 9_184_233)}}\n`;
}

// =============================================================================================
// Audit log (cp-1): the external load balancers' anonymous /healthz checks, among ordinary traffic

function auditLog(): string {
  const lines: string[] = [];
  const t0 = SNAPSHOT_AT - 120_000;
  const event = (ms: number, e: Obj): void => {
    const ts = new Date(ms).toISOString().replace('Z', '000Z');
    const done = new Date(ms + 2).toISOString().replace('Z', '000Z');
    lines.push(
      JSON.stringify({
        kind: 'Event',
        apiVersion: 'audit.k8s.io/v1',
        level: 'Metadata',
        auditID: uidFor(`audit/${lines.length}`),
        stage: 'ResponseComplete',
        ...e,
        requestReceivedTimestamp: ts,
        stageTimestamp: done,
      }),
    );
  };
  const anonymous = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const allowedBy = (binding: string, role: string, subject: string) => ({
    'authorization.k8s.io/decision': 'allow',
    'authorization.k8s.io/reason': `RBAC: allowed by ClusterRoleBinding "${binding}" of ClusterRole "${role}" to ${subject}`,
  });
  for (let i = 0; i < 6; i++) {
    for (const lb of CLUSTER.loadBalancers) {
      event(t0 + i * 2000 + (lb.name === 'lb-2' ? 700 : 0), {
        requestURI: '/healthz',
        verb: 'get',
        user: anonymous,
        sourceIPs: [lb.ip],
        userAgent: CLUSTER.healthCheckUserAgent,
        responseStatus: { metadata: {}, code: 200 },
        annotations: allowedBy('lb-healthcheck', 'lb-healthcheck', 'User "system:anonymous"'),
      });
    }
    if (i === 1) {
      event(t0 + i * 2000 + 300, {
        requestURI: '/api/v1/namespaces/kube-system/pods?limit=500',
        verb: 'list',
        user: {
          username: 'oidc:alice@lab.example',
          groups: ['oidc:platform-admins', 'system:authenticated'],
        },
        sourceIPs: ['10.20.8.31'],
        userAgent: 'kubectl/v1.32.3 (linux/amd64) kubernetes/32cc146',
        objectRef: { resource: 'pods', namespace: 'kube-system', apiVersion: 'v1' },
        responseStatus: { metadata: {}, code: 200 },
        annotations: {
          'authorization.k8s.io/decision': 'allow',
          'authorization.k8s.io/reason':
            'RBAC: allowed by ClusterRoleBinding "oidc-platform-admins" of ClusterRole "cluster-admin" to Group "oidc:platform-admins"',
        },
      });
    }
    if (i === 3) {
      event(t0 + i * 2000 + 1100, {
        requestURI: '/api/v1/nodes/worker-3/status?timeout=10s',
        verb: 'patch',
        user: { username: 'system:node:worker-3', groups: ['system:nodes', 'system:authenticated'] },
        sourceIPs: ['10.20.0.23'],
        userAgent: 'kubelet/v1.32.4 (linux/amd64) kubernetes/59526cd',
        objectRef: { resource: 'nodes', name: 'worker-3', apiVersion: 'v1', subresource: 'status' },
        responseStatus: { metadata: {}, code: 200 },
        annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
      });
    }
  }
  // A blackbox exporter probing /version anonymously as well.
  event(t0 + 12_500, {
    requestURI: '/version',
    verb: 'get',
    user: anonymous,
    sourceIPs: ['10.244.4.23'],
    userAgent: 'Go-http-client/1.1',
    responseStatus: { metadata: {}, code: 200 },
    annotations: allowedBy(
      'system:public-info-viewer',
      'system:public-info-viewer',
      'Group "system:unauthenticated"',
    ),
  });
  return `${lines.join('\n')}\n`;
}

// =============================================================================================
// The traps (also the README table; the test checks each one's evidence in the generated files)

export interface Trap {
  key: string;
  title: string;
  /** file · object · field, one per place the evidence lives. */
  where: string[];
  ruleIds: string[];
  fix: string;
}

export const TRAPS: readonly Trap[] = [
  {
    key: 'san-loopback',
    title: 'apiserver serving certificate without `127.0.0.1` / `localhost`',
    where: ['`pki/apiserver.crt` · subjectAltName (kubeadm defaults + `k8s-api.lab.example`, `10.20.0.10`)'],
    ruleIds: ['apiserver.san-loopback'],
    fix: 'Re-issue each kubeadm apiserver certificate with `127.0.0.1` and `localhost` in `apiServer.certSANs` (`kubeadm init phase certs apiserver`, one control plane at a time), or disable KubePrism while old and new control planes coexist.',
  },
  {
    key: 'oidc',
    title: 'OIDC login configured through apiserver flags',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `apiServer.extraArgs[oidc-issuer-url, oidc-client-id, oidc-username-claim, oidc-groups-claim]`',
      '`manifests/cp-*/kube-apiserver.yaml` · `--oidc-*` flags',
    ],
    ruleIds: ['apiserver.oidc'],
    fix: 'Carry the `oidc-*` flags into the Talos apiserver extraArgs (≤ v1.13); for v1.14 express them as a `jwt` authenticator in `KubeAuthenticationConfig`.',
  },
  {
    key: 'extra-args',
    title: 'Component flags that Talos defaults would silently drop, several pointing at host files',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `apiServer.extraArgs[audit-*, encryption-provider-config]` + `extraVolumes`',
      '`kubeadm-config.yaml` · `controllerManager.extraArgs`, `scheduler.extraArgs` (`bind-address=0.0.0.0`), `etcd.local.extraArgs` (`listen-metrics-urls`)',
    ],
    ruleIds: ['apiserver.extra-args-carryover', 'etcd.extra-args'],
    fix: 'Generate the matching extraArgs (and the audit policy file) for Talos; list every flag that is dropped.',
  },
  {
    key: 'sa-issuer',
    title: "kubeadm's default service-account issuer",
    where: [
      '`manifests/cp-*/kube-apiserver.yaml` · `--service-account-issuer=https://kubernetes.default.svc.cluster.local`',
    ],
    ruleIds: ['apiserver.sa-issuer'],
    fix: 'Before the first Talos control plane, prepend the Talos issuer (`https://k8s-api.lab.example:6443`) on every kubeadm apiserver and keep the old one accepted (v1.13 extraArgs lists, v1.14 `KubeServiceAccountConfig.accepted`); restart pods afterwards.',
  },
  {
    key: 'encryption-key-name',
    title: 'aescbc encryption key named `key-2023` (Talos ≤ v1.13 fixes the name `key1`)',
    where: [
      '`encryption-config.yaml` · EncryptionConfiguration · `resources[0].providers[0].aescbc.keys[0].name` (then `identity`)',
      '`manifests/cp-*/kube-apiserver.yaml` · `--encryption-provider-config`',
    ],
    ruleIds: ['encryption.key-name'],
    fix: 'Rotate the kubeadm side to a key named `key1` (add as read key, make it the write key, rewrite all Secrets) before bundling it; on v1.14 copy the configuration verbatim into `KubeEtcdEncryptionConfig`.',
  },
  {
    key: 'anonymous-health',
    title: 'External load-balancer health check depends on anonymous `/healthz`',
    where: [
      '`resources/rbac.yaml` · ClusterRoleBinding `lb-healthcheck` · `subjects` (`system:anonymous`, `system:unauthenticated`); ClusterRoleBinding `system:public-info-viewer`',
      '`audit.log` · `user.username=system:anonymous`, `userAgent=haproxy-healthcheck`, `requestURI=/healthz` from 10.20.0.5 / 10.20.0.6',
      '`manifests/cp-*/kube-apiserver.yaml` · no `--anonymous-auth` (defaults to true)',
    ],
    ruleIds: ['apiserver.anonymous-auth-dependents'],
    fix: 'Switch the haproxy checks to TCP or to an authenticated check; on ≤ v1.13 set `anonymous-auth: "true"` in the Talos apiserver extraArgs; on v1.14 keep the generated `KubeAuthenticationConfig` (anonymous on health paths only).',
  },
  {
    key: 'hostpath-cacert',
    title: 'CSI node plugin mounts hostPath `/etc/cacert`',
    where: [
      '`resources/daemonsets.yaml` · DaemonSet `kube-system/csi-cinder-nodeplugin` · `spec.template.spec.volumes[cacert].hostPath.path`',
    ],
    ruleIds: ['workload.hostpath-absent', 'workload.csi-driver'],
    fix: 'Ship the OpenStack CA as a Secret/ConfigMap mounted into the plugin (or place it under `/var` with a machine-config file and mount that); verify the driver on a canary Talos node.',
  },
  {
    key: 'hostpath-cloud-conf',
    title: 'Workload reads `/etc/kubernetes/cloud.conf` from the host',
    where: [
      '`resources/deployments.yaml` · Deployment `kube-system/csi-cinder-controllerplugin` · `spec.template.spec.volumes[cloud-config].hostPath.path`',
    ],
    ruleIds: ['workload.hostpath-absent'],
    fix: 'Move `cloud.conf` into a Secret (the chart supports it) before any Talos control plane runs this pod: `/etc/kubernetes` on Talos is managed by Talos and has no `cloud.conf`.',
  },
  {
    key: 'cp-schedulable',
    title: 'Control planes are schedulable (taint removed) and run application pods',
    where: [
      '`resources/nodes.json` · Node `cp-1`..`cp-3` · `spec.taints` absent',
      '`kubeadm-config.yaml` · InitConfiguration · `nodeRegistration.taints: []`',
      '`resources/pods.yaml` · e.g. `shop/frontend-*` on `cp-1`, `apps/wiki-*` on `cp-3`',
    ],
    ruleIds: ['nodes.cp-schedulable'],
    fix: 'Decide explicitly: `cluster.allowSchedulingOnControlPlanes: true` (v1.13) / no taint in `KubeNodeConfig` (v1.14), or plan for the lost capacity.',
  },
  {
    key: 'single-replica',
    title: 'One-replica Deployment without a PodDisruptionBudget',
    where: ['`resources/deployments.yaml` · Deployment `apps/wiki` · `spec.replicas: 1`; no PDB in `apps`'],
    ruleIds: ['workload.pdb-missing'],
    fix: 'Scale to 2 and add a PDB, or accept (and announce) the outage when its node drains. The audit also lists the add-ons kubeadm and the Cilium chart install without PDBs (coredns, cilium-operator, csi-cinder-controllerplugin).',
  },
  {
    key: 'pdb-blocking',
    title: 'PodDisruptionBudget that allows no disruption',
    where: [
      '`resources/pdbs.yaml` · PodDisruptionBudget `shop/checkout` · `spec.minAvailable: 2` = Deployment replicas, `status.disruptionsAllowed: 0`',
    ],
    ruleIds: ['workload.pdb-blocking'],
    fix: 'Scale `shop/checkout` to 3 (or use `maxUnavailable: 1`) before the roll; drains of `worker-1` and `worker-4` otherwise hang.',
  },
  {
    key: 'cilium-update-strategy',
    title: 'Cilium agent on RollingUpdate with `maxUnavailable: 2`',
    where: ['`resources/daemonsets.yaml` · DaemonSet `kube-system/cilium` · `spec.updateStrategy`'],
    ruleIds: ['cni.cilium-update-strategy'],
    fix: 'Change Cilium values as a deliberate pre-step with `maxUnavailable: 1`, gating on agent readiness: every values change restarts every agent.',
  },
  {
    key: 'cilium-values',
    title: 'Cilium values that differ from what Talos needs',
    where: [
      '`resources/daemonsets.yaml` · DaemonSet `kube-system/cilium` · agent `securityContext.capabilities.add` includes `SYS_MODULE`; init container `mount-cgroup`',
      '`resources/configmaps.yaml` · ConfigMap `kube-system/cilium-config` · `cgroup-root=/run/cilium/cgroupv2`, `k8s-service-host=k8s-api.lab.example`, `k8s-service-port=6443`',
    ],
    ruleIds: ['cni.cilium-values'],
    fix: 'Before migrating, roll out values that work on both node types: drop `SYS_MODULE`, `cgroup.autoMount.enabled=false` with `cgroup.hostRoot=/sys/fs/cgroup`, keep `k8sServiceHost` on the load-balancer endpoint (not KubePrism).',
  },
  {
    key: 'kube-proxy-replacement',
    title: 'No kube-proxy: Cilium kube-proxy replacement, and Cilium is the CNI',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `proxy.disabled: true`',
      '`resources/configmaps.yaml` · ConfigMap `kube-system/cilium-config` · `kube-proxy-replacement: "true"`; no DaemonSet `kube-system/kube-proxy`',
    ],
    ruleIds: ['addons.kube-proxy-conflict', 'cni.talos-default-flannel'],
    fix: 'Disable kube-proxy (`cluster.proxy.disabled: true` / `KubeProxyConfig.enabled: false`) and set the CNI to none (`cluster.network.cni.name: none` / no `KubeFlannelCNIConfig`).',
  },
  {
    key: 'coredns-custom',
    title: 'Customised CoreDNS Corefile (stub domain `lab.example`)',
    where: ['`resources/configmaps.yaml` · ConfigMap `kube-system/coredns` · `data.Corefile`'],
    ruleIds: ['addons.coredns-conflict'],
    fix: 'Disable Talos-managed CoreDNS (`cluster.coreDNS.disabled: true` / `KubeCoreDNSConfig.enabled: false`) so the next `upgrade-k8s` does not overwrite the Corefile.',
  },
  {
    key: 'etcd-version',
    title:
      'etcd 3.5.16: below 3.5.26 (learner bug once Talos ≥ v1.11 adds a 3.6 member), two minors behind Talos v1.14 (3.7)',
    where: [
      '`etcd/version.json` · `etcdserver`; `etcd/endpoint-status.json` · `Status.version`',
      '`manifests/cp-*/etcd.yaml` · image `registry.k8s.io/etcd:3.5.16-0`',
    ],
    ruleIds: ['etcd.version-learner-bug', 'etcd.version-skew'],
    fix: 'Patch the kubeadm etcd to 3.5.26+ first, and pin `cluster.etcd.image` to a 3.5 image on Talos until every kubeadm member is gone.',
  },
  {
    key: 'bootstrap-token',
    title: 'The only bootstrap token expires after 24 h and carries kubeadm groups',
    where: [
      '`resources/bootstrap-token.yaml` · Secret `kube-system/bootstrap-token-abcdef` · `data.expiration`, `data.auth-extra-groups`',
    ],
    ruleIds: ['bootstrap.token-ttl', 'bootstrap.token-groups'],
    fix: 'Create the token for Talos with `kubeadm token create --ttl 0` and keep the kubeadm bootstrap RBAC until the last node is migrated.',
  },
  {
    key: 'kubelet-config',
    title: 'Kubelet settings that Talos defaults would replace',
    where: [
      '`resources/configmaps.yaml` · ConfigMap `kube-system/kubelet-config` · `maxPods`, `systemReserved`, `kubeReserved`, `evictionHard`, `shutdownGracePeriod*`',
    ],
    ruleIds: ['kubelet.config-carryover'],
    fix: 'Carry them into `machine.kubelet.extraConfig` (v1.14 `KubeletConfig.config`).',
  },
  {
    key: 'node-labels',
    title: 'Workload pinned by a custom node label',
    where: [
      '`resources/statefulsets.yaml` · StatefulSet `shop/postgres` · `spec.template.spec.nodeSelector[lab.example/pool]=data`',
      '`resources/nodes.json` · Node `worker-3`..`worker-5` · `metadata.labels[lab.example/pool]`',
    ],
    ruleIds: ['nodes.labels-taints-carryover'],
    fix: "Put `lab.example/pool` into the replacement nodes' labels (`machine.nodeLabels` / `KubeNodeConfig.labels`).",
  },
  {
    key: 'bare-pod',
    title: 'Bare pod with `NET_ADMIN` in an unlabelled namespace',
    where: [
      '`resources/pods.yaml` · Pod `default/netshoot` · no `ownerReferences`; `capabilities.add: [NET_ADMIN, NET_RAW]`',
    ],
    ruleIds: ['workload.undrainable-pods', 'apiserver.podsecurity-default'],
    fix: 'Delete it or turn it into a Deployment; label `default` with a PodSecurity level (Talos enforces `baseline` cluster-wide, which rejects `NET_ADMIN`).',
  },
];

// =============================================================================================
// README

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

function readme(): string {
  const nodeRows = NODES.map(
    (n) =>
      `| \`${n.name}\` | ${n.ip} | ${n.role}${n.pool ? ` (pool \`${n.pool}\`)` : ''} | 10.244.${n.cidrIndex}.0/24 | ${n.cpu} vCPU, ${Math.round(n.memoryKi / 1048576)} GiB |`,
  );
  const trapRows = TRAPS.map(
    (t, i) =>
      `| ${i + 1} | ${mdCell(t.title)} | ${t.where.map(mdCell).join('<br>')} | ${t.ruleIds.map((r) => `\`${r}\``).join('<br>')} | ${mdCell(t.fix)} |`,
  );
  return `<!-- generated by scripts/make-example.ts; do not edit, regenerate with \`npx tsx scripts/make-example.ts\` -->
# lab-cluster: an example kubeadm cluster with the traps of real migrations

An offline *files directory* (see \`docs/snapshot-layout.md\` §1) of a kubeadm cluster as a platform team
would copy it off a control plane: the kubeadm configuration, the static pod manifests of all three
control planes, the PKI of \`cp-1\`, \`kubectl get -o yaml|json\` dumps, \`etcdctl -w json\` output, the
encryption configuration and a slice of the apiserver audit log. It is not a real cluster and it is
not the lab (\`ferry rehearse\`); it is the input for \`ferry facts\` and \`ferry audit\`:

\`\`\`sh
npx ferry facts examples/lab-cluster
npx ferry audit examples/lab-cluster    # exits 1: the example has blockers, that is the point
\`\`\`

**Key material is throwaway.** The PKI, the aescbc key and the bootstrap token are generated afresh
each time \`scripts/make-example.ts\` runs (leaf certificates for 365 days); everything else is
deterministic. Never use these keys for anything.

## The cluster

- kubeadm-built, Kubernetes **${CLUSTER.kubernetesVersion}**, cluster name \`${CLUSTER.name}\`, containerd on ${CLUSTER.osImage}.
- Control-plane endpoint **\`${CLUSTER.endpointHost}:${CLUSTER.endpointPort}\`** → VIP ${CLUSTER.vip} held by an
  external haproxy/keepalived pair (${CLUSTER.loadBalancers.map((l) => `\`${l.name}\` ${l.ip}`).join(', ')}) that checks \`GET /healthz\` without credentials.
- Stacked etcd **${CLUSTER.etcdVersion}** (\`${CLUSTER.etcdImage}\`), one member per control plane, leader \`${ETCD_LEADER}\`, no alarms.
- Pod subnet ${CLUSTER.podSubnet} (per-node /24, Cilium \`ipam: kubernetes\`), service subnet ${CLUSTER.serviceSubnet},
  \`kubernetes\` ${CLUSTER.kubernetesServiceIP}, \`kube-dns\` ${CLUSTER.dnsServiceIP}, DNS domain \`${CLUSTER.dnsDomain}\`.
- Cilium **${CLUSTER.ciliumVersion}** with \`kubeProxyReplacement=true\` (VXLAN tunnel); no kube-proxy. kubeadm's
  \`proxy.disabled: true\` records that, so \`kubeadm-config.yaml\` carries no KubeProxyConfiguration.
- Encryption at rest: aescbc key \`${CLUSTER.encryptionKeyName}\` with an \`identity\` fallback.
- Storage: OpenStack Cinder CSI (\`cinder.csi.openstack.org\`), default StorageClass \`csi-cinder\`.
- Workloads: namespace \`shop\` (frontend, api, checkout, a 3-member postgres StatefulSet, a nightly backup
  CronJob), namespace \`apps\` (wiki), and a forgotten debugging pod in \`default\`.

| node | IP | role | pod CIDR | size |
|---|---|---|---|---|
${nodeRows.join('\n')}

## Files

| path | what it is |
|---|---|
| \`kubeadm-config.yaml\` | ClusterConfiguration (v1beta4, \`extraArgs\` as name/value lists), InitConfiguration of \`cp-1\`, KubeletConfiguration |
| \`manifests/cp-N/*.yaml\` | \`/etc/kubernetes/manifests\` of each control plane: kube-apiserver, kube-controller-manager, kube-scheduler, etcd |
| \`pki/\` | \`/etc/kubernetes/pki\` of \`cp-1\` (real certificates and keys, kubeadm layout) |
| \`resources/*.yaml\`, \`resources/nodes.json\` | \`kubectl get … -o yaml\` / \`-o json\` dumps (Lists, and multi-document YAML for \`batch.yaml\`) |
| \`etcd/*.json\` | \`etcdctl member list\`, \`endpoint status --cluster\`, \`alarm list\` with \`-w json\`; \`/version\` |
| \`encryption-config.yaml\` | the file named by \`--encryption-provider-config\` |
| \`audit.log\` | two minutes of \`cp-1\`'s audit log (JSON lines) |

## Traps

Each row says where the evidence is, which \`ferry audit\` rule reports it and what fixes it. Several
rules are target-dependent (Talos version, KubePrism on or off), so not every row is a blocker for
every target.

| # | trap | where (file · object · field) | audit rule | fix |
|---|---|---|---|---|
${trapRows.join('\n')}

## What is deliberately healthy

So that findings stand out: one self-signed CA per role with its key present, a single service-account
key, the control-plane endpoint and the \`kubernetes\` service IP in the apiserver certificate, three
healthy etcd voters without alarms or learners, the same CIDRs and DNS settings in every source,
\`kube-dns\` on the 10th service IP, stacked etcd reached on \`https://127.0.0.1:2379\`.
`;
}

// =============================================================================================
// Build

async function put(root: string, rel: string, data: string, mode = 0o644): Promise<void> {
  const path = join(root, rel);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, data, { mode });
}

/** Writes the whole example into `dir` (an existing, empty directory). */
export async function buildExample(dir: string): Promise<void> {
  nextPodHost.clear();
  resourceVersion = 4_812_000;
  const cp1 = nodeByName('cp-1');

  await put(dir, 'README.md', readme());
  await put(dir, 'kubeadm-config.yaml', kubeadmConfigFile());
  for (const cp of CONTROL_PLANES) {
    const manifests = staticManifests(cp);
    for (const component of STATIC_COMPONENTS) {
      await put(dir, `manifests/${cp.name}/${component}.yaml`, toYaml(manifests[component]));
    }
  }

  await writeKubeadmPki(join(dir, 'pki'), {
    clusterName: CLUSTER.name,
    apiserver: {
      nodeName: cp1.name,
      advertiseAddress: cp1.ip,
      // kubeadm's defaults plus the endpoint and certSANs; deliberately no localhost / 127.0.0.1.
      dnsNames: [
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        `kubernetes.default.svc.${CLUSTER.dnsDomain}`,
        CLUSTER.endpointHost,
      ],
      ipAddresses: [CLUSTER.kubernetesServiceIP, CLUSTER.vip],
    },
    etcdMembers: CONTROL_PLANES.map((c) => ({ name: c.name, ip: c.ip })),
  });
  const caPem = await readFile(join(dir, 'pki', 'ca.crt'), 'utf8');
  const tokenSecret = randomTokenSecret();

  const nodes = NODES.map(nodeObject);
  const nodesByName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const w = emptyWorkloads();
  mirrorPods(w, nodesByName);
  kubeSystemWorkloads(w);
  appWorkloads(w);

  const r = (name: string) => `resources/${name}`;
  await put(dir, r('namespaces.yaml'), kubectlYamlList(namespaces()));
  await put(dir, r('nodes.json'), kubectlJsonList(nodes));
  await put(dir, r('pods.yaml'), kubectlYamlList(w.pods));
  await put(dir, r('deployments.yaml'), kubectlYamlList(w.deployments));
  await put(dir, r('replicasets.yaml'), kubectlYamlList(w.replicasets));
  await put(dir, r('daemonsets.yaml'), kubectlYamlList(w.daemonsets));
  await put(dir, r('statefulsets.yaml'), kubectlYamlList(w.statefulsets));
  await put(dir, r('batch.yaml'), multiDoc([...w.cronjobs, ...w.jobs]));
  await put(dir, r('pdbs.yaml'), kubectlYamlList(w.pdbs));
  await put(dir, r('services.yaml'), kubectlYamlList(services()));
  await put(dir, r('endpointslices.yaml'), kubectlYamlList(endpointSlices()));
  await put(dir, r('configmaps.yaml'), kubectlYamlList(configMaps()));
  await put(dir, r('rbac.yaml'), kubectlYamlList(rbac()));
  await put(dir, r('storage.yaml'), kubectlYamlList(storage()));
  await put(dir, r('cluster-info.yaml'), toYaml(clusterInfo(caPem, tokenSecret)));
  await put(dir, r('bootstrap-token.yaml'), toYaml(bootstrapTokenSecret(tokenSecret)), 0o600);

  await put(dir, 'etcd/member-list.json', etcdMemberList());
  await put(dir, 'etcd/endpoint-status.json', etcdEndpointStatus());
  await put(dir, 'etcd/version.json', etcdVersion());
  await put(dir, 'etcd/alarms.json', etcdAlarms());
  await put(dir, 'encryption-config.yaml', encryptionConfig(), 0o600);
  await put(dir, 'audit.log', auditLog());
}

const README_MARKER = '<!-- generated by scripts/make-example.ts';

/** Replaces `outDir` atomically; refuses to replace a directory this script did not write. */
export async function makeExample(outDir: string): Promise<void> {
  if (existsSync(outDir)) {
    const entries = await readdir(outDir);
    const ours =
      entries.length === 0 ||
      (entries.includes('README.md') &&
        (await readFile(join(outDir, 'README.md'), 'utf8')).startsWith(README_MARKER));
    if (!ours) {
      throw usageError(
        `${outDir} exists and was not written by scripts/make-example.ts`,
        'pass an empty or new directory as OUT_DIR',
      );
    }
  }
  await writeDirAtomic(outDir, buildExample, { force: true });
}

/** Relative paths of every file under `dir`, sorted, with `/` separators. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  await walk(dir);
  return out.sort();
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(
      'usage: npx tsx scripts/make-example.ts [OUT_DIR]   (default examples/lab-cluster)\n',
    );
    return 0;
  }
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const outDir = resolve(argv[0] ?? join(repo, 'examples', 'lab-cluster'));
  try {
    await makeExample(outDir);
  } catch (err) {
    process.stderr.write(`${describeError(err)}\n`);
    return err instanceof FerryError ? err.exitCode : 4;
  }
  let total = 0;
  const files = await listFiles(outDir);
  for (const f of files) total += (await stat(join(outDir, f))).size;
  process.stdout.write(`wrote ${files.length} files (${Math.round(total / 1024)} KiB) to ${outDir}\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
