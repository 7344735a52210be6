/**
 * Cluster networking (blockers.md "Network"). Pod/service CIDRs, DNS domain, the cluster DNS IP and
 * node CIDR sizes are "wrong but plausible" Talos defaults: a Talos node that keeps them joins and
 * then routes, resolves or verifies certificates differently from the kubeadm nodes. Every rule
 * reads the network facts (which already reconcile kubeadm-config, flags and live objects) and
 * compares them with what Talos would use unless told otherwise.
 */

import type { Fact, NodeFact } from '../../facts/model.js';
import { TALOS_NETWORK_DEFAULTS } from '../../knowledge/talos.js';
import { nthIp, parseCidr } from '../../util/ip.js';
import type { Evidence } from '../findings.js';
import { type Rule, type RuleFinding, type RuleResult, skip } from '../rule.js';
import { CILIUM_CONFIG, KUBELET_CONFIG } from '../rule-reads.js';
import { BOTH_PATCHES, KIT } from './kit-paths.js';
import { capped, factEvidence, isMultidoc, list, skipFact, talosField } from './shared.js';

const listOf = (v: string[]) => list(v);

// ---------------------------------------------------------------------------------------------
// CIDR helpers

/** True when CIDR `inner` lies entirely inside CIDR `outer`. */
export function cidrWithin(inner: string, outer: string): boolean {
  const a = parseCidr(inner);
  const b = parseCidr(outer);
  if (!a || !b || a.family !== b.family || a.prefix < b.prefix) return false;
  const bits = BigInt((b.family === 4 ? 32 : 128) - b.prefix);
  return a.address >> bits === b.address >> bits;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

type Ctx = Parameters<Rule['check']>[0];

function allNodes(ctx: Ctx): NodeFact[] {
  return [...(ctx.facts.nodes.controlPlane.value ?? []), ...(ctx.facts.nodes.workers.value ?? [])];
}

const DOCS = (id: string) => `docs/rules.md#${id}`;

// ---------------------------------------------------------------------------------------------
// Pod and service CIDRs

type CidrKey = 'podSubnets' | 'serviceSubnets';

/**
 * Shared shape of the two CIDR rules: skip without the fact; else its conflict, its difference from
 * the Talos default, and whatever the rule adds about `subnets` (written to `field` on Talos).
 */
function checkCidrs(
  ctx: Ctx,
  key: CidrKey,
  what: string,
  more: (subnets: string[], field: string) => RuleFinding[],
): RuleResult {
  const fact = ctx.facts.network[key];
  if (fact.value === undefined) return skipFact(fact);
  const field = talosField(ctx.target, `cluster.network.${key}`, `KubeNetworkConfig.${key}`);
  return [
    ...cidrFindings(fact, fact.value, what, TALOS_NETWORK_DEFAULTS[key], field),
    ...more(fact.value, field),
  ];
}

function cidrFindings(
  fact: Fact<string[]>,
  value: string[],
  what: string,
  talosDefault: readonly string[],
  field: string,
): RuleFinding[] {
  const out: RuleFinding[] = [];
  const subject = { kind: 'Fact', name: fact.key };
  if (fact.conflict) {
    const seen = fact.conflict.candidates.map((c) => list(c.value));
    out.push({
      message: `The cluster's sources disagree on the ${what}: ${[...new Set(seen)].join(' vs ')}. ferry believes ${list(value)} (${fact.conflict.reason}); a Talos node must get the range the running components actually use.`,
      evidence: factEvidence(fact, listOf),
      remediation: `Reconcile the sources before migrating (kubeadm-config networking, the control-plane flags, kube-proxy clusterCIDR), then confirm ${list(value)} is what ferry writes into ${field}.`,
      subject,
      field: 'conflict',
    });
  }
  if (!sameSet(value, talosDefault)) {
    out.push({
      message: `The cluster's ${what} ${list(value)} differ from the Talos default ${list(talosDefault)}; a Talos config generated with defaults would use the wrong range.`,
      evidence: factEvidence(fact, listOf, { expected: `${list(value)} in ${field}` }),
      remediation: `Set ${field} to ${list(value)} in the Talos config (ferry generate writes it from fact ${fact.key}); never keep the talosctl gen config default.`,
      subject,
      field: 'talos-default',
    });
  }
  return out;
}

export const podCidrMismatch: Rule = {
  id: 'network.pod-cidr-mismatch',
  family: 'network',
  severity: 'blocker',
  title: 'Pod CIDR differs from the Talos default or between sources',
  inputs: ['kubeadm', 'flags', 'api', 'target'],
  reads: ['nodes', CILIUM_CONFIG],
  // kubeadm-config, the KCM flags or the Node objects each suffice: the fact says what is missing.
  requires: [],
  description:
    'A Talos kube-controller-manager allocates node pod CIDRs from its own cluster-cidr (Talos default 10.244.0.0/16); once it holds the lease, new nodes get CIDRs the existing routes do not cover.',
  docs: DOCS('network.pod-cidr-mismatch'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    return checkCidrs(ctx, 'podSubnets', 'pod CIDRs', (subnets, field) => nodesOutside(ctx, subnets, field));
  },
};

/** Nodes whose spec.podCIDRs fall outside the pod subnets ferry believes. */
function nodesOutside(ctx: Ctx, subnets: string[], field: string): RuleFinding[] {
  const out: RuleFinding[] = [];
  const outside = allNodes(ctx).filter(
    (n) => n.podCIDRs.length > 0 && n.podCIDRs.some((c) => !subnets.some((s) => cidrWithin(c, s))),
  );
  if (outside.length > 0) {
    const { shown, more } = capped(outside);
    out.push({
      message: `${outside.length} node(s) hold pod CIDRs outside the pod subnets ${list(subnets)} (e.g. ${shown[0]!.name}: ${list(shown[0]!.podCIDRs)})${more ? `, ${more} not listed` : ''}: the cluster-cidr changed after they were allocated, or the sources ferry believes are stale.`,
      evidence: shown.map(
        (n): Evidence => ({
          kind: 'object',
          object: { apiVersion: 'v1', kind: 'Node', name: n.name },
          field: 'spec.podCIDRs',
          observed: list(n.podCIDRs),
          expected: `inside ${list(subnets)}`,
        }),
      ),
      remediation: `Find the range the CNI actually routes (kube-controller-manager --cluster-cidr, CNI IPAM) and make ${field} cover every node's spec.podCIDRs before the first Talos control plane starts.`,
      subject: { kind: 'Fact', name: ctx.facts.network.podSubnets.key },
      field: 'node-podCIDRs',
    });
  }
  return out;
}

export const serviceCidrMismatch: Rule = {
  id: 'network.service-cidr-mismatch',
  family: 'network',
  severity: 'blocker',
  title: 'Service CIDR differs from the Talos default or between sources',
  inputs: ['kubeadm', 'flags', 'api', 'target'],
  reads: ['services'],
  requires: [],
  description:
    'A wrong service CIDR gives Talos apiservers a wrong kubernetes Service IP SAN (intermittent TLS failures) and Talos kubelets a wrong cluster DNS IP.',
  docs: DOCS('network.service-cidr-mismatch'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    return checkCidrs(ctx, 'serviceSubnets', 'service CIDRs', (subnets) => serviceIpOffFirst(ctx, subnets));
  },
};

/** Talos puts the first address of the service CIDR into the apiserver SANs (talos.md §4.7). */
function serviceIpOffFirst(ctx: Ctx, subnets: string[]): RuleFinding[] {
  const out: RuleFinding[] = [];
  const svcIp = ctx.facts.network.kubernetesServiceIP;
  const first = subnets[0];
  const expected = first ? nthIp(first, TALOS_NETWORK_DEFAULTS.kubernetesServiceIndex) : undefined;
  if (svcIp.conflict && expected) {
    out.push({
      message: `Service default/kubernetes has ClusterIP ${svcIp.conflict.candidates.map((c) => c.value).join(' / ')}, not ${expected} (the first address of ${first}): Talos issues apiserver certificates for ${expected}, so in-cluster clients reaching a Talos apiserver through the Service fail TLS verification.`,
      evidence: factEvidence(svcIp, (v) => v, { expected }),
      remediation: `Add the Service's ClusterIP to the Talos apiserver SANs (${talosField(ctx.target, 'cluster.apiServer.certSANs', 'KubeAPIServerConfig.certExtraSANs')}) and find out why it is not the first service address (a service CIDR changed after creation?).`,
      subject: { kind: 'Fact', name: svcIp.key },
      field: 'first-address',
    });
  }
  return out;
}

export const dnsDomainMismatch: Rule = {
  id: 'network.dns-domain-mismatch',
  family: 'network',
  severity: 'blocker',
  title: 'DNS domain differs from the Talos default or between sources',
  inputs: ['kubeadm', 'target'],
  reads: [],
  requires: [],
  description:
    'Pods on Talos nodes get a resolv.conf search path for the Talos dnsDomain (default cluster.local) and the apiserver SAN kubernetes.default.svc.<domain> changes.',
  docs: DOCS('network.dns-domain-mismatch'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    const fact = ctx.facts.network.dnsDomain;
    if (fact.value === undefined) return skipFact(fact);
    const field = talosField(ctx.target, 'cluster.network.dnsDomain', 'KubeNetworkConfig.dnsDomain');
    const out: RuleFinding[] = [];
    const subject = { kind: 'Fact', name: fact.key };
    if (fact.conflict) {
      out.push({
        message: `kubeadm-config and the kubelet configuration disagree on the DNS domain (${[...new Set(fact.conflict.candidates.map((c) => c.value))].join(' vs ')}); ferry believes ${fact.value}.`,
        evidence: factEvidence(fact, (v) => v),
        remediation: `Confirm the domain pods resolve today (cat /etc/resolv.conf in a pod) and write that one into ${field}.`,
        subject,
        field: 'conflict',
      });
    }
    if (fact.value.toLowerCase() !== TALOS_NETWORK_DEFAULTS.dnsDomain) {
      out.push({
        message: `The cluster DNS domain is ${fact.value}, Talos defaults to ${TALOS_NETWORK_DEFAULTS.dnsDomain}: pods on Talos nodes would search the wrong domain and the apiserver certificate would name kubernetes.default.svc.${TALOS_NETWORK_DEFAULTS.dnsDomain}.`,
        evidence: factEvidence(fact, (v) => v, { expected: `${fact.value} in ${field}` }),
        remediation: `Set ${field}: ${fact.value} (ferry generate writes it from fact ${fact.key}).`,
        subject,
        field: 'talos-default',
      });
    }
    return out;
  },
};

export const kubeDnsIp: Rule = {
  id: 'network.kube-dns-ip',
  family: 'network',
  severity: 'blocker',
  title: 'Cluster DNS IP is not the 10th address of the service CIDR',
  inputs: ['api', 'kubeadm', 'target'],
  reads: ['services', KUBELET_CONFIG],
  requires: [],
  description:
    'Talos kubelets point clusterDNS at the 10th address of each service CIDR unless told otherwise; a cluster whose DNS listens elsewhere loses DNS on Talos nodes, and a kube-dns Service on another IP later breaks talosctl upgrade-k8s (siderolabs/talos#12618).',
  docs: DOCS('network.kube-dns-ip'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    const fact = ctx.facts.network.kubeDnsIPs;
    const subnets = ctx.facts.network.serviceSubnets;
    if (fact.value === undefined) return skipFact(fact);
    if (subnets.value === undefined) return skipFact(subnets);
    const expected = subnets.value
      .map((s) => nthIp(s, TALOS_NETWORK_DEFAULTS.clusterDnsIndex))
      .filter((x): x is string => x !== undefined);
    const ips = fact.value;
    const matches = ips[0] === expected[0] && ips.every((ip) => expected.includes(ip));
    if (matches && !fact.conflict) return [];
    const field = talosField(ctx.target, 'machine.kubelet.clusterDNS', 'KubeletConfig.clusterDNS');
    const upgrade = `talosctl upgrade-k8s fails with "clusterIPs… may not change" while Service kube-system/kube-dns is not on ${expected[0] ?? 'the 10th address'} (siderolabs/talos#12618): plan Kubernetes upgrades without it or move the Service in a maintenance window.`;
    const others = fact.conflict
      ? [...new Set(fact.conflict.candidates.map((c) => list(c.value)))].join(' vs ')
      : '';
    const evidence = factEvidence(fact, listOf, { expected: list(expected) });
    const subject = { kind: 'Fact', name: fact.key };
    if (matches) {
      // Kubelets already use the Talos address; only the Service (or a cache in front) differs.
      return [
        {
          message: `Kubelets resolve through ${list(ips)} as Talos kubelets would, but the kubelet clusterDNS and the kube-dns Service differ (${others}).`,
          evidence,
          remediation: `Keep ${field} at ${list(ips)}. ${upgrade}`,
          subject,
          field: 'kube-dns-service',
        },
      ];
    }
    const conflictNote = fact.conflict
      ? ` The kubelet clusterDNS and the kube-dns Service differ (${others}), e.g. a node-local DNS cache.`
      : '';
    return [
      {
        message: `Pods resolve through ${list(ips)}, but Talos kubelets would use ${list(expected)} (the 10th address of ${list(subnets.value)}).${conflictNote}`,
        evidence,
        remediation: `Set ${field}: [${ips.join(', ')}] on every Talos node (ferry generate writes it from fact ${fact.key}). If the kube-dns Service is elsewhere too: ${upgrade}`,
        subject,
        field: 'talos-default',
      },
    ];
  },
};

export const nodeCidrMask: Rule = {
  id: 'network.node-cidr-mask',
  family: 'network',
  severity: 'risk',
  title: 'Node pod-CIDR mask size differs from the Talos default',
  inputs: ['flags', 'api', 'target'],
  reads: ['nodes'],
  requires: [],
  description:
    'A Talos kube-controller-manager allocates /24 (IPv4) and /64 (IPv6) node CIDRs unless told otherwise; nodes joining under a Talos KCM would get differently sized ranges.',
  docs: DOCS('network.node-cidr-mask'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const fact = ctx.facts.network.nodeCidrMaskSize;
    if (fact.value === undefined) return skipFact(fact);
    const d = TALOS_NETWORK_DEFAULTS.nodeCidrMaskSize;
    const show = (v: { ipv4?: number; ipv6?: number }) =>
      [v.ipv4 !== undefined ? `IPv4 /${v.ipv4}` : '', v.ipv6 !== undefined ? `IPv6 /${v.ipv6}` : '']
        .filter(Boolean)
        .join(', ') || '(none)';
    const v = fact.value;
    const differs =
      (v.ipv4 !== undefined && v.ipv4 !== d.ipv4) || (v.ipv6 !== undefined && v.ipv6 !== d.ipv6);
    if (!differs && !fact.conflict) return [];
    const fix = isMultidoc(ctx.target)
      ? `KubeNetworkConfig.nodeCIDRMaskSizeIPv4/IPv6`
      : 'cluster.controllerManager.extraArgs node-cidr-mask-size-ipv4 / node-cidr-mask-size-ipv6';
    const conflict = fact.conflict
      ? ` Nodes were allocated with different sizes (${fact.conflict.candidates.map((c) => show(c.value)).join(' vs ')}); ferry believes the kube-controller-manager.`
      : '';
    return [
      {
        message: `Node pod CIDRs are ${show(v)}; a Talos kube-controller-manager uses IPv4 /${d.ipv4}, IPv6 /${d.ipv6} unless told.${conflict}`,
        evidence: factEvidence(fact, show, { expected: show(v) }),
        remediation: `Carry the mask size into ${fix} (ferry generate writes it from fact ${fact.key}).`,
        subject: { kind: 'Fact', name: fact.key },
        field: 'talos-default',
      },
    ];
  },
};

export const portReachability: Rule = {
  id: 'network.port-reachability',
  family: 'network',
  severity: 'risk',
  title: 'Ports between kubeadm and Talos nodes are not verified',
  inputs: ['node'],
  reads: ['nodes'],
  // Needs probes from the Talos nodes' network position; no snapshot part holds them.
  requires: [],
  description:
    'During coexistence etcd peers and apiservers talk in both directions (6443, 2379, 2380) and ferry reaches the Talos API on 50000; Talos advertises its first routed address for etcd.',
  docs: DOCS('network.port-reachability'),
  check(ctx) {
    const cps = ctx.facts.nodes.controlPlane.value ?? [];
    const addrs = cps
      .map((n) => n.advertiseAddress?.address ?? n.internalIP)
      .filter((a): a is string => a !== null && a !== undefined);
    const targets = addrs.length ? addrs.join(', ') : 'each kubeadm control plane';
    return skip(
      ['reachability probes from the Talos nodes’ network'],
      `from a host on the Talos nodes' network, check TCP 6443, 2379 and 2380 to ${targets} (e.g. nc -vz ADDRESS PORT); from each kubeadm control plane, 2379/2380 to the Talos nodes; from where ferry runs, 50000 to the Talos nodes. If Talos nodes have several addresses, pin the etcd address with cluster.etcd.advertisedSubnets.`,
    );
  },
};

export const NETWORK_RULES: Rule[] = [
  podCidrMismatch,
  serviceCidrMismatch,
  dnsDomainMismatch,
  kubeDnsIp,
  nodeCidrMask,
  portReachability,
];
