/**
 * `scale-workload` (--surge-replicas): sets a workload's replicas through the scale subresource,
 * one more before its first node drains, back after its last. A run that stops in between gives
 * the count back (restoreReplicas).
 */
import { workloadLabel } from '../../plan/scale-steps.js';
import type { ReplicasRestored } from '../resume.js';
import type { Handler, StopHook } from './context.js';

/** Gives back the replica count of every workload the run scaled up and has not restored yet. */
const restoreReplicas: StopHook = {
  what: 'replica counts',
  async giveBack(ctx) {
    for (const s of ctx.steps) {
      if (s.kind !== 'scale-workload' || s.params.purpose !== 'surge' || !ctx.finished.has(s.id)) continue;
      const w = s.params.workload;
      const label = workloadLabel(w);
      const restored = ctx.steps.some(
        (r) =>
          r.kind === 'scale-workload' &&
          r.params.purpose === 'restore' &&
          workloadLabel(r.params.workload) === label &&
          ctx.finished.has(r.id),
      );
      if (restored) continue;
      await ctx.deps.kube.scaleWorkload(w.kind, w.namespace, w.name, s.params.from);
      ctx.deps.journal.observe(ctx.stepId, 'replicas-restored', true, {
        workload: label,
        replicas: s.params.from,
      } satisfies ReplicasRestored);
      ctx.log(`restored: ${label} runs ${s.params.from} replicas again, as before the run scaled it up`);
    }
  },
};

export const handler: Handler<'scale-workload'> = {
  mode: 'act',
  onStop: restoreReplicas,
  async act(step, ctx) {
    const { workload: w, replicas } = step.params;
    await ctx.deps.kube.scaleWorkload(w.kind, w.namespace, w.name, replicas);
    ctx.log(`${w.kind} ${w.namespace}/${w.name}: spec.replicas ${replicas}`);
    return { workload: `${w.kind} ${w.namespace}/${w.name}`, replicas };
  },
};
