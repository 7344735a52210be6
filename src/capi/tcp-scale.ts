/**
 * The only TalosControlPlane replica changes ferry makes (capi.md H3, H8): up by one, to add a
 * Talos control plane. CACPPT's scale-down deletes a Machine's Node without cordon or drain and
 * picks the member itself, so ferry never lowers replicas: it drains the old node and removes its
 * etcd member itself, and the TCP's count only grows. Pure.
 */
export type TcpScale =
  | { kind: 'scale'; from: number; to: number }
  | { kind: 'refused'; reason: string; remediation: string };

export function tcpScale(current: number, target: number): TcpScale {
  if (target === current + 1) return { kind: 'scale', from: current, to: target };
  if (target < current)
    return {
      kind: 'refused',
      reason: `lowering TalosControlPlane replicas ${current} → ${target} lets the Talos control-plane provider delete a Node without draining it`,
      remediation:
        'drain the old node and remove its etcd member with ferry; never scale the TalosControlPlane down',
    };
  return {
    kind: 'refused',
    reason: `TalosControlPlane replicas ${current} → ${target}: ferry adds control planes one at a time`,
    remediation: `scale to ${current + 1}, wait for its Machine's Node and etcd member, then go on`,
  };
}
