/**
 * Kubernetes label selectors, parsed once into a matcher: the structured form (PDB/workload
 * `spec.selector`) and the string form (`app=web,tier in (a,b),!canary`) used by suppressions.
 */

export type Requirement =
  | { op: 'In'; key: string; values: string[] }
  | { op: 'NotIn'; key: string; values: string[] }
  | { op: 'Exists'; key: string }
  | { op: 'DoesNotExist'; key: string };

/** A parsed selector. `nothing` matches no object (a null selector); `[]` matches every object. */
export type Selector = { kind: 'nothing' } | { kind: 'requirements'; requirements: Requirement[] };

export function matches(sel: Selector, labels: Record<string, string> | undefined): boolean {
  if (sel.kind === 'nothing') return false;
  const l = labels ?? {};
  for (const r of sel.requirements) {
    const has = Object.hasOwn(l, r.key);
    switch (r.op) {
      case 'In':
        if (!has || !r.values.includes(l[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && r.values.includes(l[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * From a structured LabelSelector (`{matchLabels, matchExpressions}`). Absent → `nothing`, as
 * the API treats a PDB with a null selector; `{}` → every pod (policy/v1 semantics).
 * Unknown operators make the selector `nothing` rather than guess.
 */
export function fromLabelSelector(sel: unknown): Selector {
  if (sel === undefined || sel === null || typeof sel !== 'object') return { kind: 'nothing' };
  const s = sel as { matchLabels?: unknown; matchExpressions?: unknown };
  const requirements: Requirement[] = [];
  if (s.matchLabels && typeof s.matchLabels === 'object') {
    for (const [key, value] of Object.entries(s.matchLabels as Record<string, unknown>)) {
      requirements.push({ op: 'In', key, values: [String(value)] });
    }
  }
  if (Array.isArray(s.matchExpressions)) {
    for (const e of s.matchExpressions as { key?: unknown; operator?: unknown; values?: unknown }[]) {
      if (typeof e?.key !== 'string') return { kind: 'nothing' };
      const values = Array.isArray(e.values) ? e.values.map(String) : [];
      switch (e.operator) {
        case 'In':
        case 'NotIn':
          requirements.push({ op: e.operator, key: e.key, values });
          break;
        case 'Exists':
        case 'DoesNotExist':
          requirements.push({ op: e.operator, key: e.key });
          break;
        default:
          return { kind: 'nothing' };
      }
    }
  }
  return { kind: 'requirements', requirements };
}

/** A selector from a plain map, as in Service `spec.selector` (empty map = nothing, per Services). */
export function fromMap(map: Record<string, string> | undefined): Selector {
  if (!map || Object.keys(map).length === 0) return { kind: 'nothing' };
  return {
    kind: 'requirements',
    requirements: Object.entries(map).map(([key, v]) => ({ op: 'In' as const, key, values: [v] })),
  };
}

export class SelectorSyntaxError extends Error {}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

/** Parses the string form (kubectl -l). Throws SelectorSyntaxError naming the bad term. */
export function parseSelector(text: string): Selector {
  const requirements: Requirement[] = [];
  for (const term of splitTerms(text)) {
    const t = term.trim();
    if (!t) throw new SelectorSyntaxError(`empty term in "${text}"`);
    requirements.push(parseTerm(t));
  }
  return { kind: 'requirements', requirements };
}

function parseTerm(t: string): Requirement {
  const set = t.match(/^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/);
  if (set) {
    const values = set[3]!.split(',').map((v) => v.trim());
    checkKey(set[1]!, t);
    for (const v of values) checkValue(v, t);
    return { op: set[2] === 'in' ? 'In' : 'NotIn', key: set[1]!, values };
  }
  const eq = t.match(/^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/);
  if (eq) {
    checkKey(eq[1]!, t);
    checkValue(eq[3]!, t);
    return { op: eq[2] === '!=' ? 'NotIn' : 'In', key: eq[1]!, values: [eq[3]!] };
  }
  const not = t.match(/^!\s*(\S+)$/);
  if (not) {
    checkKey(not[1]!, t);
    return { op: 'DoesNotExist', key: not[1]! };
  }
  if (KEY.test(t)) return { op: 'Exists', key: t };
  throw new SelectorSyntaxError(
    `cannot parse "${t}" (expected key=value, key!=value, key in (a,b), key or !key)`,
  );
}

function checkKey(k: string, term: string): void {
  if (!KEY.test(k)) throw new SelectorSyntaxError(`invalid label key "${k}" in "${term}"`);
}

function checkValue(v: string, term: string): void {
  if (!VALUE.test(v) || v.length > 63)
    throw new SelectorSyntaxError(`invalid label value "${v}" in "${term}"`);
}

/** Splits on commas outside parentheses. */
function splitTerms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}
