/** `etcd-snapshot`: ferry writes the snapshot file itself when the run has an etcd client for it. */
import { dirname, isAbsolute, join } from 'node:path';
import type { Handler } from './context.js';

export const handler: Handler<'etcd-snapshot'> = {
  mode: 'act',
  async act(step, ctx) {
    const write = ctx.deps.etcdSnapshot;
    if (!write) return ctx.operatorAction();
    const f = step.params.file;
    const file = isAbsolute(f) ? f : join(dirname(ctx.deps.planFile), f);
    await write(file, ctx.action.signal);
    return { file };
  },
};
