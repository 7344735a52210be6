/**
 * `drain-batch`: the nodes of a worker batch drained together (`--drain-concurrency` at a time).
 * They are cordoned again first: a resumed run finds them as the last one left them, and a pod
 * evicted from one must not land on another.
 */
import type { Handler } from './context.js';
import { drainWithJournal } from './drain-progress.js';

export const handler: Handler<'drain-batch'> = {
  mode: 'act',
  async act(step, ctx) {
    const names = step.params.nodes.map((n) => ctx.requireName(n.node));
    for (const n of names) await ctx.deps.kube.setUnschedulable(n, true);
    const r = await drainWithJournal(ctx, names);
    return {
      nodes: r.nodes.map((n) => ({ node: n.node, evicted: n.evicted.length, ms: n.ms })),
      podsMoved: r.nodes.reduce((a, n) => a + n.evicted.length, 0),
      replacementsMs: r.replacementsMs,
    };
  },
};
