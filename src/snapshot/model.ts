/**
 * The snapshot: everything ferry knows about a kubeadm cluster at one moment, as plain data.
 * It is captured live (collect.ts) or assembled from files (load.ts), saved as a directory
 * (store.ts) and is the input of every offline command. It never holds private keys or token
 * secrets: only names, fingerprints and what can be derived from public material.
 *
 * Every piece carries a `source` so that facts derived from it can say where they came from.
 */

/**
 * 2: the manifest records what collection could not observe (`unobserved`) and whether the user
 * kept a partial snapshot (`partial`). Format 1 had neither; it is still read (validate.ts).
 */
export const SNAPSHOT_FORMAT_VERSION = 2;

// ---------------------------------------------------------------------------------------------
// Provenance

/** Where a value came from. Facts and findings quote these verbatim. */
export type SourceRef =
  | {
      kind: 'object';
      /** e.g. "ConfigMap", "Pod", "Node" */
      objectKind: string;
      namespace?: string;
      name: string;
      /** Path inside the object, e.g. "data.ClusterConfiguration" */
      field?: string;
    }
  | { kind: 'file'; path: string; line?: number; field?: string }
  | {
      kind: 'flag';
      component: string;
      node?: string;
      flag: string;
      /** The manifest file or mirror pod that carried the flag. */
      from: SourceRef;
    }
  | { kind: 'etcd'; endpoint: string; field?: string }
  | { kind: 'tls'; address: string }
  /** An answer of the API server itself, e.g. GET /version on the kubeconfig's server. */
  | { kind: 'api'; server: string; path: string; field?: string }
  | { kind: 'derived'; from: SourceRef[]; note: string };

// ---------------------------------------------------------------------------------------------
// Manifest

export type SnapshotSource =
  | { kind: 'live'; server: string; context?: string }
  | { kind: 'files'; path: string };

export interface SnapshotManifest {
  formatVersion: number;
  /** ISO-8601 time the snapshot was taken or assembled. */
  createdAt: string;
  source: SnapshotSource;
  ferryVersion: string;
  /** Which optional parts were present; a rule needing a missing part reports itself skipped. */
  parts: SnapshotPart[];
  /** Non-fatal problems met while collecting (e.g. an endpoint that refused the TLS handshake). */
  warnings: string[];
  /**
   * The lists and reads the server refused (403) or does not serve (404): their inputs are
   * unknown, never empty. Absent in format 1 snapshots; reading one derives it from the warnings
   * format 1 wrote for such lists (validate.ts), so an old snapshot is as honest as a new one.
   */
  unobserved?: NotObserved[];
  /** Set when the user kept a snapshot with unobserved inputs (`ferry snapshot --allow-partial`). */
  partial?: boolean;
}

/** The ConfigMaps collection reads by name, as "namespace/name". */
export const CONFIG_MAP_INPUTS = [
  'kube-system/kubeadm-config',
  'kube-system/kubelet-config',
  'kube-system/kube-proxy',
  'kube-system/coredns',
  'kube-system/cilium-config',
  'kube-public/cluster-info',
] as const;

export type ConfigMapInput = (typeof CONFIG_MAP_INPUTS)[number];

/**
 * One thing a snapshot holds that a list or read fills: a resources key (all its objects), the
 * bootstrap tokens, or one ConfigMap. The unit a rule declares it reads, and the audit skips on.
 */
export type SnapshotInput =
  | Exclude<ResourceKey, 'configmaps'>
  | 'bootstrapTokens'
  | `configmap ${ConfigMapInput}`;

/** Why an input is unknown. */
export type NotObservedReason = 'forbidden' | 'not-served';

/** A list or read that did not happen: what it would have filled, and what the server needs to allow. */
export interface NotObserved {
  input: SnapshotInput;
  reason: NotObservedReason;
  verb: 'list' | 'get';
  /** API group, "" for the core group. */
  group: string;
  /** The resource (plural), e.g. "nodes". */
  resource: string;
  namespace?: string;
  name?: string;
  /** The server's answer, as it gave it. */
  message: string;
}

export type SnapshotPart =
  | 'kubeadm'
  | 'flags'
  | 'kubelet'
  | 'kube-proxy'
  | 'pki'
  | 'encryption'
  | 'etcd'
  | 'resources'
  | 'served-certs'
  | 'audit-log'
  | 'server-version'
  /** A Cluster API management cluster (`ferry snapshot --mgmt-kubeconfig`, or `mgmt/` files). */
  | 'mgmt';

// ---------------------------------------------------------------------------------------------
// kubeadm

export type KubeadmApiVersion =
  | 'kubeadm.k8s.io/v1beta2'
  | 'kubeadm.k8s.io/v1beta3'
  | 'kubeadm.k8s.io/v1beta4';

/** A command-line flag, in order of appearance. Bare boolean flags have value "true". */
export interface Flag {
  name: string;
  value: string;
}

export interface HostPathMount {
  name: string;
  hostPath: string;
  mountPath: string;
  readOnly?: boolean;
  pathType?: string;
}

export interface ControlPlaneComponentConfig {
  /** Normalized from v1beta2/3 maps and v1beta4 name/value lists; may repeat a flag. */
  extraArgs: Flag[];
  extraVolumes: HostPathMount[];
}

/** kubeadm ClusterConfiguration, normalized from v1beta2, v1beta3 and v1beta4 into one shape. */
export interface ClusterConfiguration {
  sourceApiVersion: KubeadmApiVersion;
  source: SourceRef;
  clusterName?: string;
  kubernetesVersion?: string;
  controlPlaneEndpoint?: string;
  imageRepository?: string;
  certificatesDir?: string;
  encryptionAlgorithm?: string;
  featureGates: Record<string, boolean>;
  networking: { podSubnet?: string; serviceSubnet?: string; dnsDomain?: string };
  apiServer: ControlPlaneComponentConfig & { certSANs: string[]; timeoutForControlPlane?: string };
  controllerManager: ControlPlaneComponentConfig;
  scheduler: ControlPlaneComponentConfig;
  etcd: {
    local?: {
      imageRepository?: string;
      imageTag?: string;
      dataDir?: string;
      extraArgs: Flag[];
      serverCertSANs: string[];
      peerCertSANs: string[];
    };
    external?: { endpoints: string[]; caFile?: string; certFile?: string; keyFile?: string };
  };
  dns: { imageRepository?: string; imageTag?: string; disabled?: boolean };
  /** Fields ferry does not model, kept so nothing is silently lost. */
  unknownFields: string[];
}

export interface NodeRegistration {
  name?: string;
  criSocket?: string;
  taints?: Taint[];
  kubeletExtraArgs: Flag[];
  ignorePreflightErrors: string[];
}

/** InitConfiguration / JoinConfiguration: node-level settings. */
export interface KubeadmNodeConfiguration {
  kind: 'InitConfiguration' | 'JoinConfiguration';
  sourceApiVersion: KubeadmApiVersion;
  source: SourceRef;
  nodeRegistration: NodeRegistration;
  localAPIEndpoint?: { advertiseAddress?: string; bindPort?: number };
  /** Token ids only (never the secret half). */
  bootstrapTokenIds: string[];
}

export interface KubeadmConfig {
  clusterConfiguration?: ClusterConfiguration;
  nodeConfigurations: KubeadmNodeConfiguration[];
}

/** A component configuration (KubeletConfiguration, KubeProxyConfiguration) as found. */
export interface ComponentConfig {
  apiVersion: string;
  kind: string;
  source: SourceRef;
  /** The document minus apiVersion/kind. */
  spec: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Static pods (control-plane components)

export type ControlPlaneComponent = 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'etcd';

export interface StaticPod {
  component: ControlPlaneComponent | string;
  /** Node the pod runs on (mirror pods) or the node the manifests were copied from, when known. */
  node?: string;
  image?: string;
  /** The full command line (command + args of the first container). */
  command: string[];
  flags: Flag[];
  hostPathVolumes: { name: string; path: string; type?: string }[];
  source: SourceRef;
}

// ---------------------------------------------------------------------------------------------
// PKI

export type KeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519' | 'unknown';

export interface CertificateInfo {
  /** Path relative to the PKI directory, e.g. "etcd/ca.crt"; or a label for served certificates. */
  path: string;
  /** Position in the file when it holds a bundle of several certificates (0-based). */
  index: number;
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  isCA: boolean;
  pathLength?: number;
  selfSigned: boolean;
  dnsNames: string[];
  ipAddresses: string[];
  keyAlgorithm: KeyAlgorithm;
  /** RSA modulus bits, or the ECDSA curve size. */
  keySize?: number;
  curve?: string;
  keyUsages: string[];
  extendedKeyUsages: string[];
  /** SHA-256 of the DER certificate, hex. */
  fingerprintSha256: string;
  /** SHA-256 of the DER SubjectPublicKeyInfo, hex: used for key↔certificate matching. */
  publicKeySha256: string;
  subjectKeyId?: string;
  authorityKeyId?: string;
  /**
   * Chain verification: path of the CA certificate in the inventory that signed this one and
   * whether the signature verifies; `issuerPath` absent when the issuer is not in the inventory.
   */
  chain: { issuerPath?: string; verified: boolean };
}

export interface PrivateKeyInfo {
  path: string;
  algorithm: KeyAlgorithm;
  keySize?: number;
  curve?: string;
  /** PEM says "ENCRYPTED PRIVATE KEY" or has Proc-Type: 4,ENCRYPTED. */
  encrypted: boolean;
  /** SHA-256 of the public key derived from it, hex (absent when encrypted or unreadable). */
  publicKeySha256?: string;
  /** The certificate (path) whose public key matches, or null when there is none. */
  matchesCertificate: string | null;
}

export interface PublicKeyInfo {
  path: string;
  algorithm: KeyAlgorithm;
  keySize?: number;
  publicKeySha256: string;
}

export interface PkiProblem {
  path: string;
  /** not-a-file: a directory, a dangling symbolic link or a loop where the file was expected. */
  problem: 'not-pem' | 'unparseable' | 'encrypted-key' | 'key-mismatch' | 'unreadable' | 'not-a-file';
  message: string;
}

export interface PkiInventory {
  /** The directory the inventory was made from, as given. */
  root: string;
  certificates: CertificateInfo[];
  keys: PrivateKeyInfo[];
  publicKeys: PublicKeyInfo[];
  problems: PkiProblem[];
}

/** The certificate a server presented in a TLS handshake. */
export interface ServedCertificate {
  /** host:port dialled. */
  address: string;
  role: 'endpoint' | 'control-plane' | 'etcd';
  node?: string;
  certificate?: CertificateInfo;
  /** Present when the handshake failed. */
  error?: string;
}

// ---------------------------------------------------------------------------------------------
// Encryption at rest

export type EncryptionProviderType = 'aescbc' | 'aesgcm' | 'secretbox' | 'kms' | 'identity';

export interface EncryptionProvider {
  type: EncryptionProviderType;
  /** Key names in order; the first one writes. Secrets are never stored in a snapshot. */
  keyNames: string[];
  /** SHA-256 of each key's secret (hex), same order: lets audit detect rotations without the key. */
  keyFingerprints: string[];
  kms?: { name?: string; apiVersion?: string; endpoint?: string };
}

export interface EncryptionConfig {
  source: SourceRef;
  resources: { resources: string[]; providers: EncryptionProvider[] }[];
}

// ---------------------------------------------------------------------------------------------
// etcd

export interface EtcdMember {
  /** uint64 as a decimal string: JSON numbers above 2^53 lose precision. */
  id: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

export interface EtcdEndpointStatus {
  endpoint: string;
  memberId?: string;
  leaderId?: string;
  version?: string;
  dbSize?: number;
  dbSizeInUse?: number;
  raftTerm?: string;
  raftIndex?: string;
  isLearner?: boolean;
  errors: string[];
}

export interface EtcdState {
  source: SourceRef;
  members: EtcdMember[];
  endpoints: EtcdEndpointStatus[];
  version?: { server: string; cluster: string };
  alarms: { memberId: string; alarm: string }[];
}

// ---------------------------------------------------------------------------------------------
// Kubernetes objects. Loose structural types: the fields ferry reads, plus whatever else was there.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
  resourceVersion?: string;
  generation?: number;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // biome-ignore lint/suspicious/noExplicitAny: objects are validated structurally by the code that reads them
  spec?: any;
  // biome-ignore lint/suspicious/noExplicitAny: see spec
  status?: any;
  // biome-ignore lint/suspicious/noExplicitAny: ConfigMaps, Secrets, EndpointSlices and RBAC carry top-level fields
  [key: string]: any;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
}

/** Bootstrap tokens: id, expiry and usages only, never the secret half. */
export interface BootstrapToken {
  id: string;
  expiration?: string;
  usages: string[];
  authExtraGroups: string[];
  description?: string;
  source: SourceRef;
}

export interface Resources {
  namespaces: KubeObject[];
  nodes: KubeObject[];
  pods: KubeObject[];
  deployments: KubeObject[];
  replicasets: KubeObject[];
  statefulsets: KubeObject[];
  daemonsets: KubeObject[];
  jobs: KubeObject[];
  cronjobs: KubeObject[];
  poddisruptionbudgets: KubeObject[];
  services: KubeObject[];
  endpointslices: KubeObject[];
  /** Only kube-system/{kubeadm-config,kubelet-config,kube-proxy,coredns,cilium-config} and kube-public/cluster-info. */
  configmaps: KubeObject[];
  /** ClusterRoleBindings and RoleBindings whose subjects include system:anonymous or system:unauthenticated. */
  anonymousBindings: KubeObject[];
  csidrivers: KubeObject[];
  storageclasses: KubeObject[];
  persistentvolumes: KubeObject[];
  /**
   * Argo CD Applications and Flux Kustomizations and HelmReleases, reduced to what says what they
   * own and whether they reconcile (snapshot/gitops.ts): never their Helm values or parameters.
   */
  gitops: KubeObject[];
  bootstrapTokens: BootstrapToken[];
}

export type ResourceKey = Exclude<keyof Resources, 'bootstrapTokens'>;

export const RESOURCE_KEYS: readonly ResourceKey[] = [
  'namespaces',
  'nodes',
  'pods',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
  'poddisruptionbudgets',
  'services',
  'endpointslices',
  'configmaps',
  'anonymousBindings',
  'csidrivers',
  'storageclasses',
  'persistentvolumes',
  'gitops',
];

// ---------------------------------------------------------------------------------------------
// The API server's own word (live snapshots): what GET /version answered.

export interface ServerVersionInfo {
  /** GET /version on the server the snapshot was taken from. */
  source: SourceRef;
  /**
   * The answer's string fields as sent: gitVersion, major, minor, and whatever else this server
   * version reports (gitCommit, buildDate, goVersion, platform, emulationMinor, …).
   */
  info: { gitVersion: string } & Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Audit log (optional): who reached the apiserver anonymously, to find dependents of anonymous auth.

export interface AnonymousAccess {
  path: string;
  userAgent?: string;
  sourceIPs: string[];
  count: number;
}

export interface AuditLogSummary {
  source: SourceRef;
  events: number;
  anonymous: AnonymousAccess[];
}

// ---------------------------------------------------------------------------------------------
// The snapshot

export interface Snapshot {
  manifest: SnapshotManifest;
  kubeadm: KubeadmConfig;
  kubelet?: ComponentConfig;
  kubeProxy?: ComponentConfig;
  staticPods: StaticPod[];
  pki?: PkiInventory;
  servedCertificates: ServedCertificate[];
  encryption?: EncryptionConfig;
  etcd?: EtcdState;
  resources: Resources;
  auditLog?: AuditLogSummary;
  /** Live snapshots only; older saved snapshots have none. */
  serverVersion?: ServerVersionInfo;
  mgmt?: MgmtSnapshot;
}

/** A CustomResourceDefinition of the management cluster: which versions it serves and stores. */
export interface MgmtCrd {
  name: string;
  group: string;
  kind: string;
  versions: { name: string; served: boolean; storage: boolean }[];
}

/**
 * The Cluster API management cluster as ferry read it: the Cluster API objects (Clusters,
 * Machines, MachineDeployments, TalosControlPlanes, infrastructure objects, clusterctl Provider
 * inventory, …) and the Secrets of their namespaces with every data value removed (keys only),
 * and the CRDs of the Cluster API groups. Paused state is in the objects (spec.paused, annotation).
 */
export interface MgmtSnapshot {
  source: SourceRef;
  objects: KubeObject[];
  crds: MgmtCrd[];
  /**
   * The Cluster API controllers' Deployments (the operator's and each provider's), as far as
   * they were read. Absent: not read (an older snapshot, or a mgmt/ directory without
   * Deployments) — unknown, like a list the server refused, never "none".
   */
  controllers?: MgmtControllers;
}

/** A Cluster API controller's Deployment, as the snapshot keeps it: no images, no environment. */
export interface MgmtController {
  namespace: string;
  name: string;
  /** What runs in it: the `cluster.x-k8s.io/provider` label (`cluster-api`, `infrastructure-proxmox`) or `cluster-api-operator`. */
  component: string;
  /** spec.replicas (1 when unset, as the API server defaults it). */
  replicas: number;
  /** The manager container's leader-election flag, the last one given winning; absent is off. */
  leaderElection: 'on' | 'off';
  /** Its pods kept on distinct nodes: a required anti-affinity, or a DoNotSchedule spread, on kubernetes.io/hostname. */
  spread: 'hostname' | 'none';
}

export type MgmtControllers =
  | { kind: 'observed'; deployments: MgmtController[] }
  | { kind: 'not-observed'; reason: NotObservedReason; message: string };

/** Every SnapshotInput, in collection order. */
export const SNAPSHOT_INPUTS: readonly SnapshotInput[] = [
  ...RESOURCE_KEYS.filter((k): k is Exclude<ResourceKey, 'configmaps'> => k !== 'configmaps'),
  'bootstrapTokens',
  ...CONFIG_MAP_INPUTS.map((c) => `configmap ${c}` as const),
];

/** "list nodes", "get configmaps kubeadm-config in kube-system": what the server must allow. */
export function describeNotObserved(n: NotObserved): string {
  const group = n.group === '' ? '' : `.${n.group}`;
  const name = n.name !== undefined ? ` ${n.name}` : '';
  const where = n.namespace !== undefined ? ` in ${n.namespace}` : '';
  return `${n.verb} ${n.resource}${group}${name}${where}`;
}

export function emptyResources(): Resources {
  return {
    namespaces: [],
    nodes: [],
    pods: [],
    deployments: [],
    replicasets: [],
    statefulsets: [],
    daemonsets: [],
    jobs: [],
    cronjobs: [],
    poddisruptionbudgets: [],
    services: [],
    endpointslices: [],
    configmaps: [],
    anonymousBindings: [],
    csidrivers: [],
    storageclasses: [],
    persistentvolumes: [],
    gitops: [],
    bootstrapTokens: [],
  };
}

export function describeSource(ref: SourceRef): string {
  switch (ref.kind) {
    case 'object': {
      const id = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
      return `${ref.objectKind} ${id}${ref.field ? ` ${ref.field}` : ''}`;
    }
    case 'file':
      return `${ref.path}${ref.line !== undefined ? `:${ref.line}` : ''}${ref.field ? ` ${ref.field}` : ''}`;
    case 'flag':
      return `${ref.component}${ref.node ? `@${ref.node}` : ''} --${ref.flag} (${describeSource(ref.from)})`;
    case 'etcd':
      return `etcd ${ref.endpoint}${ref.field ? ` ${ref.field}` : ''}`;
    case 'tls':
      return `TLS handshake with ${ref.address}`;
    case 'api':
      return `GET ${ref.path}${ref.field ? ` ${ref.field}` : ''} (${ref.server})`;
    case 'derived':
      return `${ref.note} (from ${ref.from.map(describeSource).join('; ')})`;
  }
}
