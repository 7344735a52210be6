/**
 * The rule catalog of docs/knowledge/blockers.md ("Index" table), as data: every rule id ferry
 * knows of, whether or not an audit rule implements it yet. Ids are stable (never renamed or
 * reused). Used to validate suppressions (a typo is an error; a rule not yet implemented is not),
 * to check that implemented rules and explain signatures cite real ids, and by docs.
 */

/** What the audit reads (blockers.md "Inputs" table). */
export type InputTag = 'api' | 'kubeadm' | 'flags' | 'pki' | 'etcd' | 'audit' | 'node' | 'target' | 'mgmt';

export const INPUT_TAGS: readonly InputTag[] = [
  'api',
  'kubeadm',
  'flags',
  'pki',
  'etcd',
  'audit',
  'node',
  'target',
  'mgmt',
];

export interface CatalogEntry {
  id: string;
  /** As the catalog states it, e.g. "blocker", "risk / blocker", "blocker (KubePrism on)". */
  severity: string;
  inputs: InputTag[];
}

// blockers.md "Index" table, in its order.
export const RULE_CATALOG: readonly CatalogEntry[] = [
  { id: 'pki.ca-key-missing', severity: 'blocker', inputs: ['pki'] },
  { id: 'pki.etcd-ca-missing', severity: 'blocker', inputs: ['pki', 'kubeadm'] },
  { id: 'pki.front-proxy-ca-missing', severity: 'blocker', inputs: ['pki'] },
  { id: 'pki.sa-key-missing', severity: 'blocker', inputs: ['pki'] },
  { id: 'pki.key-type-unsupported', severity: 'blocker', inputs: ['pki'] },
  { id: 'pki.cert-key-mismatch', severity: 'blocker', inputs: ['pki'] },
  { id: 'pki.ca-invalid', severity: 'blocker / risk', inputs: ['pki'] },
  { id: 'pki.intermediate-ca', severity: 'blocker', inputs: ['pki', 'flags'] },
  { id: 'pki.ca-bundle-multiple', severity: 'risk', inputs: ['pki'] },
  { id: 'pki.sa-extra-verify-keys', severity: 'risk', inputs: ['flags', 'pki'] },
  { id: 'pki.leaf-expiry', severity: 'risk', inputs: ['pki'] },
  { id: 'apiserver.san-loopback', severity: 'blocker (KubePrism on)', inputs: ['pki', 'target'] },
  { id: 'apiserver.san-endpoint', severity: 'blocker', inputs: ['pki', 'kubeadm'] },
  { id: 'apiserver.sa-issuer', severity: 'blocker', inputs: ['flags', 'target'] },
  { id: 'apiserver.sa-jwks-uri', severity: 'info', inputs: ['flags'] },
  {
    id: 'apiserver.anonymous-auth-dependents',
    severity: 'risk (blocker ≤v1.13 with HTTP LB checks)',
    inputs: ['flags', 'audit', 'node'],
  },
  { id: 'apiserver.extra-args-carryover', severity: 'risk', inputs: ['flags', 'kubeadm'] },
  { id: 'apiserver.extra-arg-denied', severity: 'blocker', inputs: ['flags', 'target'] },
  { id: 'apiserver.oidc', severity: 'risk', inputs: ['flags'] },
  { id: 'apiserver.podsecurity-default', severity: 'blocker / risk', inputs: ['api', 'target'] },
  { id: 'apiserver.tls13-clients', severity: 'risk', inputs: ['target', 'audit'] },
  { id: 'apiserver.coexistence-endpoints', severity: 'info', inputs: ['api'] },
  { id: 'encryption.absent', severity: 'blocker', inputs: ['flags', 'target'] },
  { id: 'encryption.key-name', severity: 'blocker', inputs: ['node', 'etcd', 'target'] },
  { id: 'encryption.provider-unsupported', severity: 'blocker (≤v1.13)', inputs: ['node'] },
  { id: 'encryption.v114-generated-doc', severity: 'risk', inputs: ['target'] },
  { id: 'etcd.version-too-old', severity: 'blocker', inputs: ['etcd'] },
  { id: 'etcd.version-learner-bug', severity: 'blocker', inputs: ['etcd', 'target'] },
  { id: 'etcd.version-skew', severity: 'blocker', inputs: ['etcd', 'target'] },
  { id: 'etcd.unhealthy', severity: 'blocker', inputs: ['etcd'] },
  { id: 'etcd.member-count', severity: 'risk / blocker', inputs: ['etcd'] },
  { id: 'etcd.member-name-collision', severity: 'blocker', inputs: ['etcd', 'api', 'target'] },
  { id: 'etcd.external', severity: 'blocker', inputs: ['kubeadm', 'flags'] },
  { id: 'etcd.v2-enabled', severity: 'risk', inputs: ['flags'] },
  { id: 'etcd.extra-args', severity: 'risk', inputs: ['flags'] },
  { id: 'etcd.db-size', severity: 'info', inputs: ['etcd'] },
  { id: 'network.pod-cidr-mismatch', severity: 'blocker', inputs: ['kubeadm', 'flags', 'api', 'target'] },
  { id: 'network.service-cidr-mismatch', severity: 'blocker', inputs: ['kubeadm', 'flags', 'api', 'target'] },
  { id: 'network.dns-domain-mismatch', severity: 'blocker', inputs: ['kubeadm', 'target'] },
  { id: 'network.kube-dns-ip', severity: 'blocker', inputs: ['api', 'kubeadm', 'target'] },
  { id: 'network.node-cidr-mask', severity: 'risk', inputs: ['flags', 'api', 'target'] },
  { id: 'network.port-reachability', severity: 'risk', inputs: ['node'] },
  { id: 'cni.talos-default-flannel', severity: 'blocker', inputs: ['api', 'target'] },
  { id: 'cni.cilium-values', severity: 'risk', inputs: ['api'] },
  { id: 'cni.cilium-update-strategy', severity: 'risk', inputs: ['api'] },
  { id: 'addons.kube-proxy-selector', severity: 'risk', inputs: ['api'] },
  { id: 'addons.kube-proxy-conflict', severity: 'blocker', inputs: ['api', 'target'] },
  { id: 'addons.coredns-conflict', severity: 'risk', inputs: ['api', 'target'] },
  { id: 'addons.bootstrap-objects', severity: 'info', inputs: ['api', 'target'] },
  { id: 'kubelet.config-carryover', severity: 'risk', inputs: ['kubeadm', 'node', 'api'] },
  { id: 'kubelet.sysctls', severity: 'risk', inputs: ['api', 'node'] },
  { id: 'kubelet.static-pods', severity: 'risk', inputs: ['api'] },
  { id: 'nodes.cp-schedulable', severity: 'risk', inputs: ['api', 'target'] },
  { id: 'nodes.labels-taints-carryover', severity: 'risk', inputs: ['api'] },
  { id: 'nodes.name-reuse', severity: 'blocker', inputs: ['api', 'target'] },
  { id: 'workload.hostpath-readonly-root', severity: 'blocker', inputs: ['api', 'target'] },
  { id: 'workload.hostpath-absent', severity: 'risk', inputs: ['api'] },
  { id: 'workload.flexvolume', severity: 'blocker (v1.14)', inputs: ['api'] },
  { id: 'workload.csi-driver', severity: 'risk', inputs: ['api'] },
  { id: 'workload.kernel-modules', severity: 'risk', inputs: ['api'] },
  { id: 'workload.host-binaries', severity: 'risk', inputs: ['api'] },
  { id: 'workload.pdb-blocking', severity: 'blocker', inputs: ['api'] },
  // Not in blockers.md's index: the Eviction API's answer for a pod under two budgets.
  { id: 'workload.pdb-overlap', severity: 'blocker', inputs: ['api'] },
  { id: 'workload.pdb-missing', severity: 'risk', inputs: ['api'] },
  { id: 'workload.undrainable-pods', severity: 'risk', inputs: ['api'] },
  { id: 'workload.node-pinned', severity: 'risk', inputs: ['api'] },
  { id: 'gitops.reverts-ferry-changes', severity: 'blocker / risk', inputs: ['api'] },
  { id: 'endpoint.control-plane-endpoint-missing', severity: 'blocker', inputs: ['kubeadm'] },
  { id: 'endpoint.vip-on-control-plane', severity: 'risk', inputs: ['api', 'node'] },
  { id: 'endpoint.lb-backends', severity: 'info', inputs: ['node'] },
  { id: 'bootstrap.token-ttl', severity: 'blocker', inputs: ['api'] },
  { id: 'bootstrap.token-groups', severity: 'risk', inputs: ['api'] },
  { id: 'bootstrap.bootstrapsigner', severity: 'risk', inputs: ['api', 'target'] },
  { id: 'version.k8s-outside-talos-window', severity: 'blocker', inputs: ['api', 'target'] },
  { id: 'version.k8s-patch-mismatch', severity: 'risk', inputs: ['api', 'target'] },
  { id: 'talos.discovery-egress', severity: 'risk', inputs: ['target'] },
  { id: 'talos.workload-isolation', severity: 'risk (v1.14)', inputs: ['api', 'target'] },
  { id: 'talos.health-mixed-cluster', severity: 'info', inputs: [] },
  { id: 'capi.tcp-etcd-audit', severity: 'blocker', inputs: ['mgmt'] },
  { id: 'capi.bootstrap-split-brain', severity: 'blocker', inputs: ['mgmt'] },
  { id: 'capi.secrets-not-precreated', severity: 'blocker', inputs: ['mgmt'] },
  { id: 'capi.providerid-missing', severity: 'blocker', inputs: ['mgmt', 'api'] },
  { id: 'capi.cp-scale-down-no-drain', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.worker-drain-skipped', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.machineset-preflight-hold', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.talosconfig-drift', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.contract-v1beta1', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.json-patches-multidoc', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.secret-not-moved', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.move-paused-or-unstable', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.controllers-not-ha', severity: 'risk', inputs: ['mgmt'] },
  { id: 'capi.operator-inventory', severity: 'info', inputs: ['mgmt'] },
  { id: 'capi.mhc-no-cp-remediation', severity: 'info', inputs: ['mgmt'] },
];

export const CATALOG_IDS: ReadonlySet<string> = new Set(RULE_CATALOG.map((e) => e.id));
