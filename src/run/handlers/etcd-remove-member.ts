/**
 * `etcd-remove-member`: MemberRemove, through another member, after the probe has been steered off
 * the member. A member already gone (removed between the gate and now) is nothing to send.
 */

import { memberRemovedAlerts } from '../../knowledge/expected-alerts.js';
import type { Handler } from './context.js';
import { memberName } from './context.js';

export const handler: Handler<'etcd-remove-member'> = {
  mode: 'act',
  pointOfNoReturn: true,
  expectedAlerts: (step) => memberRemovedAlerts(memberName(step.params.member)),
  async act(step, ctx) {
    const view = await ctx.deps.etcd.observe();
    const ref = step.params.member;
    const r = ctx.resolveMember(ref, view);
    if (!r.found) {
      return { removed: false, reason: `${ref.name} is no longer listed${r.note ? ` (${r.note})` : ''}` };
    }
    await ctx.steerProbe(view, r.member.id);
    const outcome = await ctx.deps.etcd.removeMember(r.member.id, ctx.action.signal);
    ctx.log(
      `etcd member ${r.member.name} (${r.member.id}) ${outcome === 'removed' ? 'removed' : 'was already gone'}`,
    );
    try {
      await ctx.steerProbe(await ctx.deps.etcd.observe());
    } catch {
      // the probe keeps its endpoints; the verification reports etcd trouble
    }
    return { memberId: r.member.id, outcome };
  },
};
