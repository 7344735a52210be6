/**
 * Kubernetes label selectors, one implementation for the audit (PodDisruptionBudgets of a
 * snapshot, suppression scopes) and the lab (its API server, admission and scheduler): the string
 * grammar of labels.Parse, metav1.LabelSelectorAsSelector for `{matchLabels, matchExpressions}`,
 * node-selector requirements, and their matching. Pure; neither core nor lab, so both import it.
 *
 * Two empties differ, as in the API: a selector with no requirements (`{}`, `""`) selects every
 * object; an absent (null) selector selects none.
 */

export type LabelRequirement =
  | { key: string; op: 'exists' | 'notExists' }
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

/** Requirements, all of which must hold (none: every object), or null: no object. */
export type LabelSelector = readonly LabelRequirement[] | null;

/** A selector that cannot be parsed; the messages are apimachinery's (the lab's API answers 400 with them). */
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

function checkKey(key: unknown, whole: string): string {
  const k = typeof key === 'string' ? key : '';
  const name = k.includes('/') ? k.slice(k.indexOf('/') + 1) : k;
  if (!KEY_RE.test(k) || name.length > 63 || k.length > 253 + 1 + 63) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: invalid label key "${String(key)}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
  return k;
}

function checkValue(value: unknown, whole: string): string {
  if (typeof value !== 'string' || !VALUE_RE.test(value) || value.length > 63) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: invalid label value: "${String(value)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
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

/** The string form (`app=web,tier in (a,b),!canary,n>3`, as kubectl -l takes it); "" selects everything. */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (selector.trim() === '') return [];
  return splitTopLevel(selector).map((raw) => {
    const s = raw.trim();
    if (s === '') throw new SelectorError(`unable to parse requirement: empty requirement in "${selector}"`);
    let m = /^!\s*(\S+)$/.exec(s);
    if (m) return { key: checkKey(m[1]!, s), op: 'notExists' } as const;
    m = /^(\S+?)\s+(in|notin)\s*\((.*)\)$/.exec(s);
    if (m) {
      if (m[3]!.trim() === '') {
        throw new SelectorError(
          `unable to parse requirement: ${s}: for 'in', 'notin' operators, values set can't be empty`,
        );
      }
      const values = m[3]!.split(',').map((v) => checkValue(v.trim(), s));
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
      return { key: checkKey(m[1]!, s), op: m[2] === '>' ? 'gt' : 'lt', value: integer(m[3], s) } as const;
    }
    if (/^\S+$/.test(s)) return { key: checkKey(s, s), op: 'exists' } as const;
    throw new SelectorError(
      `unable to parse requirement: found '${s}', expected: in, notin, =, ==, !=, gt, lt`,
    );
  });
}

function integer(v: unknown, whole: string): number {
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  }
  return Number(v);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The values of an In/NotIn requirement: a non-empty list of label values. */
function setValues(values: unknown, whole: string): string[] {
  if (!Array.isArray(values) || values.length === 0) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: for 'in', 'notin' operators, values set can't be empty`,
    );
  }
  return values.map((v) => checkValue(v, whole));
}

function noValues(values: unknown, whole: string): void {
  if (Array.isArray(values) && values.length > 0) {
    throw new SelectorError(
      `unable to parse requirement: ${whole}: values set must be empty for exists and does not exist`,
    );
  }
}

/** One requirement of `matchExpressions` (operators In, NotIn, Exists, DoesNotExist). */
function expressionRequirement(e: unknown): LabelRequirement {
  if (!isPlainObject(e)) throw new SelectorError('a label selector requirement must be an object');
  const whole = `${String(e.key)} ${String(e.operator)}`;
  const key = checkKey(e.key, whole);
  switch (e.operator) {
    case 'In':
      return { key, op: 'in', values: setValues(e.values, whole) };
    case 'NotIn':
      return { key, op: 'notin', values: setValues(e.values, whole) };
    case 'Exists':
      noValues(e.values, whole);
      return { key, op: 'exists' };
    case 'DoesNotExist':
      noValues(e.values, whole);
      return { key, op: 'notExists' };
    default:
      throw new SelectorError(`"${String(e.operator)}" is not a valid label selector operator`);
  }
}

/**
 * metav1.LabelSelector as the API server reads it: absent (undefined or null) selects nothing,
 * `{}` everything; anything the API would refuse (an unknown operator, In without values, an
 * invalid key or value) is a SelectorError.
 */
export function fromLabelSelector(sel: unknown): LabelRequirement[] | null {
  if (sel === undefined || sel === null) return null;
  if (!isPlainObject(sel)) throw new SelectorError('a label selector must be an object');
  const reqs: LabelRequirement[] = [];
  if (sel.matchLabels !== undefined && sel.matchLabels !== null) {
    if (!isPlainObject(sel.matchLabels)) throw new SelectorError('matchLabels must be a map of strings');
    for (const [key, value] of Object.entries(sel.matchLabels)) {
      const whole = `${key}=${String(value)}`;
      reqs.push({ key: checkKey(key, whole), op: 'eq', value: checkValue(value, whole) });
    }
  }
  if (sel.matchExpressions !== undefined && sel.matchExpressions !== null) {
    if (!Array.isArray(sel.matchExpressions)) throw new SelectorError('matchExpressions must be a list');
    for (const e of sel.matchExpressions) reqs.push(expressionRequirement(e));
  }
  return reqs;
}

/**
 * A label selector of an object read from a cluster or a snapshot: as fromLabelSelector, except
 * that one the API would have refused selects nothing rather than guess what it meant.
 */
export function readLabelSelector(sel: unknown): LabelSelector {
  try {
    return fromLabelSelector(sel);
  } catch (err) {
    if (err instanceof SelectorError) return null;
    throw err;
  }
}

/**
 * A NodeSelectorRequirement (node affinity `matchExpressions`, `matchFields`): the label
 * operators plus Gt and Lt, whose single value is an integer.
 */
export function nodeSelectorRequirement(r: unknown): LabelRequirement {
  if (isPlainObject(r) && (r.operator === 'Gt' || r.operator === 'Lt')) {
    const whole = `${String(r.key)} ${r.operator}`;
    const values = Array.isArray(r.values) ? r.values : [];
    if (values.length !== 1)
      throw new SelectorError(`unable to parse requirement: ${whole}: Gt and Lt take exactly one value`);
    return {
      key: checkKey(r.key, whole),
      op: r.operator === 'Gt' ? 'gt' : 'lt',
      value: integer(values[0], whole),
    };
  }
  return expressionRequirement(r);
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

/** Whether every requirement holds for `labels` (absent labels are none). */
export function matchesLabels(
  reqs: readonly LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  for (const r of reqs) if (!matchesOne(r, l)) return false;
  return true;
}

/** Whether the selector selects an object with these labels: a null selector selects none. */
export function selects(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  return sel !== null && matchesLabels(sel, labels);
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
