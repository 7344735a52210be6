/**
 * The lab's second CACPPT behaviour that breaks an adoption (capi.md H2) — a lab, not CACPPT:
 * with `status.bootstrapped` not true and as many control-plane Machines as replicas, it looks for
 * etcd data on every Machine and, finding none (a Talos control plane still waiting to join the
 * kubeadm etcd has an empty data directory), calls Talos Bootstrap on the first address in sort
 * order — a second etcd cluster. The Talos side is a port: the lab has no Talos API.
 */
import { type KubeRequester, MERGE_PATCH } from '../../adapters/kube/request.js';
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, PAUSED_ANNOTATION } from '../../capi/view.js';
import type { KubeObject } from '../../snapshot/model.js';

export interface TalosBootstrapPort {
  /** `LS /var/lib/etcd/member` on the machine at `address` found something. */
  hasEtcdData(address: string): Promise<boolean>;
  bootstrap(address: string): Promise<void>;
}

export type BootstrapOutcome =
  | { kind: 'paused' }
  | { kind: 'already-bootstrapped' }
  | { kind: 'waiting'; why: string }
  | { kind: 'bootstrapped'; address: string };

const TCP = '/apis/controlplane.cluster.x-k8s.io/v1alpha3';
const CAPI = '/apis/cluster.x-k8s.io/v1beta2';

function addressOf(m: KubeObject): string | undefined {
  const list = (m.status?.['addresses'] as { type: string; address: string }[] | undefined) ?? [];
  return list.find((a) => a.type === 'InternalIP' || a.type === 'ExternalIP')?.address;
}

export async function reconcileBootstrap(
  api: KubeRequester,
  talos: TalosBootstrapPort,
  namespace: string,
  tcpName: string,
): Promise<BootstrapOutcome> {
  const path = `${TCP}/namespaces/${namespace}/taloscontrolplanes/${tcpName}`;
  const tcp = (await api.request('GET', path)) as KubeObject;
  if (tcp.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined) return { kind: 'paused' };
  if (tcp.status?.['bootstrapped'] === true) return { kind: 'already-bootstrapped' };
  const cluster = tcp.metadata.labels?.[CLUSTER_NAME_LABEL] ?? '';
  const machines = (
    (await api.request('GET', `${CAPI}/namespaces/${namespace}/machines`, {
      query: { labelSelector: `${CLUSTER_NAME_LABEL}=${cluster},${CONTROL_PLANE_LABEL}` },
    })) as { items: KubeObject[] }
  ).items;
  const replicas = Number(tcp.spec?.['replicas'] ?? 0);
  if (machines.length === 0 || machines.length !== replicas)
    return { kind: 'waiting', why: `${machines.length} Machines for ${replicas} replicas` };
  const addresses = machines.map(addressOf);
  if (addresses.some((a) => a === undefined)) return { kind: 'waiting', why: 'a Machine without an address' };
  for (const a of addresses)
    if (await talos.hasEtcdData(a!)) return { kind: 'waiting', why: `etcd data on ${a}` };
  const first = [...(addresses as string[])].sort()[0]!;
  await talos.bootstrap(first);
  await api.request('PATCH', `${path}/status`, {
    body: { status: { bootstrapped: true } },
    contentType: MERGE_PATCH,
  });
  return { kind: 'bootstrapped', address: first };
}
