/**
 * Would unpausing the TalosControlPlane let its etcd audit (capi.md H1) remove members? The audit
 * runs once every control-plane Machine has a nodeRef and removes each member whose name (first
 * DNS label, case-insensitive) is no Machine's nodeRef name nor Machine name: the kubeadm
 * members. With no Machine holding a nodeRef yet it waits; the moment one has, it fires.
 */
import type { EtcdMemberInfo } from '../ports/run.js';
import type { KubeObject } from '../snapshot/model.js';
import { hostLabel } from './view.js';

export type AuditGuard =
  | { kind: 'safe' }
  | { kind: 'refused'; machinesWithNode: string[]; unowned: string[] };

export function auditGuard(members: EtcdMemberInfo[], cpMachines: KubeObject[]): AuditGuard {
  const withNode = cpMachines.filter(
    (m) => typeof (m.status?.['nodeRef'] as { name?: unknown } | undefined)?.name === 'string',
  );
  if (withNode.length === 0) return { kind: 'safe' };
  const named = new Set<string>();
  for (const m of cpMachines) {
    named.add(hostLabel(m.metadata.name));
    const ref = (m.status?.['nodeRef'] as { name?: string } | undefined)?.name;
    if (ref) named.add(hostLabel(ref));
  }
  // An unnamed member (a learner not started yet) is no Machine's either: the audit removes it.
  const unowned = members.filter((x) => !named.has(hostLabel(x.name))).map((x) => x.name || x.id);
  if (unowned.length === 0) return { kind: 'safe' };
  return { kind: 'refused', machinesWithNode: withNode.map((m) => m.metadata.name), unowned };
}
