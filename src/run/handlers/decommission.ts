/** `decommission`: the provisioner resets and powers off the old machine: there is no way back. */

import { nodeLeavingAlerts } from '../../knowledge/expected-alerts.js';
import type { Handler } from './context.js';

export const handler: Handler<'decommission'> = {
  mode: 'act',
  pointOfNoReturn: true,
  concurrent: true,
  expectedAlerts: (step, ctx) =>
    nodeLeavingAlerts(
      ctx.requireName(step.params.node),
      `${ctx.requireName(step.params.node)} is decommissioned`,
    ),
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    const role = ctx.deps.plan.controlPlanes.some((c) => c.node === name) ? 'controlplane' : 'worker';
    await ctx.deps.provisioner.decommission(
      { node: name, address: ctx.bindings.nodeAddress(step.params.node), role },
      ctx.action,
    );
    return { node: name };
  },
};
