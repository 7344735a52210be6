/**
 * The values a Talos machine config needs, version-neutral, each with its sources. Derived once from
 * Facts (values.ts); the legacy (≤ v1.13) and multi-document (v1.14) renderers only lay them out.
 */
import type { PodSecurityLevel } from '../../facts/model.js';
import type { Sourced } from '../../facts/sourced.js';
import type { NodeShape, WorkerGroup } from '../../facts/worker-groups.js';
import type { TalosRelease } from '../../knowledge/talos.js';
import type { ExtraArg } from './args.js';

export interface PodSecurityLevels {
  enforce: PodSecurityLevel;
  audit: PodSecurityLevel;
  warn: PodSecurityLevel;
}

/** One JWT authenticator (AuthenticationConfiguration `jwt[]`), converted from --oidc-* flags. */
export interface JwtAuthenticator {
  issuer: { url: string; audiences: string[] };
  claimMappings: { username: { claim: string; prefix: string }; groups?: { claim: string; prefix: string } };
  claimValidationRules?: { claim: string; requiredValue: string }[];
}

export interface ControlPlaneReplacement {
  /** The kubeadm node this Talos node replaces. */
  replaces: string;
  hostname: Sourced<string>;
  /** Labels/taints only this node had (the role-wide ones are in the role patch). */
  own: NodeShape;
}

export interface TalosValues {
  release: TalosRelease;
  kubernetesVersion: Sourced<string>;
  clusterName: Sourced<string>;
  /** https://host:port — also Talos's service-account issuer. */
  endpoint: Sourced<string>;
  endpointHost: string;
  apiPort: Sourced<number> | undefined;
  podSubnets: Sourced<string[]>;
  serviceSubnets: Sourced<string[]>;
  dnsDomain: Sourced<string>;
  nodeCidrMaskSize: Sourced<{ ipv4?: number; ipv6?: number }> | undefined;
  images: {
    apiserver: Sourced<string>;
    controllerManager: Sourced<string>;
    scheduler: Sourced<string>;
    kubelet: Sourced<string>;
    proxy: Sourced<string>;
  };
  apiserver: {
    args: ExtraArg[];
    certSANs: Sourced<string[]>;
    issuer: Sourced<string>;
    /** Issuers the kubeadm apiservers use, accepted by Talos during the mixed period. */
    acceptedIssuers: Sourced<string[]>;
    audiences: Sourced<string[]>;
    anonymous: Sourced<boolean>;
    /** --oidc-* flags as they are (≤ v1.13, and v1.14 without KubeAuthenticationConfig). */
    oidcArgs: ExtraArg[];
    /** The same settings as a JWT authenticator (v1.14 with KubeAuthenticationConfig). */
    jwt: Sourced<JwtAuthenticator> | null;
    podSecurity: Sourced<PodSecurityLevels>;
  };
  controllerManager: { args: ExtraArg[] };
  scheduler: { args: ExtraArg[] };
  etcd: { image: Sourced<string>; args: ExtraArg[] };
  kubeProxyDisabled: Sourced<boolean>;
  coreDnsDisabled: Sourced<boolean>;
  cniNone: Sourced<true>;
  kubePrism: Sourced<{ enabled: boolean; port: number }>;
  kubelet: {
    /** KubeletConfiguration keys carried (machine.kubelet.extraConfig / KubeletConfig.config). */
    config: Record<string, Sourced<unknown>>;
    args: ExtraArg[];
    clusterDNS: Sourced<string[]>;
  };
  controlPlane: {
    allowScheduling: Sourced<boolean>;
    /** True when kubeadm control planes carry node.kubernetes.io/exclude-from-external-load-balancers. */
    excludeFromLoadBalancers: Sourced<boolean>;
    common: NodeShape;
    replacements: ControlPlaneReplacement[];
  };
  /** `nodes`: every kubeadm worker, each replaced by one Talos worker (in the facts' order). */
  workers: { common: NodeShape; groups: WorkerGroup[]; nodes: string[] };
  hostnameRule: Sourced<string>;
}

export type Role = 'controlplane' | 'worker';
