import { usageError } from '../errors.js';
import type { Plan } from './model.js';
import { renderPlanHtml } from './render-html.js';
import { renderPlanJson } from './render-json.js';
import { renderPlanMd } from './render-md.js';

export const PLAN_FORMATS = ['json', 'md', 'html'] as const;
export type PlanFormat = (typeof PLAN_FORMATS)[number];

export function renderPlan(plan: Plan, format: PlanFormat): string {
  switch (format) {
    case 'json':
      return renderPlanJson(plan);
    case 'md':
      return renderPlanMd(plan);
    case 'html':
      return renderPlanHtml(plan);
  }
}

/**
 * The format of an output file from its extension (plan.json, runbook.md, plan.html), or the
 * explicit --format, which must agree with the extension when both are given.
 */
export function formatFor(file: string | undefined, explicit: string | undefined): PlanFormat {
  const fromFlag = explicit === undefined ? undefined : parseFormat(explicit);
  const m = file ? /\.(json|md|markdown|html?)$/i.exec(file) : null;
  const ext = m?.[1]?.toLowerCase();
  const fromExt: PlanFormat | undefined =
    ext === 'json'
      ? 'json'
      : ext === 'md' || ext === 'markdown'
        ? 'md'
        : ext === 'html' || ext === 'htm'
          ? 'html'
          : undefined;
  if (fromFlag && fromExt && fromFlag !== fromExt) {
    throw usageError(
      `--format ${fromFlag} contradicts the extension of ${file}`,
      `name the file .${fromFlag}, or drop --format`,
    );
  }
  if (fromFlag) return fromFlag;
  if (fromExt) return fromExt;
  if (file !== undefined) {
    throw usageError(
      `cannot tell the format of ${file} from its extension`,
      'name it plan.json, plan.md or plan.html, or pass --format json|md|html',
    );
  }
  return 'md';
}

function parseFormat(v: string): PlanFormat {
  if ((PLAN_FORMATS as readonly string[]).includes(v)) return v as PlanFormat;
  throw usageError(`--format must be one of ${PLAN_FORMATS.join(', ')}; got "${v}"`);
}
