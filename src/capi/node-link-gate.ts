/**
 * Why a Machine gets no Node, when the cause is on the management cluster: core Cluster API links
 * a Machine to its Node only through the `<cluster>-kubeconfig` Secret, and sets up its Node watch
 * only once the Cluster is ControlPlaneInitialized (docs/knowledge/capi.md §4.9). While the
 * TalosControlPlane is paused nothing but ferry's adoption writes either, so a wait for the Node
 * would otherwise run mute to its deadline. What could not be read is a stop too (fail closed):
 * the gate never guesses the link is fine. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';
import { MGMT_KUBECTL } from './kubectl-commands.js';
import { clusterControlPlaneInitialized, kubeconfigSecretName, kubeconfigSecretUnusable } from './view.js';

/** An object as ferry tried to read it: there, absent (404), or unreadable (why). */
export type Read = { kind: 'read'; object: KubeObject | undefined } | { kind: 'unreadable'; error: string };

export type NodeLinkGate = { kind: 'pass' } | { kind: 'stop'; reason: string; remediation: string };

export interface NodeLinkInput {
  machine: string;
  namespace: string;
  cluster: string;
  clusterObject: Read;
  kubeconfigSecret: Read;
  /** Whether the TalosControlPlane is paused (its provider writes both itself once unpaused). */
  controlPlanePaused: boolean;
  /** The kit directory, as the operator gave it. */
  kitDir: string;
}

export function nodeLinkGate(i: NodeLinkInput): NodeLinkGate {
  const secret = `Secret ${i.namespace}/${kubeconfigSecretName(i.cluster)}`;
  const cluster = `Cluster ${i.namespace}/${i.cluster}`;
  const unreadable = [
    ...(i.kubeconfigSecret.kind === 'unreadable' ? [`${secret}: ${i.kubeconfigSecret.error}`] : []),
    ...(i.clusterObject.kind === 'unreadable' ? [`${cluster}: ${i.clusterObject.error}`] : []),
  ];
  if (unreadable.length > 0)
    return {
      kind: 'stop',
      reason: `Machine ${i.namespace}/${i.machine} has no Node yet, and ferry cannot read what Cluster API needs to link it (${unreadable.join('; ')})`,
      remediation: `give the management kubeconfig read access to Secrets and Clusters in namespace ${i.namespace} (check: ${MGMT_KUBECTL} -n ${i.namespace} auth can-i get secrets), then run ferry run --resume`,
    };

  const causes: string[] = [];
  const s = i.kubeconfigSecret.kind === 'read' ? i.kubeconfigSecret.object : undefined;
  if (!s)
    causes.push(`${secret} does not exist, so Cluster API cannot reach the workload cluster to find Nodes`);
  else {
    const why = kubeconfigSecretUnusable(s);
    if (why) causes.push(`${secret} is no kubeconfig Cluster API can use: ${why}`);
  }
  const c = i.clusterObject.kind === 'read' ? i.clusterObject.object : undefined;
  if (!c) causes.push(`${cluster} does not exist`);
  else if (!clusterControlPlaneInitialized(c))
    causes.push(
      `${cluster} is not ControlPlaneInitialized, so Cluster API watches no Node (it reads the TalosControlPlane's status.initialized, and a paused TalosControlPlane's change only when the Cluster itself changes)`,
    );
  if (causes.length === 0) return { kind: 'pass' };

  const adopt = `run \`ferry capi adopt ${i.kitDir} --mgmt-kubeconfig "$MGMT_KUBECONFIG"\` again (it writes the Secret and the TalosControlPlane's initialized status and makes the Cluster reconcile; finished steps are skipped; --dry-run shows them first)`;
  return {
    kind: 'stop',
    reason: `Machine ${i.namespace}/${i.machine} cannot get its Node: ${causes.join('; ')}`,
    remediation: i.controlPlanePaused
      ? `${adopt}, then run ferry run --resume`
      : `the TalosControlPlane is not paused, so its provider writes these itself: look at its logs (${MGMT_KUBECTL} -n cacppt-system logs -l cluster.x-k8s.io/provider=control-plane-talos); or ${adopt}; then run ferry run --resume`,
  };
}
