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
  /** The kubeadm-side preparation steps in order (read by `ferry plan`). */
  prepSteps: 'kubeadm/steps.json',
  /** The kubeadm ClusterConfiguration with the loopback certSANs (uploaded by step 15). */
  clusterConfiguration: 'kubeadm/cluster-configuration.yaml',
  /** kubeadm config of one control plane for re-issuing its apiserver certificate (step 10). */
  apiserverSansConfig: (node: string) => `kubeadm/apiserver-sans/${node}.yaml`,
  apiserverSans: 'kubeadm/10-apiserver-sans.sh',
  kubeadmConfigUpload: 'kubeadm/15-kubeadm-config.sh',
  saIssuer: 'kubeadm/20-sa-issuer.sh',
  encryptionPhase1: 'kubeadm/30-encryption-phase1.sh',
  encryptionPhase2: 'kubeadm/31-encryption-phase2.sh',
  reencrypt: 'kubeadm/32-reencrypt.sh',
  /** The EncryptionConfiguration of each rotation phase (they hold keys: 0600). */
  encryptionPhase1Config: 'kubeadm/encryption/phase1.yaml',
  encryptionPhase2Config: 'kubeadm/encryption/phase2.yaml',
  /** The Cluster API manifests (a directory). */
  capi: 'capi/',
  capiCluster: 'capi/cluster.yaml',
  capiSecrets: 'capi/secrets.yaml',
  /** Written by `ferry capi adopt --dry-run` only: the minted `<cluster>-kubeconfig` Secret (0600). */
  capiKubeconfigSecret: 'capi/kubeconfig-secret.yaml',
  capiTcpStatusPatch: 'capi/tcp-status-patch.yaml',
  capiCcmValues: 'capi/talos-ccm-values.yaml',
  provenance: 'provenance.json',
} as const;

/** The id of the step a kubeadm/NN-name.sh script belongs to: its file name without `.sh`. */
export function prepStepId(script: string): string {
  return script.slice(script.lastIndexOf('/') + 1).replace(/\.sh$/, '');
}

/** The script's command for steps.json and the runbook: `sh kubeadm/NN-name.sh VERB [NODE]`. */
export function prepCommand(script: string, verb: 'apply' | 'verify' | 'undo', perNode: boolean): string {
  return `sh ${script} ${verb}${perNode ? ' NODE' : ''}`;
}

/** Both Talos role patches: values every Talos node needs (network, kubelet, CNI). */
export const BOTH_PATCHES: readonly string[] = [KIT.controlPlanePatch, KIT.workerPatch];
