/**
 * `scale-workload` (--surge-replicas): sets a workload's replicas through the scale subresource,
 * one more before its first node drains, back after its last. A run that stops in between gives
 * the count back (orchestrator.ts).
 */
import type { Handler } from './context.js';

export const handler: Handler<'scale-workload'> = {
  mode: 'act',
  async act(step, ctx) {
    const { workload: w, replicas } = step.params;
    await ctx.deps.kube.scaleWorkload(w.kind, w.namespace, w.name, replicas);
    ctx.log(`${w.kind} ${w.namespace}/${w.name}: spec.replicas ${replicas}`);
    return { workload: `${w.kind} ${w.namespace}/${w.name}`, replicas };
  },
};
