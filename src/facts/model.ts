/**
 * Facts: the canonical values derived from a Snapshot (+ Target), each with its provenance.
 * Audit, generate and plan read these and never re-derive (design.md "Facts").
 *
 * Value conventions, so consumers never guess:
 * - `value: undefined` + `missing`  — ferry could not derive it; `missing` says what to provide.
 * - `value: null`                   — derived to be *not set* (e.g. no --service-account-jwks-uri);
 *                                     only facts whose type includes `null` use it.
 * - `conflict`                      — sources disagree; every candidate is listed with its source,
 *                                     `value` equals `conflict.believed`, and `reason` says why.
 */
import type { EncryptionProviderType, Flag, SourceRef, Taint } from '../snapshot/model.js';
import type { Target } from './target.js';

export const FACTS_FORMAT_VERSION = 1;

export interface Candidate<T> {
  value: T;
  source: SourceRef;
}

export interface Conflict<T> {
  candidates: Candidate<T>[];
  believed: T;
  reason: string;
}

export interface Fact<T> {
  /** Stable key, e.g. "network.podSubnets". Never renamed: rules and generated files quote it. */
  key: string;
  title: string;
  value: T | undefined;
  /** Sources that support `value` (for a conflict: those agreeing with the believed value). */
  provenance: SourceRef[];
  conflict?: Conflict<T>;
  missing?: string;
  /** Context a reader needs to use the value correctly (e.g. "Kubernetes default applies"). */
  note?: string;
}

// ---------------------------------------------------------------------------------------------
// Value types

export interface Endpoint {
  host: string;
  port: number;
  /** https://host:port, IPv6 bracketed. */
  url: string;
  /** The control-plane node whose own address is the endpoint host (no load balancer), else null. */
  node: string | null;
  /**
   * Where this value was read: kubeadm-config controlPlaneEndpoint, or only a copy of it
   * (kube-public/cluster-info, the kube-proxy kubeconfig) when kubeadm-config has none.
   */
  from: 'kubeadm' | 'cluster-info' | 'kube-proxy';
}

/** A control-plane component instance (static pod) as found on one node. */
export interface ComponentInstance {
  /** Node name; null when the manifests were copied without saying from which node. */
  node: string | null;
  image: string | null;
  flags: Flag[];
  source: SourceRef;
}

export interface ApiserverInstance extends ComponentInstance {
  /** Version from the image tag ("v1.32.4"), null when the image has none. */
  version: string | null;
  advertiseAddress: string | null;
  securePort: number | null;
  etcdServers: string[];
}

export interface EtcdInstance extends ComponentInstance {
  /** Version from the image tag ("3.5.16" for "3.5.16-0"). */
  version: string | null;
}

export interface Admission {
  enabled: string[];
  disabled: string[];
  /** --admission-control-config-file, null when not set. */
  configFile: string | null;
}

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export type PodSecurityDefaults =
  | { mode: 'disabled' }
  /** No admission configuration: the PodSecurity plugin's built-in defaults. */
  | { mode: 'built-in'; enforce: PodSecurityLevel; audit: PodSecurityLevel; warn: PodSecurityLevel };

export interface Authorization {
  modes: string[];
  /** --authorization-config, null when not set. */
  configFile: string | null;
}

export interface EncryptionRule {
  resources: string[];
  providers: {
    type: EncryptionProviderType;
    keyNames: string[];
    /** SHA-256 of each key secret, hex: lets audit detect rotations without the secret. */
    keyFingerprints: string[];
    kms?: { name?: string; apiVersion?: string; endpoint?: string };
  }[];
}

/** The provider and key that encrypt newly written Secrets; keyName null for identity (plaintext). */
export interface WriteKey {
  provider: EncryptionProviderType;
  keyName: string | null;
}

export interface EtcdTopology {
  mode: 'stacked' | 'external';
  /** --etcd-servers of the apiservers (or kubeadm's etcd.external.endpoints). */
  servers: string[];
}

export interface EtcdMemberFact {
  id: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
  isLeader: boolean;
  /** Node this member runs on, and how ferry matched it. */
  node: string | null;
  nodeMatch: 'name' | 'address' | null;
  version: string | null;
  dbSize: number | null;
  dbSizeInUse: number | null;
  raftIndex: string | null;
  /** Errors the member reported in its status. */
  errors: string[];
}

export interface NodeAddress {
  type: string;
  address: string;
}

export interface NodeFact {
  name: string;
  internalIP: string | null;
  addresses: NodeAddress[];
  labels: Record<string, string>;
  taints: Taint[];
  /** spec.unschedulable (cordoned). */
  unschedulable: boolean;
  kubeletVersion: string | null;
  podCIDRs: string[];
  providerID: string | null;
}

export interface ControlPlaneNodeFact extends NodeFact {
  /** Carries node-role.kubernetes.io/control-plane (or the legacy master) NoSchedule/NoExecute taint. */
  tainted: boolean;
  /** The address the apiserver on this node advertises, and where ferry read it. */
  advertiseAddress: { address: string; source: SourceRef } | null;
  apiserverPort: number | null;
  /** True when ferry saw a kube-apiserver static pod for this node. */
  hasApiserver: boolean;
  etcdMember: { id: string; name: string; isLearner: boolean } | null;
  /** False when the node is known only from a static pod (no Node object in the snapshot). */
  hasNodeObject: boolean;
}

export interface VersionCount {
  version: string;
  nodes: number;
}

export type CniPlugin =
  | 'cilium'
  | 'calico'
  | 'canal'
  | 'flannel'
  | 'weave'
  | 'kube-router'
  | 'antrea'
  | 'none-detected';

export interface UpdateStrategy {
  type: string;
  maxUnavailable: string | number | null;
  maxSurge: string | number | null;
}

export interface DaemonSetFact {
  namespace: string;
  name: string;
  image: string | null;
  selector: Record<string, string>;
  updateStrategy: UpdateStrategy;
}

export interface CiliumIpam {
  mode: string;
  clusterPoolCIDRs: string[];
  clusterPoolMaskSize: number | null;
}

export interface NodeCidrMaskSize {
  ipv4?: number;
  ipv6?: number;
}

// ---------------------------------------------------------------------------------------------
// The facts, by family

export interface ClusterFacts {
  name: Fact<string>;
  kubernetesVersion: Fact<string>;
  controlPlaneEndpoint: Fact<Endpoint>;
}

export interface NetworkFacts {
  podSubnets: Fact<string[]>;
  serviceSubnets: Fact<string[]>;
  dnsDomain: Fact<string>;
  kubeDnsIPs: Fact<string[]>;
  kubernetesServiceIP: Fact<string>;
  nodeCidrMaskSize: Fact<NodeCidrMaskSize>;
}

export interface ApiserverFacts {
  instances: Fact<ApiserverInstance[]>;
  serviceAccountIssuers: Fact<string[]>;
  apiAudiences: Fact<string[]>;
  serviceAccountJwksUri: Fact<string | null>;
  serviceAccountKeyFiles: Fact<string[]>;
  extraFlags: Fact<Flag[]>;
  oidc: Fact<Flag[]>;
  anonymousAuth: Fact<boolean>;
  authorization: Fact<Authorization>;
  admission: Fact<Admission>;
  podSecurityDefaults: Fact<PodSecurityDefaults>;
  certSANs: Fact<string[]>;
}

export interface ControllerManagerFacts {
  instances: Fact<ComponentInstance[]>;
  extraFlags: Fact<Flag[]>;
}

export interface SchedulerFacts {
  instances: Fact<ComponentInstance[]>;
  extraFlags: Fact<Flag[]>;
}

export interface EncryptionFacts {
  providerConfigFile: Fact<string | null>;
  /** null: the apiservers run without encryption at rest. */
  providers: Fact<EncryptionRule[] | null>;
  /** null: no encryption config (Secrets are stored in plaintext). */
  secretsWriteKey: Fact<WriteKey | null>;
}

export interface EtcdFacts {
  topology: Fact<EtcdTopology>;
  instances: Fact<EtcdInstance[]>;
  /** The lowest version any source reports for a running member. */
  version: Fact<string>;
  clusterVersion: Fact<string>;
  members: Fact<EtcdMemberFact[]>;
  leader: Fact<string | null>;
  alarms: Fact<{ memberId: string; alarm: string }[]>;
  extraArgs: Fact<Flag[]>;
}

export interface NodesFacts {
  controlPlane: Fact<ControlPlaneNodeFact[]>;
  workers: Fact<NodeFact[]>;
  kubeletVersions: Fact<VersionCount[]>;
}

export interface KubeletFacts {
  clusterDNS: Fact<string[] | null>;
  clusterDomain: Fact<string | null>;
  cgroupDriver: Fact<string | null>;
  maxPods: Fact<number | null>;
  rotateCertificates: Fact<boolean | null>;
  serverTLSBootstrap: Fact<boolean | null>;
  anonymousAuth: Fact<boolean | null>;
  authorizationMode: Fact<string | null>;
  featureGates: Fact<Record<string, boolean> | null>;
  systemReserved: Fact<Record<string, string> | null>;
  kubeReserved: Fact<Record<string, string> | null>;
  evictionHard: Fact<Record<string, string> | null>;
  allowedUnsafeSysctls: Fact<string[] | null>;
  staticPodPath: Fact<string | null>;
  /** Graceful node shutdown; kubeadm writes "0s" (off), Talos runs 30s / 10s unless carried. */
  shutdownGracePeriod: Fact<string | null>;
  shutdownGracePeriodCriticalPods: Fact<string | null>;
  /** nodeRegistration.kubeletExtraArgs of the kubeadm Init/JoinConfigurations seen. */
  extraArgs: Fact<Flag[]>;
}

export interface CniFacts {
  plugin: Fact<CniPlugin>;
  /** The Cilium agent DaemonSet; null when Cilium is not the CNI. */
  ciliumAgent: Fact<DaemonSetFact | null>;
  ciliumVersion: Fact<string | null>;
  ciliumKubeProxyReplacement: Fact<string | null>;
  ciliumK8sServiceHost: Fact<string | null>;
  ciliumK8sServicePort: Fact<string | null>;
  ciliumIpam: Fact<CiliumIpam | null>;
}

export interface KubeProxyFacts {
  /** The kube-proxy DaemonSet; null when there is none (e.g. Cilium kube-proxy replacement). */
  daemonSet: Fact<DaemonSetFact | null>;
  /** Proxy mode from KubeProxyConfiguration; null when kube-proxy is not deployed. */
  mode: Fact<string | null>;
}

export interface Facts {
  formatVersion: number;
  /** Which snapshot the facts came from. */
  snapshot: { createdAt: string; source: string; parts: string[] };
  target: Target;
  cluster: ClusterFacts;
  network: NetworkFacts;
  apiserver: ApiserverFacts;
  controllerManager: ControllerManagerFacts;
  scheduler: SchedulerFacts;
  encryption: EncryptionFacts;
  etcd: EtcdFacts;
  nodes: NodesFacts;
  kubelet: KubeletFacts;
  cni: CniFacts;
  kubeProxy: KubeProxyFacts;
}

/** The fact families in display order. */
export const FACT_FAMILIES = [
  'cluster',
  'network',
  'apiserver',
  'controllerManager',
  'scheduler',
  'encryption',
  'etcd',
  'nodes',
  'kubelet',
  'cni',
  'kubeProxy',
] as const;

/** Every fact in display order (families in FACT_FAMILIES order, facts in declaration order). */
export function listFacts(facts: Facts): Fact<unknown>[] {
  const out: Fact<unknown>[] = [];
  for (const family of FACT_FAMILIES) {
    for (const f of Object.values(facts[family]) as Fact<unknown>[]) out.push(f);
  }
  return out;
}
