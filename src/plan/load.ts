/**
 * Reading plan.json back (for `ferry run`). A plan is the operator's contract: what runs is what
 * was reviewed. So the loader refuses (exit 2) a plan whose content does not match its digest,
 * naming what differs (integrity.ts), and a plan that does not have the shape and the order
 * `ferry run` relies on even when the digest matches (validate.ts, invariants.ts): a plan written
 * by a buggy ferry is refused too.
 */
import { inputError } from '../errors.js';
import { jsonError } from '../snapshot/yaml.js';
import { readTextFile } from '../util/input-file.js';
import { verifyIntegrity } from './integrity.js';
import type { Issue } from './issues.js';
import { PLAN_FORMAT_VERSION, PLAN_KIND, type Plan } from './model.js';
import { validatePlan } from './validate.js';

const REMEDIATION =
  'give the plan.json written by `ferry plan ... -o plan.json` (plan it again with this ferry if needed)';

const REPLAN =
  'plan again with `ferry plan SNAPSHOT -o plan.json` and review the new plan; never edit plan.json by hand: `ferry run` executes exactly the plan that was reviewed, or nothing';

const BUG =
  'plan again with `ferry plan SNAPSHOT -o plan.json` (never edit plan.json by hand); if ferry plan wrote this file as it is, that is a ferry bug: please report it';

/** Lines shown of a long list; the rest is counted. */
const SHOWN = 15;

function lines(items: string[]): string {
  const shown = items.slice(0, SHOWN).map((l) => `\n  - ${l}`);
  if (items.length > SHOWN) shown.push(`\n  … and ${items.length - SHOWN} more`);
  return shown.join('');
}

function place(i: Issue): string {
  return `${i.path}${i.step ? ` (${i.step})` : ''}`;
}

/** One line per issue; the same problem in many places (a member id everywhere) once, with its places. */
function describeIssues(issues: Issue[]): string[] {
  const byMessage = new Map<string, Issue[]>();
  for (const i of issues) byMessage.set(i.message, [...(byMessage.get(i.message) ?? []), i]);
  return [...byMessage].map(([message, all]) => {
    if (all.length === 1) return `${place(all[0]!)}: ${message}`;
    const more = all.length > 3 ? `, and ${all.length - 3} more places` : '';
    return `${message}: at ${all.slice(0, 3).map(place).join(', ')}${more}`;
  });
}

export function parsePlan(text: string, file: string): Plan {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw jsonError(text, cause as Error, { file }, REMEDIATION);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || (doc as Plan).kind !== PLAN_KIND) {
    throw inputError(`not a ferry plan (kind is not ${PLAN_KIND})`, { file, field: 'kind' }, REMEDIATION);
  }
  const p = doc as Record<string, unknown>;
  if (p['formatVersion'] !== PLAN_FORMAT_VERSION) {
    throw inputError(
      `plan format ${String(p['formatVersion'])} is not the format ${PLAN_FORMAT_VERSION} this ferry reads`,
      { file, field: 'formatVersion' },
      REMEDIATION,
    );
  }
  const issues = validatePlan(p);
  const mismatch = verifyIntegrity(p);
  if (mismatch) {
    const broken =
      issues.length > 0 ? `\nand it breaks rules ferry run relies on:${lines(describeIssues(issues))}` : '';
    throw inputError(
      `${mismatch.summary}${lines(mismatch.differences.map((d) => d.message))}${broken}`,
      { file, field: mismatch.differences[0]?.path ?? 'integrity.digest' },
      REPLAN,
    );
  }
  if (issues.length > 0) {
    throw inputError(
      `the plan breaks ${issues.length === 1 ? 'a rule' : `${issues.length} rules`} ferry run relies on:${lines(describeIssues(issues))}`,
      { file, field: issues[0]!.path },
      BUG,
    );
  }
  return doc as Plan;
}

/** `shown`: the path as the user typed it, for messages. */
export async function readPlan(path: string, shown: string = path): Promise<Plan> {
  const text = await readTextFile(path, { shown, what: 'the plan', provide: REMEDIATION });
  return parsePlan(text, path);
}
