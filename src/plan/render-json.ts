import type { Plan } from './model.js';

/**
 * plan.json: the orchestrator's input. Stable key order (as built), two-space indent; the
 * integrity record last, one line per step fingerprint (it is for ferry run to read, and a
 * hundred-step plan would otherwise grow by a thousand lines).
 */
export function renderPlanJson(plan: Plan): string {
  const { integrity, ...content } = plan;
  const body = JSON.stringify(content, null, 2);
  const record = [
    `    "digest": ${JSON.stringify(integrity.digest)}`,
    `    "fields": ${JSON.stringify(integrity.fields)}`,
    `    "phases": ${JSON.stringify(integrity.phases)}`,
    `    "steps": [${integrity.steps.map((s) => `\n      ${JSON.stringify(s)}`).join(',')}\n    ]`,
  ].join(',\n');
  return `${body.slice(0, -2)},\n  "integrity": {\n${record}\n  }\n}\n`;
}
