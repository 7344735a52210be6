/** `drain`: every pod drain would evict goes through the Eviction API (PDBs respected), never deleted. */
import type { Handler } from './context.js';
import { drainWithJournal } from './drain-progress.js';

export const handler: Handler<'drain'> = {
  mode: 'act',
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    const r = await drainWithJournal(ctx, [name]);
    return { node: name, evicted: r.nodes[0]?.evicted ?? [] };
  },
};
