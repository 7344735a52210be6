/**
 * `etcd-move-leader`: MoveLeader from the old member to the first candidate that is a healthy,
 * caught-up voter. A learner cannot lead, an unhealthy member would leave the cluster without a
 * leader, and a member far behind would stall writes while it catches up: each is skipped.
 */

import { leaderMoveAlerts } from '../../knowledge/expected-alerts.js';
import type { MemberRef } from '../../plan/expected-state.js';
import type { EtcdMemberInfo, EtcdView } from '../../ports/run.js';
import { gateError } from '../../ports/stop.js';
import { remediationFor } from '../gates.js';
import type { Handler, StepContext } from './context.js';
import { memberName } from './context.js';

/** Entries a transferee may lag the leader's index by. */
export const MAX_TRANSFER_LAG = 1000n;

export const handler: Handler<'etcd-move-leader'> = {
  mode: 'act',
  expectedAlerts: (step) => leaderMoveAlerts(memberName(step.params.from)),
  /** `if-member-leads`: a member that does not lead has no leadership to hand over. */
  async beforeGate(step, ctx) {
    if (step.condition !== 'if-member-leads') return undefined;
    const view = await ctx.deps.etcd.observe();
    const from = ctx.resolveMember(step.params.from, view);
    const leads = from.found && from.member.id === view.leaderId;
    ctx.deps.journal.observe(step.id, 'condition', leads, {
      condition: step.condition,
      member: step.params.from.name,
      leads,
    });
    return leads ? undefined : { skip: `${step.params.from.name} does not lead` };
  },
  async act(step, ctx) {
    const view = await ctx.deps.etcd.observe();
    const from = ctx.resolveMember(step.params.from, view);
    if (!from.found)
      throw gateError(`etcd member ${step.params.from.name} is not in the member list`, remediationFor([]));
    if (view.leaderId !== from.member.id) {
      await ctx.steerProbe(view, from.member.id);
      return { moved: false, reason: 'it does not lead (any more)' };
    }
    const to = transferee(step.params.to, view, ctx);
    if (!to) {
      throw gateError(
        `no caught-up, healthy voter to move etcd leadership to (candidates: ${step.params.to.map((m) => m.name ?? m.kind).join(', ')})`,
        'wait until the new members are healthy voters (etcdctl endpoint status --cluster -w table), then run ferry run --resume',
      );
    }
    await ctx.steerProbe(view);
    await ctx.deps.etcd.moveLeader(to.id, ctx.action.signal);
    ctx.log(`etcd leadership moved from ${from.member.name} to ${to.name}`);
    await ctx.steerProbe(view, from.member.id, to.id);
    return { moved: true, from: from.member.id, to: to.id };
  },
};

/** The first candidate that is a started, healthy voter within MAX_TRANSFER_LAG of the leader. */
function transferee(
  candidates: readonly MemberRef[],
  view: EtcdView,
  ctx: StepContext,
): EtcdMemberInfo | undefined {
  const leaderStatus = view.statuses.find((s) => s.memberId === view.leaderId);
  const leaderIndex = leaderStatus?.ok ? BigInt(leaderStatus.raftIndex) : undefined;
  for (const ref of candidates) {
    const r = ctx.resolveMember(ref, view);
    if (!r.found || r.member.isLearner || !view.healthy.includes(r.member.id)) continue;
    const st = view.statuses.find((s) => s.memberId === r.member.id);
    if (leaderIndex !== undefined && st?.ok && leaderIndex - BigInt(st.raftAppliedIndex) > MAX_TRANSFER_LAG)
      continue;
    return r.member;
  }
  return undefined;
}
