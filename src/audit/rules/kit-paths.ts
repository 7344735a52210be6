/**
 * Paths inside the kit `ferry generate` writes (src/generate/*), for the `artifacts` of findings:
 * the files that fix them. One place for the names; test/audit/kit-artifacts.test.ts generates the
 * kit of the example cluster and checks that every path a finding cites is in it.
 */
export const KIT = {
  secrets: 'secrets.yaml',
  controlPlanePatch: 'talos/controlplane-patch.yaml',
  workerPatch: 'talos/worker-patch.yaml',
  /** Per-node patch of the Talos control plane named `hostname` (its hostname and own labels). */
  nodePatch: (hostname: string) => `talos/nodes/${hostname}.yaml`,
  /** Per-group patches with the labels and taints of worker groups (a directory). */
  workerGroups: 'talos/worker-groups/',
  ciliumMigration: 'cilium/values-migration.yaml',
  ciliumTalos: 'cilium/values-talos.yaml',
  ciliumAgents: 'cilium/agents.sh',
  healthProbe: 'rbac/health-probe.yaml',
  saIssuer: 'kubeadm/20-sa-issuer.sh',
  capiCluster: 'capi/cluster.yaml',
} as const;

/** Both Talos role patches: values every Talos node needs (network, kubelet, CNI). */
export const BOTH_PATCHES: readonly string[] = [KIT.controlPlanePatch, KIT.workerPatch];
