/**
 * Field selectors with the grammar and matching rules of k8s.io/apimachinery (fields.ParseSelector).
 * Label selectors are src/util/label-selector.ts, which the audit shares. Pure.
 */
import { SelectorError } from '../../util/label-selector.js';
import { metaOf, valueAt } from './object.js';

export type FieldRequirement = { field: string; op: 'eq' | 'neq'; value: string };

/** Splits at unescaped `sep`; `\` escapes the next character. */
function splitEscaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && i + 1 < s.length) {
      cur += ch + s[i + 1];
      i++;
    } else if (ch === sep) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

const unescapeValue = (s: string): string => s.replace(/\\(.)/g, '$1');

export function parseFieldSelector(selector: string): FieldRequirement[] {
  if (selector.trim() === '') return [];
  return splitEscaped(selector, ',').map((raw) => {
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(raw.trim());
    if (!m) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${raw}'`);
    return { field: m[1]!.trim(), op: m[2] === '!=' ? 'neq' : 'eq', value: unescapeValue(m[3]!) };
  });
}

/** Field values as the real field-label conversion renders them ('' when absent). */
export function fieldValue(obj: unknown, field: string): string {
  const v =
    field === 'metadata.name' || field === 'metadata.namespace'
      ? metaOf(obj)[field.slice(9)]
      : valueAt(obj, field);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : String(v);
}

export function matchesFields(reqs: FieldRequirement[], obj: unknown): boolean {
  return reqs.every((r) => (fieldValue(obj, r.field) === r.value) === (r.op === 'eq'));
}
