/**
 * `provision-request`: every machine of a worker batch asked for at once, so the batch waits about
 * one boot, not one per machine. What the provisioner already knows of a machine (lab, exec: its
 * name and address) is bound as it starts; the rest its `provision-detect` step binds as it
 * registers. Asked again (a resume, --retry), only machines not bound yet are asked for. A
 * provisioner that cannot ask ahead provisions the batch here one machine at a time.
 */
import type { Handler } from './context.js';
import { provisionRequest } from './provision.js';

export const handler: Handler<'provision-request'> = {
  mode: 'act',
  async act(step, ctx) {
    const { provisioner } = ctx.deps;
    const all = step.params.machines.map((m) => provisionRequest(m, ctx));
    // Bound by an earlier attempt of this step or by its detection: that machine exists.
    const reqs = all.filter((r) => !ctx.bindings.get(r.replaces)?.name);
    const started: Record<string, string> = {};
    const bind = (replaces: string, r: { name: string; address: string | null }) => {
      ctx.bind({ replaces, name: r.name, address: r.address });
      started[replaces] = r.name;
    };
    if (provisioner.requestBatch)
      await provisioner.requestBatch(reqs, ctx.action, (req, r) => bind(req.replaces, r));
    else for (const req of reqs) bind(req.replaces, await provisioner.provision(req, ctx.action));
    return { requested: reqs.map((r) => r.replaces), alreadyBound: all.length - reqs.length, started };
  },
};
