/** `cordon`: the node takes no new pods (the state before is recorded, and given back on a stop). */
import type { Handler } from './context.js';
import { recordCordonBefore, restoreCordons } from './cordon-state.js';

export const handler: Handler<'cordon'> = {
  mode: 'act',
  concurrent: true,
  beforeGate: recordCordonBefore,
  onStop: restoreCordons,
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    await ctx.deps.kube.setUnschedulable(name, true);
    return { node: name };
  },
};
