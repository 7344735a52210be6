/**
 * `provision-detect`: one machine of a requested worker batch, bound (name, address, journalled)
 * once its Node registers. The batch's detections run side by side; the provisioner keeps two of
 * them from taking the same machine.
 */
import { allSteps } from '../../plan/model.js';
import { gateError } from '../../ports/stop.js';
import type { Handler } from './context.js';
import { provisionRequest } from './provision.js';

export const handler: Handler<'provision-detect'> = {
  mode: 'act',
  concurrent: true,
  async act(step, ctx) {
    const p = step.params;
    const known = ctx.bindings.get(p.node.replaces);
    // The request bound it (the provisioner said its name when it started it).
    if (known?.name) return { name: known.name, address: known.address ?? null, boundBy: 'request' };
    const { provisioner } = ctx.deps;
    if (!provisioner.detect) {
      const request = allSteps(ctx.deps.plan).find(
        (s) =>
          s.kind === 'provision-request' &&
          s.params.machines.some((m) => m.node.replaces === p.node.replaces),
      );
      throw gateError(
        `the ${provisioner.kind} provisioner bound no machine for ${p.node.replaces} when the batch was requested, and cannot look for one`,
        `check that no machine for ${p.node.replaces} was started, then ask again: ferry run PLAN --resume --retry ${request?.id ?? 'STEP'}`,
      );
    }
    const r = await provisioner.detect(provisionRequest(p, ctx), ctx.action);
    ctx.bind({ replaces: p.node.replaces, name: r.name, address: r.address });
    return { name: r.name, address: r.address, boundBy: 'detect' };
  },
};
