/**
 * A step carried out by a person: the lab (in a rehearsal) may perform it; otherwise its commands
 * are printed for the operator, and the step's verification waits for the outcome.
 */
import type { Step } from '../../plan/model.js';
import type { StepContext } from './context.js';

export async function performByOperator(step: Step, ctx: StepContext): Promise<Record<string, unknown>> {
  const node = step.target.node ? ctx.bindings.nodeName(step.target.node) : undefined;
  const operator = ctx.deps.operator;
  if (operator.perform && (await operator.perform(step, { ...ctx.action, node })))
    return { performedBy: 'lab' };
  const lines = [
    step.action.summary,
    ...step.action.commands.map(
      (c) =>
        `${c.where.kind === 'node' ? `[on ${c.where.node}] ` : ''}${c.run}${c.note ? `   # ${c.note}` : ''}`,
    ),
  ];
  operator.instruct(step.id, lines);
  return { performedBy: 'operator' };
}
