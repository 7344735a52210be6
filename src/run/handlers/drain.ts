/**
 * `drain`: every pod drain would evict goes through the Eviction API (PDBs respected), never
 * deleted. The node's cordon state before is recorded, and given back on a stop.
 */
import type { Handler } from './context.js';
import { recordCordonBefore, restoreCordons } from './cordon-state.js';
import { drainWithJournal } from './drain-progress.js';

export const handler: Handler<'drain'> = {
  mode: 'act',
  beforeGate: recordCordonBefore,
  onStop: restoreCordons,
  async act(step, ctx) {
    const name = ctx.requireName(step.params.node);
    const r = await drainWithJournal(ctx, [name]);
    return { node: name, evicted: r.nodes[0]?.evicted ?? [] };
  },
};
