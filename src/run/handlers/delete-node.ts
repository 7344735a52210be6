/** `delete-node`: the old machine's Node object goes once the machine is gone. */

import { nodeLeavingAlerts } from '../../knowledge/expected-alerts.js';
import type { Handler } from './context.js';

export const handler: Handler<'delete-node'> = {
  mode: 'act',
  pointOfNoReturn: true,
  concurrent: true,
  expectedAlerts: (step, ctx) =>
    nodeLeavingAlerts(
      ctx.requireName(step.params.node),
      `the Node ${ctx.requireName(step.params.node)} is deleted`,
    ),
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    await ctx.deps.kube.deleteNode(name);
    return { node: name };
  },
};
