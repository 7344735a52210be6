/**
 * Kubelet settings from the cluster's KubeletConfiguration (kubelet-config ConfigMap) and kubeadm
 * kubeletExtraArgs, as Talos `extraConfig` / `extraArgs`; protected keys and per-node flags are
 * reported, not carried (talos.md §4.4, blockers.md kubelet.config-carryover).
 */
import type { Fact, Facts } from '../../facts/model.js';
import { type Sourced, sourced } from '../../facts/sourced.js';
import { KUBELET_DENIED_ARGS, type TalosRelease } from '../../knowledge/talos.js';
import { KUBELET_PER_NODE_FLAGS } from '../../knowledge/talos-config.js';
import type { GenerateNote, MissingInput } from '../artifact.js';
import { carryArgs } from './args.js';
import type { TalosValues } from './model.js';

/** KubeletConfiguration keys ferry carries as they are (none is Talos-protected). */
const CARRIED: { key: string; fact: keyof Facts['kubelet'] }[] = [
  { key: 'maxPods', fact: 'maxPods' },
  { key: 'featureGates', fact: 'featureGates' },
  { key: 'systemReserved', fact: 'systemReserved' },
  { key: 'kubeReserved', fact: 'kubeReserved' },
  { key: 'evictionHard', fact: 'evictionHard' },
  { key: 'allowedUnsafeSysctls', fact: 'allowedUnsafeSysctls' },
  { key: 'serverTLSBootstrap', fact: 'serverTLSBootstrap' },
  { key: 'shutdownGracePeriod', fact: 'shutdownGracePeriod' },
  { key: 'shutdownGracePeriodCriticalPods', fact: 'shutdownGracePeriodCriticalPods' },
];

/** kubeadm's "0s" turns graceful shutdown off; carrying it would drop Talos's own 30s / 10s. */
const OFF_WHEN_ZERO = new Set(['shutdownGracePeriod', 'shutdownGracePeriodCriticalPods']);

export function deriveKubeletValues(
  facts: Facts,
  release: TalosRelease,
  kubeDnsIPs: Sourced<string[]> | undefined,
  dnsDomain: string | undefined,
  missing: MissingInput[],
  notes: GenerateNote[],
): TalosValues['kubelet'] | undefined {
  const k = facts.kubelet;
  if (k.maxPods.value === undefined) {
    missing.push({
      what: `${k.maxPods.title} and the rest of the cluster KubeletConfiguration`,
      why: "Talos kubelets must run with the cluster's kubelet settings, not Talos defaults",
      provideWith: k.maxPods.missing ?? 'ConfigMap kube-system/kubelet-config in resources/',
    });
    return undefined;
  }
  const config: Record<string, Sourced<unknown>> = {};
  for (const c of CARRIED) {
    const fact = k[c.fact] as Fact<unknown>;
    if (fact.value === undefined || fact.value === null) continue;
    if (OFF_WHEN_ZERO.has(c.key) && /^0+(\.0+)?(h|m|s|ms)?$/.test(String(fact.value))) continue;
    config[c.key] = sourced(fact.value, fact.provenance);
  }
  if (k.systemReserved.value === null) {
    notes.push({
      severity: 'info',
      message:
        "the cluster's kubelets reserve nothing for the system (systemReserved unset); Talos reserves its own default (512Mi CP / 384Mi worker memory), so allocatable on Talos nodes is smaller (kubelet.config-carryover)",
    });
  }
  reportNotCarried(k, dnsDomain, notes);

  const clusterDNS = k.clusterDNS.value ? sourced(k.clusterDNS.value, k.clusterDNS.provenance) : kubeDnsIPs;
  if (!clusterDNS) {
    missing.push({
      what: 'the cluster DNS address for kubelets',
      why: 'pods on Talos nodes must resolve through the same kube-dns Service',
      provideWith: k.clusterDNS.missing ?? 'the kube-dns Service in resources/',
    });
    return undefined;
  }

  let args: TalosValues['kubelet']['args'] = [];
  const flags = k.extraArgs.value;
  if (flags === undefined) {
    notes.push({
      severity: 'info',
      message: `per-node kubelet flags were not seen (${k.extraArgs.missing ?? 'no kubeadm node configuration'}); compare /var/lib/kubelet/kubeadm-flags.env on a node with the Talos kubelet settings`,
    });
  } else {
    const perNode = flags.filter((f) => f.name in KUBELET_PER_NODE_FLAGS);
    for (const f of perNode) {
      notes.push({
        severity: 'info',
        message: `kubelet --${f.name}=${f.value} (kubeadm kubeletExtraArgs) is per node and not carried: ${KUBELET_PER_NODE_FLAGS[f.name]}`,
        ...(k.extraArgs.provenance[0] ? { source: k.extraArgs.provenance[0] } : {}),
      });
    }
    const carried = carryArgs(
      flags.filter((f) => !(f.name in KUBELET_PER_NODE_FLAGS)),
      k.extraArgs.provenance,
      {
        component: 'kubelet',
        deniedRule: 'apiserver.extra-arg-denied',
        denied: KUBELET_DENIED_ARGS,
        lists: release.extraArgsLists,
      },
    );
    notes.push(...carried.notes);
    args = carried.args;
  }
  return { config, args, clusterDNS };
}

function reportNotCarried(k: Facts['kubelet'], dnsDomain: string | undefined, notes: GenerateNote[]): void {
  const note = (fact: Fact<unknown>, message: string) =>
    notes.push({ severity: 'info', message, ...(fact.provenance[0] ? { source: fact.provenance[0] } : {}) });
  if (k.cgroupDriver.value) {
    note(
      k.cgroupDriver,
      `kubelet cgroupDriver ${String(k.cgroupDriver.value)} is not carried: Talos configures the cgroup driver of its own containerd`,
    );
  }
  if (k.rotateCertificates.value === false) {
    note(
      k.rotateCertificates,
      'kubelet rotateCertificates: false is not carried: Talos always rotates kubelet client certificates (protected key)',
    );
  }
  if (k.anonymousAuth.value === true) {
    note(
      k.anonymousAuth,
      'kubelet anonymous authentication is on in the cluster; Talos kubelets refuse anonymous requests (protected key)',
    );
  }
  if (k.authorizationMode.value && k.authorizationMode.value !== 'Webhook') {
    note(
      k.authorizationMode,
      `kubelet authorization mode ${String(k.authorizationMode.value)} is not carried: Talos kubelets use Webhook (protected key)`,
    );
  }
  if (k.staticPodPath.value) {
    note(
      k.staticPodPath,
      `kubelet staticPodPath ${String(k.staticPodPath.value)} is not carried: Talos has no manifests directory; static pods other than the control plane need machine.pods / KubeStaticPodConfig (kubelet.static-pods)`,
    );
  }
  if (k.clusterDomain.value && dnsDomain && k.clusterDomain.value !== dnsDomain) {
    notes.push({
      severity: 'warning',
      message: `kubelet clusterDomain ${String(k.clusterDomain.value)} differs from the cluster DNS domain ${dnsDomain}; Talos kubelets use the DNS domain (network.dns-domain-mismatch)`,
      ...(k.clusterDomain.provenance[0] ? { source: k.clusterDomain.provenance[0] } : {}),
    });
  }
}
