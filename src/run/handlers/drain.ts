/** `drain`: every pod drain would evict goes through the Eviction API (PDBs respected), never deleted. */
import type { Handler } from './context.js';

export const handler: Handler<'drain'> = {
  mode: 'act',
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    const r = await ctx.deps.kube.drain(name, {
      timeoutMs: ctx.action.timeoutMs,
      signal: ctx.action.signal,
      onProgress: (p) => {
        if (p.kind === 'evicted') ctx.log(`evicted ${p.pod}`);
        else if (p.kind === 'blocked')
          ctx.log(
            `eviction of ${p.pod} refused${p.pdb ? ` by PodDisruptionBudget ${p.pdb}` : ''}: ${p.message}`,
          );
      },
    });
    return { node: name, evicted: r.evicted };
  },
};
