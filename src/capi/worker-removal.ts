/**
 * Who takes an old worker out of a cluster being adopted (capi.md H4, §4.6): Cluster API deletes a
 * worker Machine without draining it — and leaves its Node — while no control-plane Machine is
 * active (`isDeleteNodeAllowed` → errNoControlPlaneNodes), which is the whole time the control
 * plane is still kubeadm. So ferry drains the kubeadm workers itself and never lets Cluster API
 * remove one; only once control-plane Machines exist may a MachineDeployment scale-down take a
 * Talos worker Machine (Cluster API drains it then). Pure.
 */
export type WorkerRemoval = { kind: 'ferry-drains'; reason: string } | { kind: 'cluster-api-may-delete' };

export interface WorkerToRemove {
  /** The node was a kubeadm worker (not one a MachineDeployment made). */
  kubeadm: boolean;
  /** Control-plane Machines of the Cluster that are not being deleted. */
  activeControlPlaneMachines: number;
}

export function workerRemoval(w: WorkerToRemove): WorkerRemoval {
  if (w.kubeadm)
    return {
      kind: 'ferry-drains',
      reason: 'a kubeadm worker is drained and removed by ferry, never by a MachineDeployment scale-down',
    };
  if (w.activeControlPlaneMachines === 0)
    return {
      kind: 'ferry-drains',
      reason:
        'no control-plane Machine exists yet: Cluster API would delete the worker Machine without draining it and leave its Node',
    };
  return { kind: 'cluster-api-may-delete' };
}
