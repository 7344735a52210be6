/**
 * `lb-add` / `lb-remove` share this: the load-balancer command (or the lab's) changes the
 * backend, then the run waits for the load balancer to settle; without one, a person does it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { StepOf } from '../../plan/model.js';
import type { ActionResult, StepContext } from './context.js';

export async function changeBackend(
  step: StepOf<'lb-add'> | StepOf<'lb-remove'>,
  ctx: StepContext,
): Promise<ActionResult> {
  const p = step.params;
  const lb = ctx.deps.lb;
  if (!lb) return ctx.operatorAction();
  const name = ctx.requireName(p.node);
  const ref = { node: name, address: ctx.bindings.nodeAddress(p.node) ?? p.address, port: p.port };
  if (step.kind === 'lb-add') await lb.add(ref, ctx.action);
  else await lb.remove(ref, ctx.action);
  const settle = Math.min(p.settleSeconds, ctx.options.lbSettleSeconds ?? p.settleSeconds);
  if (settle > 0) {
    ctx.log(`waiting ${settle} s for the load balancer to settle`);
    await sleep(settle * 1000, undefined, { signal: ctx.action.signal });
  }
  return { backend: ref };
}
