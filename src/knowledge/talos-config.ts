/**
 * What ferry knows about Talos machine configuration as a *format*: which document carries what in
 * each release, the values `talosctl gen config` writes, and the switches ferry flips. Companion of
 * knowledge/talos.ts (releases, deny-lists); every value cites docs/knowledge/talos.md.
 */
import type { TalosRelease } from './talos.js';

/** The Talos kubelet image (Talos ships its own kubelet build). talos.md §3.3 goldens `machine.kubelet.image`. */
export const TALOS_KUBELET_IMAGE = 'ghcr.io/siderolabs/kubelet';

/** Multi-document HostnameConfig exists from v1.12 (not in the v1.10/v1.11 schemas; capi.md §3 "Talos ≥1.12"). */
export function hasHostnameConfig(release: TalosRelease): boolean {
  return minorNumber(release) >= 12;
}

/** `talosctl gen config` adds the endpoint host to apiServer.certSANs for contracts ≤ v1.11. talos.md §4.7. */
export function genConfigAddsEndpointSan(release: TalosRelease): boolean {
  return minorNumber(release) <= 11;
}

export function minorNumber(release: TalosRelease): number {
  const m = /^(\d+)\.(\d+)$/.exec(release.minor);
  return m ? Number(m[2]) : 0;
}

/** PodSecurity admission configuration as Talos generates it. talos.md §3.3, goldens `admissionControl`. */
export const POD_SECURITY_CONFIG_API_VERSION = 'pod-security.admission.config.k8s.io/v1alpha1';

/** Anonymous requests allowed by the v1.14 generated KubeAuthenticationConfig. talos.md §3.3 "v1.14". */
export const V114_ANONYMOUS_PATHS = ['/livez', '/readyz', '/healthz'] as const;

/** The default audit policy Talos generates. talos.md §3.3 "audit policy level: Metadata". */
export const TALOS_AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  rules: [{ level: 'Metadata' }],
} as const;

/** Label Talos puts on control planes (generated configs). talos.md §3.3. */
export const EXCLUDE_FROM_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
/** Taint Talos puts on control planes unless scheduling is allowed. talos.md §3.3, §4.4. */
export const CONTROL_PLANE_TAINT = 'node-role.kubernetes.io/control-plane';

/** Discovery service endpoint in generated v1.14 configs. talos.md §3.3 "v1.14". */
export const TALOS_DISCOVERY_ENDPOINT = 'https://discovery.talos.dev/';

/**
 * kubelet flags that only make sense per node (ferry cannot carry them in a role-wide patch) and
 * what replaces them on Talos. talos.md §4.4; blockers.md kubelet.config-carryover.
 */
export const KUBELET_PER_NODE_FLAGS: Record<string, string> = {
  'node-ip':
    'machine.kubelet.nodeIP.validSubnets (v1.14 KubeletConfig/KubeNodeConfig nodeIP) selects the address by subnet',
  'hostname-override': 'Talos sets --hostname-override to the node name itself',
  'node-labels':
    'labels are carried as machine.nodeLabels (v1.14 KubeNodeConfig.labels) from the Node objects',
  'register-with-taints':
    'taints are carried as machine.nodeTaints (v1.14 KubeNodeConfig.taints) from the Node objects',
  'pod-infra-container-image': 'Talos configures the sandbox image in its own containerd',
  'cgroup-driver': 'Talos configures the cgroup driver of its own containerd',
};

/**
 * Node labels that kubelet, cloud providers, CSI drivers or node-feature-discovery set on every node
 * by themselves: carrying them would pin one node's value on all replacements.
 */
export const SELF_SET_LABEL_PREFIXES = [
  'kubernetes.io/',
  'beta.kubernetes.io/',
  'node-role.kubernetes.io/',
  'node.kubernetes.io/',
  'topology.kubernetes.io/',
  'failure-domain.beta.kubernetes.io/',
  'feature.node.kubernetes.io/',
  'topology.',
] as const;

/**
 * The etcd image to pin during the mixed period: the exact version the cluster runs, from the
 * release's own repository when that release ships the same etcd minor (the tested pairing), else
 * from etcd's release registry, which carries every v3.x tag (talos.md §8: gcr.io up to v1.11.x,
 * registry.k8s.io from v1.12.0; §4.8 "override cluster.etcd.image").
 */
export function pinnedEtcdImage(release: TalosRelease, clusterEtcdVersion: string): string {
  const sameMinor = etcdMinor(release.etcdVersion) === etcdMinor(clusterEtcdVersion);
  const repo = sameMinor ? release.etcdImage : 'gcr.io/etcd-development/etcd';
  return `${repo}:v${clusterEtcdVersion.replace(/^v/, '')}`;
}

function etcdMinor(v: string): string {
  const m = /^v?(\d+)\.(\d+)/.exec(v);
  return m ? `${m[1]}.${m[2]}` : v;
}

/** Talos v1.14 runs etcd with 3.6-only flags ("compatible with etcd v3.6.x only"). talos.md §4.8 "v1.14". */
export function minEtcdMinorFor(release: TalosRelease): string | undefined {
  return minorNumber(release) >= 14 ? '3.6' : undefined;
}

/**
 * Cilium on Talos (Talos "Deploying Cilium" guide, blockers.md cni.cilium-values): Talos mounts
 * cgroup v2 and bpffs itself and forbids module loading by workloads, so the agent drops SYS_MODULE.
 */
export const CILIUM_ON_TALOS = {
  cgroup: { autoMount: { enabled: false }, hostRoot: '/sys/fs/cgroup' },
  capabilities: {
    ciliumAgent: [
      'CHOWN',
      'KILL',
      'NET_ADMIN',
      'NET_RAW',
      'IPC_LOCK',
      'SYS_ADMIN',
      'SYS_RESOURCE',
      'DAC_OVERRIDE',
      'FOWNER',
      'SETGID',
      'SETUID',
    ],
    cleanCiliumState: ['NET_ADMIN', 'SYS_ADMIN', 'SYS_RESOURCE'],
  },
} as const;
