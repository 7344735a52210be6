/**
 * The lab's CACPPT scale-down (capi.md H3) — a lab, not CACPPT: with the TalosControlPlane
 * unpaused and more control-plane Machines than replicas, it deletes the oldest Machine's Node
 * outright (no cordon, no eviction, PodDisruptionBudgets ignored), the pods bound to it with it (as
 * the pod garbage collector does for pods of a Node that is gone), then the Machine.
 */
import type { KubeRequester } from '../../adapters/kube/request.js';
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, PAUSED_ANNOTATION } from '../../capi/view.js';
import type { KubeObject } from '../../snapshot/model.js';

export type ScaleDownOutcome =
  | { kind: 'paused' }
  | { kind: 'nothing-to-do' }
  | { kind: 'deleted'; machine: string; node: string | null; pods: string[] };

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const TCP = '/apis/controlplane.cluster.x-k8s.io/v1alpha3';

export async function reconcileScaleDown(
  mgmt: KubeRequester,
  workload: KubeRequester,
  namespace: string,
  tcpName: string,
): Promise<ScaleDownOutcome> {
  const tcp = (await mgmt.request(
    'GET',
    `${TCP}/namespaces/${namespace}/taloscontrolplanes/${tcpName}`,
  )) as KubeObject;
  if (tcp.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined) return { kind: 'paused' };
  const cluster = tcp.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';
  const machines = (
    (await mgmt.request('GET', `${CAPI}/namespaces/${namespace}/machines`, {
      query: { labelSelector: `${CLUSTER_NAME_LABEL}=${cluster},${CONTROL_PLANE_LABEL}` },
    })) as { items: KubeObject[] }
  ).items;
  if (machines.length <= Number(tcp.spec?.['replicas'] ?? 0)) return { kind: 'nothing-to-do' };
  const oldest = [...machines].sort((a, b) =>
    `${a.metadata.creationTimestamp ?? ''}${a.metadata.name}`.localeCompare(
      `${b.metadata.creationTimestamp ?? ''}${b.metadata.name}`,
    ),
  )[0]!;
  const node = (oldest.status?.['nodeRef'] as { name?: string } | undefined)?.name ?? null;
  const pods: string[] = [];
  if (node) {
    await workload.request('DELETE', `/api/v1/nodes/${encodeURIComponent(node)}`);
    const bound = (
      (await workload.request('GET', '/api/v1/pods', {
        query: { fieldSelector: `spec.nodeName=${node}` },
      })) as {
        items: KubeObject[];
      }
    ).items;
    for (const p of bound) {
      await workload.request('DELETE', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`);
      pods.push(`${p.metadata.namespace}/${p.metadata.name}`);
    }
  }
  await mgmt.request('DELETE', `${CAPI}/namespaces/${namespace}/machines/${oldest.metadata.name}`);
  return { kind: 'deleted', machine: oldest.metadata.name, node, pods };
}
