/**
 * talos-ccm, the cloud-controller-manager that gives Cluster API's Talos nodes their providerID
 * (H11: Talos never sets it; Machines stay Provisioned without it) and approves the kubelet
 * serving-certificate CSRs that certificate rotation creates. Values as the field report ran it
 * (mgmt.md §6): the cloud-node and CSR-approval controllers, one replica on a control plane.
 */
export const TALOS_CCM_RELEASE = 'talos-cloud-controller-manager';
export const TALOS_CCM_CHART = 'oci://ghcr.io/siderolabs/charts/talos-cloud-controller-manager';
/** The repository's chart version (mgmt.md §1: 0.5.5 is UNCONFIRMED). */
export const TALOS_CCM_CHART_VERSION = '0.5.4';

export function ccmValues(): Record<string, unknown> {
  return {
    enabledControllers: ['cloud-node', 'node-csr-approval'],
    replicaCount: 1,
    nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
    daemonSet: { enabled: false },
  };
}

/** The command the operator runs against the workload cluster (the one being migrated). */
export function ccmInstallCommand(valuesFile: string): string {
  return `helm upgrade --install ${TALOS_CCM_RELEASE} ${TALOS_CCM_CHART} --version ${TALOS_CCM_CHART_VERSION} -n kube-system -f ${valuesFile}`;
}
