/**
 * `provision`: the provisioner brings the Talos replacement to life; the name and address it
 * reports are bound (journalled), so later steps and a resumed run refer to the same machine.
 */
import type { Plan, StepParams } from '../../plan/model.js';
import type { ProvisionRequest } from '../../ports/run.js';
import type { Bindings } from '../bindings.js';
import type { Handler, StepContext } from './context.js';

export const handler: Handler<'provision'> = {
  mode: 'act',
  async act(step, ctx) {
    const r = await ctx.deps.provisioner.provision(provisionRequest(step.params, ctx), ctx.action);
    ctx.bind({ replaces: step.params.node.replaces, name: r.name, address: r.address });
    return { name: r.name, address: r.address };
  },
};

/** What the provisioner is told of one machine: the plan's facts and what the run learned. */
export function provisionRequest(
  p: StepParams['provision'],
  ctx: Pick<StepContext, 'deps' | 'bindings'>,
): ProvisionRequest {
  const { plan } = ctx.deps;
  return {
    replaces: p.node.replaces,
    name: ctx.bindings.nodeName(p.node) ?? null,
    address: ctx.bindings.nodeAddress(p.node),
    role: p.role,
    talosVersion: p.talosVersion,
    machineConfig: p.machineConfig,
    endpoint: plan.cluster.endpoint,
    claimed: claimedNames(plan, ctx.bindings, p.node.replaces),
  };
}

/** Every node the plan replaces, and the names of the other replacements known so far. */
export function claimedNames(plan: Plan, bindings: Bindings, replaces: string): string[] {
  const bound = bindings
    .all()
    .filter((b) => b.replaces !== replaces && b.name)
    .map((b) => b.name!);
  const planned = [...plan.controlPlanes, ...plan.workers]
    .map((x) => x.replacement)
    .filter((r) => r.replaces !== replaces && r.name)
    .map((r) => r.name!);
  return [
    ...new Set([
      ...plan.controlPlanes.map((c) => c.node),
      ...plan.workers.map((w) => w.node),
      ...planned,
      ...bound,
    ]),
  ];
}
