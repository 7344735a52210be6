/**
 * Paths inside the kit `ferry generate` writes: the one place for their names. The generators
 * write these files, the plan reads talos/machines.json and points the runbook at them, and the
 * audit's findings cite them as the files that fix them (test/audit/kit-artifacts.test.ts checks
 * that every cited path is in the kit of the example cluster).
 */
export const KIT = {
  secrets: 'secrets.yaml',
  controlPlanePatch: 'talos/controlplane-patch.yaml',
  workerPatch: 'talos/worker-patch.yaml',
  /** Per-node patch of the Talos control plane named `hostname` (its hostname and own labels). */
  nodePatch: (hostname: string) => `talos/nodes/${hostname}.yaml`,
  /** Per-group patches with the labels and taints of worker groups (a directory). */
  workerGroups: 'talos/worker-groups/',
  workerGroupPatch: (group: string) => `talos/worker-groups/${group}.yaml`,
  /** Complete machine config of the Talos control plane named `hostname` (secrets + patches, 0600). */
  controlPlaneConfig: (hostname: string) => `talos/full/${hostname}.yaml`,
  /** Complete machine config of the Talos worker that replaces kubeadm node `replaces` (0600). */
  workerConfig: (replaces: string) => `talos/full/replacing-${replaces}.yaml`,
  /** `--full`: complete configs per worker role and group, for workers beyond the plan. */
  workerRoleConfig: 'talos/full/worker.yaml',
  workerGroupConfig: (group: string) => `talos/full/worker-${group}.yaml`,
  /** Which complete config and which patches each planned node takes (read by `ferry plan`). */
  machines: 'talos/machines.json',
  /** Admin client credentials for the Talos API of the new nodes (0600). */
  talosconfig: 'talos/talosconfig',
  ciliumMigration: 'cilium/values-migration.yaml',
  ciliumTalos: 'cilium/values-talos.yaml',
  ciliumAgents: 'cilium/agents.sh',
  healthProbe: 'rbac/health-probe.yaml',
  saIssuer: 'kubeadm/20-sa-issuer.sh',
  capiCluster: 'capi/cluster.yaml',
} as const;

/** Both Talos role patches: values every Talos node needs (network, kubelet, CNI). */
export const BOTH_PATCHES: readonly string[] = [KIT.controlPlanePatch, KIT.workerPatch];
