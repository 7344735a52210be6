/**
 * The cordon state a node had before the run touched it, recorded by its first cordon or drain
 * step and given back when the run stops (unless the node's swap passed its point of no return).
 */
import type { StepOf } from '../../plan/model.js';
import type { CordonRestored } from '../resume.js';
import type { StepContext, StopHook } from './context.js';

/** Journals the node's cordon state once, before the first step that may change it. */
export async function recordCordonBefore(
  step: StepOf<'cordon' | 'drain'>,
  ctx: StepContext,
): Promise<undefined> {
  const name = ctx.bindings.nodeName(step.params.node);
  if (!name) return;
  const j = ctx.deps.journal;
  const seen = j
    .observations({ purpose: 'cordon-before' })
    .some((o) => (o.data as { node: string }).node === name);
  if (seen) return;
  const n = await ctx.deps.kube.getNode(name);
  if (!n) return;
  j.observe(step.id, 'cordon-before', null, {
    node: name,
    subject: step.subject,
    unschedulable: n.unschedulable,
  });
}

/** Gives back the cordon state recorded before the run touched a node, unless its swap passed the point of no return. */
export const restoreCordons: StopHook = {
  what: 'cordon state',
  async giveBack(ctx) {
    const j = ctx.deps.journal;
    for (const o of j.observations({ purpose: 'cordon-before' })) {
      const { node, subject, unschedulable } = o.data as {
        node: string;
        subject: string;
        unschedulable: boolean;
      };
      if (unschedulable) continue;
      // Its member or machine is gone: a schedulable node there would only attract pods to a dying machine.
      const gone = ctx.steps.some(
        (s) => s.subject === subject && ctx.pointOfNoReturn(s) && ctx.finished.has(s.id),
      );
      if (gone) continue;
      const n = await ctx.deps.kube.getNode(node);
      if (!n?.unschedulable) continue;
      await ctx.deps.kube.setUnschedulable(node, false);
      j.observe(ctx.stepId, 'cordon-restored', true, { node, subject } satisfies CordonRestored);
      ctx.log(`restored: ${node} is schedulable again, as it was before the run cordoned it`);
    }
  },
};
