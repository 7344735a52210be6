/**
 * The lab's Cluster API control-plane reconciler — a lab, not CACPPT: it reproduces the one
 * behaviour of the Talos control-plane provider that destroys an adopted cluster (capi.md H1).
 * On every pass, unless the TalosControlPlane or its Cluster is paused, once every control-plane
 * Machine has a nodeRef it removes each etcd member whose name (first DNS label, case-insensitive)
 * is no Machine's nodeRef name — every kubeadm member of a cluster being adopted.
 */
import type { KubeRequester } from '../../adapters/kube/request.js';
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, hostLabel, PAUSED_ANNOTATION } from '../../capi/view.js';
import type { EtcdAdminPort } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';

export type AuditOutcome =
  | { kind: 'paused' }
  /** No control-plane Machine yet, or one without a Node: CACPPT's audit waits too. */
  | { kind: 'waiting'; why: string }
  | { kind: 'audited'; removed: string[]; failed: string[] };

const TCP = '/apis/controlplane.cluster.x-k8s.io/v1alpha3';
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';

export async function reconcileEtcdAudit(
  api: KubeRequester,
  etcd: Pick<EtcdAdminPort, 'observe' | 'removeMember'>,
  namespace: string,
  tcpName: string,
): Promise<AuditOutcome> {
  const tcp = (await api.request(
    'GET',
    `${TCP}/namespaces/${namespace}/taloscontrolplanes/${tcpName}`,
  )) as KubeObject;
  const clusters = (await api.request('GET', `${CAPI}/namespaces/${namespace}/clusters`)) as {
    items: KubeObject[];
  };
  const cluster = clusters.items.find(
    (c) => (c.spec?.['controlPlaneRef'] as { name?: string } | undefined)?.name === tcpName,
  );
  if (cluster?.spec?.['paused'] === true || tcp.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
    return { kind: 'paused' };
  const clusterName = cluster?.metadata.name ?? tcp.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';
  const selector = `${CLUSTER_NAME_LABEL}=${clusterName},${CONTROL_PLANE_LABEL}`;
  const machines = (
    (await api.request('GET', `${CAPI}/namespaces/${namespace}/machines`, {
      query: { labelSelector: selector },
    })) as {
      items: KubeObject[];
    }
  ).items;
  if (machines.length === 0) return { kind: 'waiting', why: 'no control-plane Machine' };
  const nodeNames: string[] = [];
  for (const m of machines) {
    const ref = (m.status?.['nodeRef'] as { name?: string } | undefined)?.name;
    if (!ref) return { kind: 'waiting', why: `Machine ${m.metadata.name} has no nodeRef` };
    nodeNames.push(hostLabel(ref));
  }
  const view = await etcd.observe();
  const removed: string[] = [];
  const failed: string[] = [];
  for (const member of view.members) {
    if (nodeNames.includes(hostLabel(member.name))) continue;
    try {
      await etcd.removeMember(member.id);
      removed.push(member.name);
    } catch {
      // CACPPT logs and retries on the next pass; etcd refuses to remove its last member.
      failed.push(member.name);
    }
  }
  return { kind: 'audited', removed, failed };
}
