/**
 * The Cluster API providers ferry installs on a management cluster, as data: where each one's
 * releases live, the label its controller pods carry, the flag that turns its leader election on,
 * and the Cluster API contract each of its release series declares.
 *
 * Sources (read 2026-12-04): each repository's `metadata.yaml` (release series → contract;
 * CABPT and CACPPT keep it in `config/metadata/metadata.yaml`), `config/manager/manager.yaml`
 * (the manager container, its leader-election flag; core: `core/config/manager/manager.yaml`
 * at v1.14.0) and `config/default/kustomization.yaml` (the `cluster.x-k8s.io/provider` label
 * kustomize puts on every object and pod template). Core series v1.11–v1.15 declare v1beta2;
 * clusterctl treats v1beta1 providers as compatible with a v1beta2 core until v1beta1 is dropped
 * (`internal/contract/version.go` GetCompatibleVersions), planned for v1.16 (capi.md H10).
 */
import { parseVersion } from '../util/semver.js';

export type ProviderType =
  | 'CoreProvider'
  | 'BootstrapProvider'
  | 'ControlPlaneProvider'
  | 'InfrastructureProvider'
  | 'IPAMProvider';

export type Contract = 'v1beta1' | 'v1beta2';

export interface ProviderFacts {
  type: ProviderType;
  /** clusterctl's name of the provider (`talos`, `proxmox`, `cluster-api`). */
  name: string;
  /** GitHub owner/name: its releases, their notes and components. */
  repo: string;
  /** The components file each release carries. */
  componentsFile: string;
  /** The value of `cluster.x-k8s.io/provider` on its controller's pods. */
  podLabel: string;
  /** The manager's leader-election flag: the Talos providers kept kubebuilder's older name. */
  leaderElectFlag: '--leader-elect' | '--enable-leader-election';
  /** "major.minor" → the contract that release series declares. */
  contracts: Readonly<Record<string, Contract>>;
}

const series = (major: number, minors: number[], contract: Contract) =>
  Object.fromEntries(minors.map((m) => [`${major}.${m}`, contract]));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export const PROVIDERS: readonly ProviderFacts[] = [
  {
    type: 'CoreProvider',
    name: 'cluster-api',
    repo: 'kubernetes-sigs/cluster-api',
    componentsFile: 'core-components.yaml',
    podLabel: 'cluster-api',
    leaderElectFlag: '--leader-elect',
    contracts: { ...series(1, range(0, 10), 'v1beta1'), ...series(1, range(11, 15), 'v1beta2') },
  },
  {
    type: 'BootstrapProvider',
    name: 'talos',
    repo: 'siderolabs/cluster-api-bootstrap-provider-talos',
    componentsFile: 'bootstrap-components.yaml',
    podLabel: 'bootstrap-talos',
    leaderElectFlag: '--enable-leader-election',
    contracts: { ...series(0, [5, 6], 'v1beta1'), ...series(0, [7], 'v1beta2') },
  },
  {
    type: 'ControlPlaneProvider',
    name: 'talos',
    repo: 'siderolabs/cluster-api-control-plane-provider-talos',
    componentsFile: 'control-plane-components.yaml',
    podLabel: 'control-plane-talos',
    leaderElectFlag: '--enable-leader-election',
    contracts: series(0, [4, 5], 'v1beta1'),
  },
  {
    type: 'InfrastructureProvider',
    name: 'proxmox',
    repo: 'ionos-cloud/cluster-api-provider-proxmox',
    componentsFile: 'infrastructure-components.yaml',
    podLabel: 'infrastructure-proxmox',
    leaderElectFlag: '--leader-elect',
    contracts: { ...series(0, range(1, 7), 'v1beta1'), ...series(0, [8, 9], 'v1beta2') },
  },
  {
    type: 'InfrastructureProvider',
    name: 'vsphere',
    repo: 'kubernetes-sigs/cluster-api-provider-vsphere',
    componentsFile: 'infrastructure-components.yaml',
    podLabel: 'infrastructure-vsphere',
    leaderElectFlag: '--leader-elect',
    contracts: { ...series(1, range(0, 15), 'v1beta1'), ...series(1, [16, 17], 'v1beta2') },
  },
  {
    type: 'IPAMProvider',
    name: 'in-cluster',
    repo: 'kubernetes-sigs/cluster-api-ipam-provider-in-cluster',
    componentsFile: 'ipam-components.yaml',
    podLabel: 'ipam-in-cluster',
    leaderElectFlag: '--leader-elect',
    contracts: { ...series(0, [1], 'v1beta1'), ...series(1, [0], 'v1beta1'), ...series(1, [1], 'v1beta2') },
  },
];

export function providerFacts(type: string, name: string): ProviderFacts | undefined {
  return PROVIDERS.find((p) => p.type === type && p.name === name);
}

/** The contract a release declares, by its series; undefined for a series ferry has no record of. */
export function contractOf(p: ProviderFacts, version: string): Contract | undefined {
  const v = parseVersion(version);
  return v ? p.contracts[`${v.major}.${v.minor}`] : undefined;
}

/** The contracts a core of `contract` accepts from the other providers (GetCompatibleVersions). */
export function compatibleContracts(core: Contract): readonly Contract[] {
  switch (core) {
    case 'v1beta2':
      return ['v1beta2', 'v1beta1'];
    case 'v1beta1':
      return ['v1beta1'];
  }
}

/** The release page of one version: its notes. */
export const releaseNotesUrl = (p: ProviderFacts, version: string) =>
  `https://github.com/${p.repo}/releases/tag/${version}`;

/** The components URL of one release (never `latest`). */
export const componentsUrl = (p: ProviderFacts, version: string) =>
  `https://github.com/${p.repo}/releases/${version}/${p.componentsFile}`;

/**
 * Provider lines ferry knows to be unsafe on a management cluster (capi.md H1, H8): before
 * v0.5.13 CACPPT deadlocks after a graceful etcd leave (the member count never matches the
 * Machines again; fixed by the etcd-leaving annotation) and its etcd audit removes members whose
 * name is the infrastructure machine's.
 */
export interface UnsafeLine {
  type: ProviderType;
  name: string;
  /** Releases older than this are unsafe. */
  below: string;
  why: string;
  link: string;
}

export const UNSAFE_LINES: readonly UnsafeLine[] = [
  {
    type: 'ControlPlaneProvider',
    name: 'talos',
    below: 'v0.5.13',
    why: 'a control plane scaled down or rolled deadlocks once a member has left etcd (fixed by the etcd-leaving annotation), and its etcd audit removes members named after the infrastructure machine',
    link: 'https://github.com/siderolabs/cluster-api-control-plane-provider-talos/issues/237',
  },
];

/** Replicas of each Cluster API controller on a management cluster: a surge pod still fits on 3 control planes. */
export const HA_CONTROLLER_REPLICAS = 2;
