/**
 * What ferry knows about Talos Linux releases, as data. Every value cites its section of
 * docs/knowledge/talos.md ("talos.md §8" etc.), which in turn cites the Talos source it was read from.
 * Code reads these tables; it never hard-codes a Talos default elsewhere.
 */

export type TalosConfigFormat = 'v1alpha1' | 'multidoc';

export interface TalosRelease {
  /** Exact release ferry has knowledge of, e.g. "v1.13.9". */
  version: string;
  /** "1.13" */
  minor: string;
  /** False for release candidates: never the default. */
  stable: boolean;
  /** DefaultEtcdVersion, without "v" ("3.6.12"). */
  etcdVersion: string;
  /** Image repository of the default etcd image. */
  etcdImage: string;
  /** DefaultKubernetesVersion, without "v". */
  kubernetesDefault: string;
  /** Oldest supported Kubernetes version ("1.31.0"). */
  kubernetesMin: string;
  /** Newest supported Kubernetes minor ("1.36": any 1.36.x). */
  kubernetesMaxMinor: string;
  /** Oldest Talos release that can upgrade to this one. */
  minUpgradeFrom: string;
  /** Legacy v1alpha1 machine config (≤ v1.13) or multi-document Kubernetes config (v1.14+). */
  configFormat: TalosConfigFormat;
  /** extraArgs values may be lists (a repeated flag), not only strings. */
  extraArgsLists: boolean;
}

const GCR_ETCD = 'gcr.io/etcd-development/etcd'; // talos.md §8: etcd image up to v1.11.x
const K8S_ETCD = 'registry.k8s.io/etcd'; // talos.md §8: etcd image from v1.12.0

/** Releases ferry supports as migration targets, oldest first. talos.md §8 (table), §3.2, §4.1. */
export const TALOS_RELEASES: readonly TalosRelease[] = [
  // talos.md §8 row "v1.10.0 / v1.10.9" (first release of the line)
  rel('v1.10.0', true, '3.5.21', GCR_ETCD, '1.33.0', '1.28.0', '1.33', '1.8.0'),
  // talos.md §8 row "v1.10.0 / v1.10.9" (latest patch, §0)
  rel('v1.10.9', true, '3.5.26', GCR_ETCD, '1.33.6', '1.28.0', '1.33', '1.8.0'),
  // talos.md §8 row "v1.11.0 / v1.11.6"
  rel('v1.11.0', true, '3.6.4', GCR_ETCD, '1.34.0', '1.29.0', '1.34', '1.9.0'),
  // talos.md §8 row "v1.11.0 / v1.11.6"
  rel('v1.11.6', true, '3.6.5', GCR_ETCD, '1.34.1', '1.29.0', '1.34', '1.9.0'),
  // talos.md §8 row "v1.12.0 / v1.12.11"
  rel('v1.12.0', true, '3.6.7', K8S_ETCD, '1.35.0', '1.30.0', '1.35', '1.10.0'),
  // talos.md §8 row "v1.12.0 / v1.12.11"
  rel('v1.12.11', true, '3.6.11', K8S_ETCD, '1.35.4', '1.30.0', '1.35', '1.10.0'),
  // talos.md §8 row "v1.13.0 / v1.13.9"
  rel('v1.13.0', true, '3.6.9', K8S_ETCD, '1.36.0', '1.31.0', '1.36', '1.11.0'),
  // talos.md §0 "newest stable", §8 row "v1.13.0 / v1.13.9"
  rel('v1.13.9', true, '3.6.12', K8S_ETCD, '1.36.3', '1.31.0', '1.36', '1.11.0'),
  // talos.md §0 "v1.14.0 final not yet tagged", §8 row "v1.14.0-rc.1"
  rel('v1.14.0-rc.1', false, '3.7.1', K8S_ETCD, '1.37.0-rc.0', '1.32.0', '1.37', '1.12.0'),
];

function rel(
  version: string,
  stable: boolean,
  etcdVersion: string,
  etcdImage: string,
  kubernetesDefault: string,
  kubernetesMin: string,
  kubernetesMaxMinor: string,
  minUpgradeFrom: string,
): TalosRelease {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  const minor = m ? `${m[1]}.${m[2]}` : version;
  const minorNumber = m ? Number(m[2]) : 0;
  return {
    version,
    minor,
    stable,
    etcdVersion,
    etcdImage,
    kubernetesDefault,
    kubernetesMin,
    kubernetesMaxMinor,
    minUpgradeFrom,
    // talos.md §3.2: MultidocKubernetesConfigSupported = version > 1.13
    configFormat: minorNumber > 13 ? 'multidoc' : 'v1alpha1',
    // talos.md §4.1: "v1.13+ string | []string"; "≤v1.12 string only"
    extraArgsLists: minorNumber >= 13,
  };
}

/** The Talos minors ferry supports. talos.md §8. */
export const SUPPORTED_TALOS_MINORS: readonly string[] = ['1.10', '1.11', '1.12', '1.13', '1.14'];

/** Newest stable release ferry knows: the default target. talos.md §0 "v1.13.9 … newest stable". */
export const DEFAULT_TALOS_VERSION = 'v1.13.9';

/**
 * Finds the release for a user's --talos-version: a minor ("1.13", "v1.13") means the newest release
 * of that line ferry knows (stable preferred); an exact version must be one ferry has knowledge of.
 */
export function findTalosRelease(text: string): TalosRelease | undefined {
  const t = text.trim().replace(/^v?/, 'v');
  if (/^v\d+\.\d+$/.test(t)) {
    const minor = t.slice(1);
    const line = TALOS_RELEASES.filter((r) => r.minor === minor);
    return line.filter((r) => r.stable).at(-1) ?? line.at(-1);
  }
  return TALOS_RELEASES.find((r) => r.version === t);
}

/** KubePrism: port and listen address on every Talos node. talos.md §4.5. */
export const KUBEPRISM = { port: 7445, host: '127.0.0.1' } as const;

/** Network defaults Talos applies when not told otherwise. talos.md §5 (table). */
export const TALOS_NETWORK_DEFAULTS = {
  podSubnets: ['10.244.0.0/16'], // talos.md §5 "pod subnet"
  serviceSubnets: ['10.96.0.0/12'], // talos.md §5 "service subnet"
  dnsDomain: 'cluster.local', // talos.md §5 "DNS domain"
  /** Talos kubelets use this index of each service CIDR as clusterDNS. talos.md §5, §4.4. */
  clusterDnsIndex: 10,
  /** The kubernetes Service IP is this index of the service CIDR. talos.md §5. */
  kubernetesServiceIndex: 1,
  /** KCM node CIDR mask sizes. talos.md §4.2 (v1.14), blockers.md network.node-cidr-mask. */
  nodeCidrMaskSize: { ipv4: 24, ipv6: 64 },
  /** CNI when none is configured. talos.md §5 "CNI". */
  cni: 'flannel',
} as const;

/** Encryption at rest key names fixed by the ≤ v1.13 template. talos.md §4.6. */
export const TALOS_ENCRYPTION_KEY_NAMES = { secretbox: 'key2', aescbc: 'key1' } as const;

/** PodSecurity defaults in generated configs. talos.md §3.3. */
export const TALOS_POD_SECURITY = {
  enforce: 'baseline',
  audit: 'restricted',
  warn: 'restricted',
  exemptNamespaces: ['kube-system'],
} as const;

/** kube-apiserver extraArgs Talos rejects (`extra arg "X" is not allowed`). talos.md §4.1. */
const APISERVER_DENIED_BASE = [
  'etcd-servers',
  'client-ca-file',
  'requestheader-client-ca-file',
  'proxy-client-cert-file',
  'proxy-client-key-file',
  'encryption-provider-config',
  'etcd-cafile',
  'etcd-certfile',
  'etcd-keyfile',
  'kubelet-client-certificate',
  'kubelet-client-key',
  'service-account-key-file',
  'service-account-signing-key-file',
  'tls-cert-file',
  'tls-private-key-file',
  'authorization-config',
] as const;

/**
 * Denied apiserver extraArgs for a release. v1.14 adds tls-min-version, and authentication-config
 * while the generated KubeAuthenticationConfig document is present (talos.md §4.1 "v1.14", §3.3).
 */
export function apiserverDeniedArgs(release: TalosRelease): string[] {
  const extra = release.configFormat === 'multidoc' ? ['tls-min-version', 'authentication-config'] : [];
  return [...APISERVER_DENIED_BASE, ...extra];
}

/** extraArgs that Talos merges with its own value instead of replacing it. talos.md §4.1, §4.2. */
export const ADDITIVE_EXTRA_ARGS = {
  apiserver: ['enable-admission-plugins', 'feature-gates', 'authorization-mode', 'tls-cipher-suites'],
  controllerManager: ['service-cluster-ip-range', 'controllers'],
} as const;

/** kube-controller-manager extraArgs Talos rejects. talos.md §4.2. */
export const CONTROLLER_MANAGER_DENIED_ARGS = [
  'cluster-signing-cert-file',
  'cluster-signing-key-file',
  'authentication-kubeconfig',
  'authorization-kubeconfig',
  'root-ca-file',
  'service-account-private-key-file',
] as const;

/** kube-scheduler extraArgs Talos rejects. talos.md §4.3. */
export const SCHEDULER_DENIED_ARGS = [
  'kubeconfig',
  'authentication-kubeconfig',
  'authorization-kubeconfig',
  'config',
] as const;

/** kubelet extraArgs Talos rejects. talos.md §4.4. */
export const KUBELET_DENIED_ARGS = [
  'bootstrap-kubeconfig',
  'kubeconfig',
  'container-runtime',
  'container-runtime-endpoint',
  'config',
  'cert-dir',
] as const;

/** KubeletConfiguration keys Talos does not let extraConfig set. talos.md §4.4 "Protected extraConfig keys". */
export const KUBELET_PROTECTED_CONFIG_KEYS = [
  'apiVersion',
  'authentication',
  'authorization',
  'cgroupRoot',
  'kind',
  'kubeletCgroups',
  'port',
  'protectKernelDefaults',
  'resolvConf',
  'rotateCertificates',
  'systemCgroups',
  'staticPodPath',
  'seccompDefault',
] as const;

/** etcd flags Talos sets itself and denies in cluster.etcd.extraArgs. talos.md §4.8 "Flags". */
export const ETCD_DENIED_ARGS = [
  'name',
  'auto-tls',
  'peer-auto-tls',
  'data-dir',
  'listen-peer-urls',
  'listen-client-urls',
  'client-cert-auth',
  'cert-file',
  'key-file',
  'trusted-ca-file',
  'peer-client-cert-auth',
  'peer-cert-file',
  'peer-key-file',
  'peer-trusted-ca-file',
  'experimental-initial-corrupt-check',
  'experimental-watch-progress-notify-interval',
  'experimental-compact-hash-check-enabled',
] as const;

/** Values Talos's kube-apiserver uses that differ from kubeadm's. talos.md §4.1, §10.1, §10.4. */
export const TALOS_APISERVER = {
  /** ≤ v1.13 sets --anonymous-auth=false; v1.14 allows anonymous on health paths only. talos.md §4.1. */
  anonymousAuth: false,
  anonymousHealthPathsFrom: '1.14',
  /** Issuer and audiences are the cluster endpoint URL. talos.md §4.1, §10.1. */
  issuerIsEndpoint: true,
  audiencesAreEndpoint: true,
  /** --tls-min-version: VersionTLS12 ≤ v1.13, VersionTLS13 from v1.14. talos.md §4.1. */
  tls13From: '1.14',
} as const;
