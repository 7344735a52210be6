import type { Plan } from './model.js';

/** plan.json: the orchestrator's input. Stable key order (as built), two-space indent. */
export function renderPlanJson(plan: Plan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}
