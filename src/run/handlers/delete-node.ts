/** `delete-node`: the old machine's Node object goes once the machine is gone. */
import type { Handler } from './context.js';

export const handler: Handler<'delete-node'> = {
  mode: 'act',
  pointOfNoReturn: true,
  concurrent: true,
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    await ctx.deps.kube.deleteNode(name);
    return { node: name };
  },
};
