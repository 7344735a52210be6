/**
 * One control plane at a time (capi.md §2, recipe (c)): the next control-plane Machine is added
 * only once every earlier one has its Node, and only while the TalosControlPlane is paused and the
 * Cluster is not. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';
import { capiKubectl, kubectlPrefix, shq } from './kubectl-commands.js';
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, nodeRefName, PAUSED_ANNOTATION } from './view.js';

/** Names of the control-plane Machines that have no nodeRef yet, oldest first. */
export function withoutNode(machines: KubeObject[]): string[] {
  return machines
    .filter((m) => nodeRefName(m) === undefined)
    .sort((a, b) =>
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
    )
    .map((m) => m.metadata.name);
}

/** What `ferry capi add-control-plane --replicas N` may do, from what the management cluster shows. */
export type AddControlPlaneDecision =
  | { kind: 'add' }
  | { kind: 'nothing-to-do'; have: number }
  | { kind: 'refuse'; reason: string; remediation: string };

export interface AddControlPlaneInput {
  names: { namespace: string; cluster: string; controlPlane: string };
  /** undefined: no TalosControlPlane exists. */
  controlPlane: { paused: boolean; clusterPaused: boolean } | undefined;
  /** The cluster's control-plane Machines. */
  machines: KubeObject[];
  /** --replicas: the count wanted once this one is added. */
  want: number;
  noWait: boolean;
  /** Where the operator's kubectl commands point, and how they typed the kit and kubeconfig. */
  target: { kubeconfig: string; context?: string; kit: string };
}

/**
 * The refusals come first, in the order an operator fixes them: adopt, pause the control plane
 * (unpaused, its etcd audit removes the kubeadm members once a control-plane Machine has a Node),
 * unpause the Cluster (no controller would boot the Machine), then one at a time.
 */
export function decideAddControlPlane(input: AddControlPlaneInput): AddControlPlaneDecision {
  const { names, controlPlane: tcp, machines, want, target } = input;
  const k = kubectlPrefix({
    kubeconfig: target.kubeconfig,
    ...(target.context && { context: target.context }),
  });
  const where = `TalosControlPlane ${names.namespace}/${names.controlPlane}`;
  const refuse = (reason: string, remediation: string) => ({ kind: 'refuse', reason, remediation }) as const;
  if (!tcp)
    return refuse(
      `${where} does not exist`,
      `adopt first: ferry capi adopt ${shq(target.kit)} --mgmt-kubeconfig ${shq(target.kubeconfig)}`,
    );
  if (!tcp.paused)
    return refuse(
      `${where} is not paused: unpaused, its etcd audit removes the kubeadm etcd members once a control-plane Machine has a Node`,
      `pause it (${capiKubectl.pauseTcp(k, names.namespace, names.controlPlane)}), check the etcd member list, then retry`,
    );
  if (tcp.clusterPaused)
    return refuse(
      `Cluster ${names.namespace}/${names.cluster} is paused: no controller would boot the new Machine`,
      `unpause it (spec.paused and the ${PAUSED_ANNOTATION} annotation both pause it): ${capiKubectl.unpauseCluster(k, names.namespace, names.cluster)}; then retry`,
    );
  const have = machines.length;
  if (have >= want) return { kind: 'nothing-to-do', have };
  if (want !== have + 1)
    return refuse(
      `${where} has ${have} control-plane Machine(s): --replicas ${want} would add more than one`,
      `add them one at a time, each once the one before has its Node: --replicas ${have + 1}`,
    );
  const waiting = withoutNode(machines);
  if (waiting.length > 0 && !input.noWait)
    return refuse(
      `${where}: control-plane Machine ${waiting.join(', ')} has no Node yet: one control plane at a time, each once the one before has its Node and its etcd member is a voter`,
      `wait for its nodeRef (${capiKubectl.watchMachines(k, names.namespace, `${CLUSTER_NAME_LABEL}=${names.cluster},${CONTROL_PLANE_LABEL}`)}) and check its etcd member is a voter (talosctl -n NODE etcd members), then retry; --no-wait adds the next one anyway (two joining members at once risk etcd quorum)`,
    );
  return { kind: 'add' };
}
