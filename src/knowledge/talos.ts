/**
 * What ferry knows about Talos Linux releases, as data. Every value cites its section of
 * docs/knowledge/talos.md ("talos.md §8" etc.), which in turn cites the Talos source it was read from.
 * Code reads these tables; it never hard-codes a Talos default elsewhere.
 */
import { compareVersions, parseVersion } from '../util/semver.js';

export type TalosConfigFormat = 'v1alpha1' | 'multidoc';

export interface TalosRelease {
  /** The release the operator targets, e.g. "v1.13.9" (or an untabled patch such as "v1.10.6"). */
  version: string;
  /** "1.13" */
  minor: string;
  /** False for pre-releases (release candidates): never the default. */
  stable: boolean;
  /**
   * null when ferry tables this exact release; otherwise the tabled patch of the same line whose
   * per-patch facts (etcdVersion, kubernetesDefault) it assumes. See assumedFactsNote.
   */
  assumedFrom: string | null;
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

/** What differs between patches of one line: the defaults a patch ships. talos.md §8 (per-patch columns). */
interface TalosPatch {
  version: string;
  etcdVersion: string;
  kubernetesDefault: string;
}

/**
 * What a whole minor line shares (talos.md §8: one supported-Kubernetes window and one minimum
 * upgrade source per row; `pkg/machinery/compatibility/talosXY` is per minor), plus the patches
 * ferry has read the constants of, oldest first.
 */
interface TalosLine {
  minor: string;
  etcdImage: string;
  kubernetesMin: string;
  kubernetesMaxMinor: string;
  minUpgradeFrom: string;
  patches: readonly TalosPatch[];
}

const GCR_ETCD = 'gcr.io/etcd-development/etcd'; // talos.md §8: etcd image up to v1.11.x
const K8S_ETCD = 'registry.k8s.io/etcd'; // talos.md §8: etcd image from v1.12.0

const patch = (version: string, etcdVersion: string, kubernetesDefault: string): TalosPatch => ({
  version,
  etcdVersion,
  kubernetesDefault,
});

/** The lines ferry supports as migration targets, oldest first. talos.md §8 (table), §0 (latest patches). */
const TALOS_LINES: readonly TalosLine[] = [
  // talos.md §8 row "v1.10.0 / v1.10.9"; v1.10.9 is the line's latest patch (§0)
  line('1.10', GCR_ETCD, '1.28.0', '1.33', '1.8.0', [
    patch('v1.10.0', '3.5.21', '1.33.0'),
    patch('v1.10.9', '3.5.26', '1.33.6'),
  ]),
  // talos.md §8 row "v1.11.0 / v1.11.6"
  line('1.11', GCR_ETCD, '1.29.0', '1.34', '1.9.0', [
    patch('v1.11.0', '3.6.4', '1.34.0'),
    patch('v1.11.6', '3.6.5', '1.34.1'),
  ]),
  // talos.md §8 row "v1.12.0 / v1.12.11"
  line('1.12', K8S_ETCD, '1.30.0', '1.35', '1.10.0', [
    patch('v1.12.0', '3.6.7', '1.35.0'),
    patch('v1.12.11', '3.6.11', '1.35.4'),
  ]),
  // talos.md §8 row "v1.13.0 / v1.13.9"; v1.13.9 is the newest stable (§0)
  line('1.13', K8S_ETCD, '1.31.0', '1.36', '1.11.0', [
    patch('v1.13.0', '3.6.9', '1.36.0'),
    patch('v1.13.9', '3.6.12', '1.36.3'),
  ]),
  // talos.md §0 "v1.14.0 final not yet tagged", §8 row "v1.14.0-rc.1"
  line('1.14', K8S_ETCD, '1.32.0', '1.37', '1.12.0', [patch('v1.14.0-rc.1', '3.7.1', '1.37.0-rc.0')]),
];

function line(
  minor: string,
  etcdImage: string,
  kubernetesMin: string,
  kubernetesMaxMinor: string,
  minUpgradeFrom: string,
  patches: TalosPatch[],
): TalosLine {
  return { minor, etcdImage, kubernetesMin, kubernetesMaxMinor, minUpgradeFrom, patches };
}

function release(l: TalosLine, version: string, facts: TalosPatch): TalosRelease {
  const minorNumber = Number(l.minor.split('.')[1]);
  return {
    version,
    minor: l.minor,
    stable: !version.includes('-'),
    assumedFrom: version === facts.version ? null : facts.version,
    etcdVersion: facts.etcdVersion,
    etcdImage: l.etcdImage,
    kubernetesDefault: facts.kubernetesDefault,
    kubernetesMin: l.kubernetesMin,
    kubernetesMaxMinor: l.kubernetesMaxMinor,
    minUpgradeFrom: l.minUpgradeFrom,
    // talos.md §3.2: MultidocKubernetesConfigSupported = version > 1.13
    configFormat: minorNumber > 13 ? 'multidoc' : 'v1alpha1',
    // talos.md §4.1: "v1.13+ string | []string"; "≤v1.12 string only"
    extraArgsLists: minorNumber >= 13,
  };
}

/** The releases ferry tables (each with its own facts), oldest first. */
export const TALOS_RELEASES: readonly TalosRelease[] = TALOS_LINES.flatMap((l) =>
  l.patches.map((p) => release(l, p.version, p)),
);

/** The Talos minors ferry supports. talos.md §8. */
export const SUPPORTED_TALOS_MINORS: readonly string[] = TALOS_LINES.map((l) => l.minor);

/** Newest stable release ferry knows: the default target. talos.md §0 "v1.13.9 … newest stable". */
export const DEFAULT_TALOS_VERSION = 'v1.13.9';

export type TalosLookup =
  | { kind: 'release'; release: TalosRelease }
  | {
      kind: 'refused';
      reason: 'malformed' | 'unknown-minor' | 'untabled-prerelease';
      /** What is wrong with the text, for an error message. */
      problem: string;
    };

// vX.Y or vX.Y.Z[-pre]; the "v" is optional. No leading zeros, no build metadata, no wildcards.
const TALOS_VERSION_RE =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:-([0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*))?)?$/;

/**
 * Resolves an operator's --talos-version against the table:
 * - "v1.13" / "1.13": the newest tabled release of that line (stable preferred);
 * - "v1.10.9": a tabled patch, with its own facts;
 * - "v1.10.6": any other patch of a known line is accepted with the per-patch facts of the nearest
 *   tabled patch *below* it (v1.10.0). Within a line those facts only move forward (talos.md §8: etcd
 *   and default Kubernetes of .0 ≤ latest), so the patch below is a floor the requested patch ships at
 *   least; the line's window, upgrade source, image and config format are exact. A patch below every
 *   tabled one (none today: each line tables its first release) takes the oldest tabled patch;
 * - a pre-release only when tabled ("v1.14.0-rc.1"): candidates change defaults between each other
 *   (talos.md §8: v1.14.0-rc.1 ships Kubernetes 1.37.0-rc.0), so no tabled patch stands for another.
 * Anything else — an unknown line, "1.10.x", build metadata — is refused.
 */
export function lookupTalosRelease(text: string): TalosLookup {
  const t = text.trim();
  const m = TALOS_VERSION_RE.exec(t);
  if (!m) {
    return {
      kind: 'refused',
      reason: 'malformed',
      problem: 'is not a Talos version (vX.Y for a line, vX.Y.Z for a release)',
    };
  }
  const minor = `${m[1]}.${m[2]}`;
  const l = TALOS_LINES.find((x) => x.minor === minor);
  if (!l)
    return {
      kind: 'refused',
      reason: 'unknown-minor',
      problem: `is of the v${minor} line, which ferry does not know`,
    };
  if (m[3] === undefined) {
    const chosen = l.patches.filter((p) => !p.version.includes('-')).at(-1) ?? l.patches.at(-1)!;
    return { kind: 'release', release: release(l, chosen.version, chosen) };
  }
  const version = `v${minor}.${m[3]}${m[4] !== undefined ? `-${m[4]}` : ''}`;
  const tabled = l.patches.find((p) => p.version === version);
  if (tabled) return { kind: 'release', release: release(l, version, tabled) };
  if (m[4] !== undefined) {
    const pre = l.patches.filter((p) => p.version.includes('-')).map((p) => p.version);
    return {
      kind: 'refused',
      reason: 'untabled-prerelease',
      problem: `is a pre-release ferry has no facts of (${pre.length ? `of v${minor} ferry tables only ${pre.join(', ')}` : `ferry tables no pre-release of v${minor}`})`,
    };
  }
  const wanted = parseVersion(version)!;
  const below = l.patches.filter((p) => compareVersions(parseVersion(p.version)!, wanted) < 0);
  const basis = below.at(-1) ?? l.patches[0]!;
  return { kind: 'release', release: release(l, version, basis) };
}

/** The release for a --talos-version, or undefined when lookupTalosRelease refuses it. */
export function findTalosRelease(text: string): TalosRelease | undefined {
  const r = lookupTalosRelease(text);
  return r.kind === 'release' ? r.release : undefined;
}

/**
 * "Talos v1.10.6 is not tabled; assumed the facts of v1.10.0 (etcd 3.5.21, …)", for every output
 * that names the target; undefined when the release is tabled.
 */
export function assumedFactsNote(r: TalosRelease): string | undefined {
  if (r.assumedFrom === null) return undefined;
  return (
    `Talos ${r.version} is not tabled; assumed the facts of ${r.assumedFrom} ` +
    `(etcd ${r.etcdVersion}, default Kubernetes ${r.kubernetesDefault}; the v${r.minor} line supports ` +
    `Kubernetes ${r.kubernetesMin} – ${r.kubernetesMaxMinor}.x)`
  );
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
