/**
 * Label and field selectors with the grammar and matching rules of k8s.io/apimachinery
 * (labels.Parse, fields.ParseSelector, metav1.LabelSelectorAsSelector). Pure.
 */
import { isPlainObject, metaOf, valueAt } from './object.js';

export type LabelRequirement =
  | { key: string; op: 'exists' | 'notExists' }
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

/** A selector that cannot be parsed: the server answers 400 BadRequest with this message. */
export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

const NAME = '[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?';
const PREFIX = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const KEY_RE = new RegExp(`^(${PREFIX}/)?${NAME}$`);
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, whole: string): string {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!KEY_RE.test(key) || name.length > 63 || key.length > 253 + 1 + 63) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
  return key;
}

function checkValue(value: string, whole: string): string {
  if (!VALUE_RE.test(value) || value.length > 63) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: invalid label value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
  return value;
}

/** Splits at commas outside parentheses. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new SelectorError(`unable to parse requirement: unbalanced ')' in "${s}"`);
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) throw new SelectorError(`unable to parse requirement: unbalanced '(' in "${s}"`);
  parts.push(cur);
  return parts;
}

export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (selector.trim() === '') return [];
  return splitTopLevel(selector).map((raw) => {
    const s = raw.trim();
    if (s === '') throw new SelectorError(`unable to parse requirement: empty requirement in "${selector}"`);
    let m = /^!\s*(\S+)$/.exec(s);
    if (m) return { key: checkKey(m[1]!, s), op: 'notExists' } as const;
    m = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(s);
    if (m) {
      const values = m[3]!
        .split(',')
        .map((v) => v.trim())
        .map((v) => checkValue(v, s));
      if (values.length === 1 && values[0] === '' && m[3]!.trim() === '') {
        throw new SelectorError(
          `unable to parse requirement: ${s}: for 'in', 'notin' operators, values set can't be empty`,
        );
      }
      return { key: checkKey(m[1]!, s), op: m[2] as 'in' | 'notin', values };
    }
    m = /^([^=!<>\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(s);
    if (m) {
      return {
        key: checkKey(m[1]!, s),
        op: m[2] === '!=' ? 'neq' : 'eq',
        value: checkValue(m[3]!, s),
      } as const;
    }
    m = /^([^=!<>\s]+)\s*([<>])\s*(\S+)$/.exec(s);
    if (m) {
      const n = Number(m[3]);
      if (!Number.isInteger(n)) {
        throw new SelectorError(
          `unable to parse requirement: ${s}: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      }
      return { key: checkKey(m[1]!, s), op: m[2] === '>' ? 'gt' : 'lt', value: n } as const;
    }
    if (/^\S+$/.test(s)) return { key: checkKey(s, s), op: 'exists' } as const;
    throw new SelectorError(
      `unable to parse requirement: found '${s}', expected: in, notin, =, ==, !=, gt, lt`,
    );
  });
}

function matchesOne(r: LabelRequirement, l: Record<string, string>): boolean {
  const has = Object.hasOwn(l, r.key);
  const v = l[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case 'notExists':
      return !has;
    case 'eq':
      return has && v === r.value;
    case 'neq':
      return !has || v !== r.value;
    case 'in':
      return has && r.values.includes(v!);
    case 'notin':
      return !has || !r.values.includes(v!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(v!)) return false;
      const n = Number(v);
      return r.op === 'gt' ? n > r.value : n < r.value;
    }
  }
}

export function matchesLabels(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => matchesOne(r, l));
}

type LabelSelectorObject = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};

/**
 * metav1.LabelSelector → requirements. `undefined`/`null` selects nothing (returns undefined);
 * `{}` selects everything. An unknown operator is an error.
 */
export function fromLabelSelector(sel: unknown): LabelRequirement[] | undefined {
  if (sel === undefined || sel === null) return undefined;
  if (!isPlainObject(sel)) throw new SelectorError('a label selector must be an object');
  const s = sel as LabelSelectorObject;
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(s.matchLabels ?? {})) reqs.push({ key, op: 'eq', value });
  for (const e of s.matchExpressions ?? []) {
    switch (e.operator) {
      case 'In':
        reqs.push({ key: e.key, op: 'in', values: e.values ?? [] });
        break;
      case 'NotIn':
        reqs.push({ key: e.key, op: 'notin', values: e.values ?? [] });
        break;
      case 'Exists':
        reqs.push({ key: e.key, op: 'exists' });
        break;
      case 'DoesNotExist':
        reqs.push({ key: e.key, op: 'notExists' });
        break;
      default:
        throw new SelectorError(`"${e.operator}" is not a valid label selector operator`);
    }
  }
  return reqs;
}

function requirementString(r: LabelRequirement): string {
  switch (r.op) {
    case 'exists':
      return r.key;
    case 'notExists':
      return `!${r.key}`;
    case 'eq':
      return `${r.key}=${r.value}`;
    case 'neq':
      return `${r.key}!=${r.value}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.op} (${[...r.values].sort().join(',')})`;
    case 'gt':
      return `${r.key}>${r.value}`;
    case 'lt':
      return `${r.key}<${r.value}`;
  }
}

/** The string form of a metav1.LabelSelector (what a Scale's status.selector carries). */
export function labelSelectorString(sel: unknown): string {
  return (fromLabelSelector(sel) ?? []).map(requirementString).join(',');
}

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
