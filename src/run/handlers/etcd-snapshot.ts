/**
 * `etcd-snapshot`: ferry writes the snapshot file itself when the run has an etcd client for it;
 * what it wrote (its file, size, sha256, whether it is encrypted) is the step's journaled result.
 */
import { dirname, isAbsolute, join } from 'node:path';
import type { Handler } from './context.js';

export const handler: Handler<'etcd-snapshot'> = {
  mode: 'act',
  async act(step, ctx) {
    const write = ctx.deps.etcdSnapshot;
    if (!write) return ctx.operatorAction();
    const f = step.params.file;
    const file = isAbsolute(f) ? f : join(dirname(ctx.deps.planFile), f);
    const written = await write(file, ctx.action.signal);
    return { ...written };
  },
};
