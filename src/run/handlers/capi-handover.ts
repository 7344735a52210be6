/**
 * `capi-handover`: Cluster API takes over the control planes, and ferry checks that this costs no
 * etcd member (capi.md H1, adoption recipe (e)). Only when no kubeadm member remains, and only
 * when the TalosControlPlane's replicas already match the Talos control planes (so that unpausing
 * neither scales up nor scales down, H3), ferry unpauses it (and the Cluster, were it still
 * paused), waits for `status.ready` with every replica ready, then watches the member list for a
 * settle window: a member that goes is named, the TalosControlPlane is paused again, and the run
 * stops. Fail closed: a member list it could not read at the end is a stop too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlPlaneView, EtcdMemberInfo, ManagementPort } from '../../ports/run.js';
import { errText, gateError } from '../../ports/stop.js';
import { requireMgmt } from './capi-mgmt.js';
import type { Handler, StepContext } from './context.js';

const memberLabel = (m: EtcdMemberInfo) => `${m.name || '(unstarted)'} (${m.id})`;

function pauseCmd(tcp: { namespace: string; name: string }): string {
  return `kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${tcp.namespace} annotate taloscontrolplanes.controlplane.cluster.x-k8s.io ${tcp.name} cluster.x-k8s.io/paused=true --overwrite`;
}

/** Ready, at the planned size, every replica ready. */
export function handedOver(t: ControlPlaneView, replicas: number): boolean {
  return (
    !t.paused &&
    !t.clusterPaused &&
    t.ready &&
    t.replicas === replicas &&
    t.statusReplicas === replicas &&
    t.readyReplicas === replicas
  );
}

async function lostMembers(
  ctx: StepContext,
  before: EtcdMemberInfo[],
): Promise<{ lost: EtcdMemberInfo[] } | { error: string }> {
  try {
    const now = await ctx.deps.etcd.observe();
    const ids = new Set(now.members.map((m) => m.id));
    return { lost: before.filter((m) => !ids.has(m.id)) };
  } catch (err) {
    return { error: errText(err) };
  }
}

async function stopForLoss(
  mgmt: ManagementPort,
  tcp: { namespace: string; name: string },
  lost: EtcdMemberInfo[],
  ctx: StepContext,
): Promise<never> {
  const paused = await mgmt.pauseControlPlane().then(
    () => true,
    (err: unknown) => {
      ctx.log(`could not pause the TalosControlPlane again: ${errText(err)}`);
      return false;
    },
  );
  throw gateError(
    `etcd lost member(s) ${lost.map(memberLabel).join(', ')} after the TalosControlPlane was unpaused: its etcd audit removes members whose name matches no control-plane Machine${paused ? '; ferry paused it again' : ''}`,
    `${paused ? '' : `pause it now: ${pauseCmd(tcp)}; `}check that every Talos host name equals its Machine's name (hostname.source InfrastructureName) and the provider version, add the member back or restore from the etcd snapshot, then run ferry run --resume`,
  );
}

export const handler: Handler<'capi-handover'> = {
  mode: 'act',
  async act(step, ctx) {
    const mgmt = requireMgmt(ctx, step.id);
    const want = step.params.replicas;
    const pollMs = ctx.options.pollMs ?? 1000;
    const settleMs = (ctx.options.capiSettleSeconds ?? step.params.settleSeconds) * 1000;
    const deadline = Date.now() + ctx.action.timeoutMs;
    const signal = ctx.action.signal;

    const view = await ctx.deps.etcd.observe();
    const before = view.members;
    const kubeadm = before.filter((m) => ctx.kubeadmIds.has(m.id));
    if (kubeadm.length > 0)
      throw gateError(
        `kubeadm etcd member(s) ${kubeadm.map(memberLabel).join(', ')} remain: unpausing the TalosControlPlane now would let its etcd audit remove them`,
        'finish the control-plane swaps first (phases 2 and 4), then run ferry run --resume',
      );
    const tcp = await mgmt.controlPlane();
    if (!tcp)
      throw gateError(
        'the management cluster has no TalosControlPlane to hand over to',
        'run the capi-adopt step first (ferry run --resume --retry with its id), or check --mgmt-kubeconfig',
      );
    // Unpaused at another size, it would scale: down deletes Nodes without a drain (H3).
    if (tcp.replicas !== want || (tcp.statusReplicas !== undefined && tcp.statusReplicas !== want))
      throw gateError(
        `TalosControlPlane ${tcp.namespace}/${tcp.name} asks for ${tcp.replicas ?? '?'} replicas and has ${tcp.statusReplicas ?? '?'} Machines, not the ${want} Talos control planes: unpaused, it would scale`,
        `find out why (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${tcp.namespace} get machines -l cluster.x-k8s.io/control-plane), make both ${want}, then run ferry run --resume`,
      );
    ctx.log(`etcd before: ${before.map(memberLabel).join(', ')}`);

    const r = await mgmt.adopt({ kubeadmMembersRemain: false });
    for (const a of r.applied) ctx.log(`applied, verified: ${a}`);
    if (r.applied.length === 0) ctx.log('already unpaused: nothing to change');

    let last: ControlPlaneView | undefined;
    for (;;) {
      const lost = await lostMembers(ctx, before);
      if ('lost' in lost && lost.lost.length > 0) await stopForLoss(mgmt, tcp, lost.lost, ctx);
      last = await mgmt.controlPlane();
      if (last && handedOver(last, want)) break;
      if (Date.now() > deadline)
        throw gateError(
          `TalosControlPlane ${tcp.namespace}/${tcp.name} did not become ready with ${want} of ${want} replicas ready (saw ready ${last?.ready ?? '?'}, replicas ${last?.replicas ?? '?'}, Machines ${last?.statusReplicas ?? '?'}, ready ${last?.readyReplicas ?? '?'})`,
          `look at it (clusterctl describe cluster ${step.params.names?.cluster ?? 'CLUSTER'} --kubeconfig "$MGMT_KUBECONFIG"), then run ferry run --resume`,
        );
      await sleep(pollMs, undefined, { signal });
    }
    ctx.log(`TalosControlPlane ${tcp.namespace}/${tcp.name} ready, ${want}/${want} replicas ready`);

    const settleEnd = Date.now() + settleMs;
    while (Date.now() < settleEnd) {
      const lost = await lostMembers(ctx, before);
      if ('lost' in lost && lost.lost.length > 0) await stopForLoss(mgmt, tcp, lost.lost, ctx);
      await sleep(Math.min(pollMs, Math.max(0, settleEnd - Date.now())), undefined, { signal });
    }
    const end = await lostMembers(ctx, before);
    if ('error' in end) {
      await mgmt.pauseControlPlane().catch(() => undefined);
      throw gateError(
        `could not read the etcd member list after the settle window (${end.error}): ferry cannot tell whether the TalosControlPlane's etcd audit removed a member; it paused the TalosControlPlane again`,
        'check etcd (etcdctl member list), then run ferry run --resume to hand over again',
      );
    }
    if (end.lost.length > 0) await stopForLoss(mgmt, tcp, end.lost, ctx);
    ctx.log(`etcd after ${settleMs / 1000} s: every member of before is still there`);
    return {
      membersBefore: before.map((m) => m.name),
      settleSeconds: settleMs / 1000,
      unpaused: r.applied,
    };
  },
};
