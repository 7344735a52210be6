/**
 * `capi-adopt`: the kit's Cluster API objects go to the management cluster in the safe order,
 * each verified by reading it back (src/capi/adopt-apply.ts). kubeadm members remain at this
 * point by construction (phase 1), so the TalosControlPlane stays paused (capi.md H1); the step
 * checks that it is. A second run finds every step done and says so.
 */
import { gateError } from '../../ports/stop.js';
import { requireMgmt } from './capi-mgmt.js';
import type { Handler } from './context.js';

export const handler: Handler<'capi-adopt'> = {
  mode: 'act',
  async act(step, ctx) {
    const mgmt = requireMgmt(ctx, step.id);
    const r = await mgmt.adopt({ kubeadmMembersRemain: true });
    if (r.nothingToDo) ctx.log('already adopted: the management cluster shows every step, nothing to do');
    else for (const a of r.applied) ctx.log(`applied, verified: ${a}`);
    const tcp = await mgmt.controlPlane();
    if (!tcp?.paused)
      throw gateError(
        `TalosControlPlane ${tcp ? `${tcp.namespace}/${tcp.name} is not paused` : 'is missing'} after adoption, while kubeadm etcd members remain: its etcd audit would remove them`,
        `pause it at once: kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${tcp?.namespace ?? 'NAMESPACE'} annotate taloscontrolplanes.controlplane.cluster.x-k8s.io ${tcp?.name ?? 'NAME'} cluster.x-k8s.io/paused=true; then run ferry run --resume`,
      );
    return { applied: r.applied, alreadyDone: r.alreadyDone.length, nothingToDo: r.nothingToDo };
  },
};
