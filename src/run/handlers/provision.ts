/**
 * `provision`: the provisioner brings the Talos replacement to life; the name and address it
 * reports are bound (journalled), so later steps and a resumed run refer to the same machine.
 */
import type { Plan } from '../../plan/model.js';
import type { Bindings } from '../bindings.js';
import type { Handler } from './context.js';

export const handler: Handler<'provision'> = {
  mode: 'act',
  async act(step, ctx) {
    const p = step.params;
    const { plan, provisioner } = ctx.deps;
    const r = await provisioner.provision(
      {
        replaces: p.node.replaces,
        name: ctx.bindings.nodeName(p.node) ?? null,
        address: ctx.bindings.nodeAddress(p.node),
        role: p.role,
        talosVersion: p.talosVersion,
        machineConfig: p.machineConfig,
        endpoint: plan.cluster.endpoint,
        claimed: claimedNames(plan, ctx.bindings, p.node.replaces),
      },
      ctx.action,
    );
    ctx.bind({ replaces: p.node.replaces, name: r.name, address: r.address });
    return { name: r.name, address: r.address };
  },
};

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
