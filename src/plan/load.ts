/**
 * Reading plan.json back (for `ferry run`): format version, kind, and the structure the
 * orchestrator relies on (unique step ids, known step kinds, phases in order). Anything else is
 * trusted as written by buildPlan.
 */
import { readFile } from 'node:fs/promises';
import { inputError } from '../errors.js';
import { PLAN_FORMAT_VERSION, PLAN_KIND, type Plan, STEP_KINDS } from './model.js';

const REMEDIATION =
  'give the plan.json written by `ferry plan ... -o plan.json` (plan it again with this ferry if needed)';

export function parsePlan(text: string, file: string): Plan {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw inputError('the plan is not valid JSON', { file }, REMEDIATION, cause);
  }
  const p = doc as Partial<Plan> | null;
  if (!p || typeof p !== 'object' || p.kind !== PLAN_KIND) {
    throw inputError(`not a ferry plan (kind is not ${PLAN_KIND})`, { file, field: 'kind' }, REMEDIATION);
  }
  if (p.formatVersion !== PLAN_FORMAT_VERSION) {
    throw inputError(
      `plan format ${String(p.formatVersion)} is not the format ${PLAN_FORMAT_VERSION} this ferry reads`,
      { file, field: 'formatVersion' },
      REMEDIATION,
    );
  }
  if (!Array.isArray(p.phases))
    throw inputError('the plan has no phases', { file, field: 'phases' }, REMEDIATION);
  const ids = new Set<string>();
  p.phases.forEach((phase, i) => {
    if (phase?.id !== i || !Array.isArray(phase.steps)) {
      throw inputError(`phase ${i} is malformed`, { file, field: `phases[${i}]` }, REMEDIATION);
    }
    phase.steps.forEach((s, j) => {
      const field = `phases[${i}].steps[${j}]`;
      if (typeof s?.id !== 'string' || ids.has(s.id))
        throw inputError(
          `step id missing or repeated: ${String(s?.id)}`,
          { file, field: `${field}.id` },
          REMEDIATION,
        );
      if (!(STEP_KINDS as readonly string[]).includes(s.kind))
        throw inputError(
          `unknown step kind "${String(s.kind)}"`,
          { file, field: `${field}.kind` },
          REMEDIATION,
        );
      ids.add(s.id);
    });
  });
  return p as Plan;
}

export async function readPlan(path: string): Promise<Plan> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw inputError('cannot read the plan', { file: path }, REMEDIATION, cause);
  }
  return parsePlan(text, path);
}
