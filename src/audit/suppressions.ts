/**
 * Suppressions: "we know, and this is why". Each entry names a rule (or a glob of rules), a scope,
 * a required reason and an optional expiry. Lessons applied (lessons.md): suppressions are keyed
 * on stable rule ids, carry a reason, can expire, are counted in every output, and a typo must be
 * an error rather than a silently ignored exception (kubescape#3771).
 *
 * File (default `.ferry/suppressions.yaml`):
 *   suppressions:
 *     - rule: workload.pdb-missing
 *       scope: { namespace: batch, kind: Deployment, name: "report-*" }
 *       reason: nightly reports, a short outage on drain is accepted
 *       expires: 2026-12-31
 */
import { resolve } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, type YAMLMap } from 'yaml';
import { inputError } from '../errors.js';
import { pathState, readTextFile } from '../util/input-file.js';
import {
  type LabelRequirement,
  matchesLabels,
  parseLabelSelector,
  SelectorError,
} from '../util/label-selector.js';
import type { Finding } from './findings.js';

export interface SuppressionScope {
  namespace?: string;
  kind?: string;
  /** Glob (`*`, `?`) on the subject's name. */
  name?: string;
  /** Glob on the node the subject is on (or is). */
  node?: string;
  /** kubectl-style selector on the subject's labels, e.g. "app=web,tier in (a,b)". */
  labelSelector?: string;
}

/** One entry as written, plus where: every report quotes it as `file:line`. */
export interface Suppression {
  rule: string;
  scope: SuppressionScope;
  reason: string;
  /** As written: YYYY-MM-DD (valid through that day, UTC) or an ISO-8601 time. */
  expires?: string;
  file: string;
  line: number;
}

export interface ExpiredSuppression {
  suppression: Suppression;
  /** Findings it would still match: what came back when it expired. */
  wouldMatch: number;
}

export interface SuppressionResult {
  active: Finding[];
  suppressed: { finding: Finding; by: Suppression }[];
  expired: ExpiredSuppression[];
  /** Current entries that matched nothing: candidates for deletion. */
  unused: Suppression[];
}

const ENTRY_KEYS = ['rule', 'scope', 'reason', 'expires'] as const;
const SCOPE_KEYS = ['namespace', 'kind', 'name', 'node', 'labelSelector'] as const;
const REMEDIATION =
  'each entry needs `rule` (a rule id or glob), `reason` (why it is accepted) and optionally `scope` {namespace, kind, name, node, labelSelector} and `expires` (YYYY-MM-DD)';

/** Where `ferry audit` and `ferry plan` look for suppressions when --suppressions names no file. */
export const DEFAULT_SUPPRESSIONS_FILE = '.ferry/suppressions.yaml';

/** `shown`: the path as the user typed it; `flag`: the flag that named it, when one did. */
export async function loadSuppressions(
  path: string,
  knownRuleIds: readonly string[],
  origin: { shown?: string; flag?: string } = { flag: '--suppressions' },
): Promise<Suppression[]> {
  const text = await readTextFile(path, {
    ...origin,
    what: 'the suppressions file',
    provide: 'pass --suppressions a YAML list of accepted findings (rule, scope, reason, expires)',
  });
  return parseSuppressions(text, path, knownRuleIds);
}

/**
 * The suppressions of `--suppressions FILE`, else of the default file when it exists (a default
 * path that is a directory or a dangling link is an error, not "no suppressions").
 */
export async function readSuppressions(
  given: string | undefined,
  cwd: string,
  knownRuleIds: readonly string[],
  defaultPath: string = DEFAULT_SUPPRESSIONS_FILE,
): Promise<Suppression[]> {
  if (given !== undefined)
    return loadSuppressions(resolve(cwd, given), knownRuleIds, { shown: given, flag: '--suppressions' });
  const dflt = resolve(cwd, defaultPath);
  const state = await pathState(dflt, 'file', {
    shown: defaultPath,
    what: 'the default suppressions file',
    provide: `make ${defaultPath} a YAML list of accepted findings, or remove it`,
  });
  return state === 'present' ? loadSuppressions(dflt, knownRuleIds, { shown: defaultPath }) : [];
}

export function parseSuppressions(
  text: string,
  file: string,
  knownRuleIds: readonly string[],
): Suppression[] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const lineOf = (n: Node | null | undefined): number => (n?.range ? lc.linePos(n.range[0]).line : 1);
  const fail = (msg: string, line: number, field?: string): never => {
    throw inputError(msg, { file, line, ...(field ? { field } : {}) }, REMEDIATION);
  };
  const firstError = doc.errors[0];
  if (firstError) {
    const line = lc.linePos(firstError.pos[0]).line;
    fail(`invalid YAML: ${firstError.message.split('\n')[0]}`, line);
  }
  if (doc.contents === null) return [];

  let list: Node = doc.contents;
  if (isMap(list)) {
    const keys = list.items.map((p) => (isScalar(p.key) ? String(p.key.value) : '?'));
    const unknown = keys.filter((k) => k !== 'suppressions');
    if (unknown.length) fail(`unknown top-level key "${unknown[0]}" (expected "suppressions")`, lineOf(list));
    const inner = list.get('suppressions', true) as Node | undefined;
    if (inner === undefined || (isScalar(inner) && inner.value === null)) return [];
    list = inner;
  }
  if (!isSeq(list)) return fail('expected a list of suppressions', lineOf(list));

  const out: Suppression[] = [];
  for (const item of list.items) {
    const line = lineOf(item as Node);
    if (!isMap(item)) fail('each suppression must be a mapping', line);
    out.push(parseEntry(item as YAMLMap, line, file, knownRuleIds, lineOf, fail));
  }
  return out;
}

function parseEntry(
  map: YAMLMap,
  line: number,
  file: string,
  knownRuleIds: readonly string[],
  lineOf: (n: Node | null | undefined) => number,
  fail: (msg: string, line: number, field?: string) => never,
): Suppression {
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    if (!(ENTRY_KEYS as readonly string[]).includes(key))
      fail(`unknown key "${key}" (expected ${ENTRY_KEYS.join(', ')})`, lineOf(pair.key as Node), key);
  }
  const str = (key: string): string | undefined => {
    const node = map.get(key, true) as Node | undefined;
    if (node === undefined) return undefined;
    if (!isScalar(node) || node.value === null || typeof node.value === 'object')
      return fail(`"${key}" must be a string`, lineOf(node), key);
    return String(node.value).trim();
  };

  const rule = str('rule');
  if (!rule) return fail('missing "rule"', line, 'rule');
  const ruleMatcher = globToRegExp(rule);
  if (!knownRuleIds.some((id) => ruleMatcher.test(id)))
    fail(`"${rule}" matches no rule ferry knows (typo?)`, lineOf(map.get('rule', true) as Node), 'rule');

  const reason = str('reason');
  if (!reason) fail('missing "reason": a suppression must say why the finding is accepted', line, 'reason');

  const expires = str('expires');
  if (expires !== undefined && parseExpiry(expires) === undefined)
    fail(
      `"expires" must be a date YYYY-MM-DD or an ISO-8601 time; got "${expires}"`,
      lineOf(map.get('expires', true) as Node),
      'expires',
    );

  const scope: SuppressionScope = {};
  const scopeNode = map.get('scope', true) as Node | undefined;
  if (scopeNode !== undefined && !(isScalar(scopeNode) && scopeNode.value === null)) {
    if (!isMap(scopeNode)) fail('"scope" must be a mapping', lineOf(scopeNode), 'scope');
    const sm = scopeNode as YAMLMap;
    for (const pair of sm.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      if (!(SCOPE_KEYS as readonly string[]).includes(key))
        fail(
          `unknown scope key "${key}" (expected ${SCOPE_KEYS.join(', ')})`,
          lineOf(pair.key as Node),
          `scope.${key}`,
        );
      const v = pair.value as Node | null;
      if (!isScalar(v) || v.value === null || typeof v.value === 'object')
        fail(`scope.${key} must be a string`, lineOf(v ?? (pair.key as Node)), `scope.${key}`);
      const value = String((v as { value: unknown }).value).trim();
      if (key === 'labelSelector') {
        // An empty selector would match every subject: most likely a mistake, so say so.
        if (value === '')
          fail(
            'scope.labelSelector is empty: give a selector or leave it out',
            lineOf(v),
            'scope.labelSelector',
          );
        try {
          parseLabelSelector(value);
        } catch (err) {
          if (err instanceof SelectorError)
            fail(`scope.labelSelector: ${err.message}`, lineOf(v), 'scope.labelSelector');
          throw err;
        }
      }
      scope[key as keyof SuppressionScope] = value;
    }
  }
  return { rule, scope, reason: reason!, ...(expires !== undefined ? { expires } : {}), file, line };
}

/** End of validity: a bare date is valid through that whole day (UTC). */
export function parseExpiry(text: string): Date | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const d = new Date(`${text}T23:59:59.999Z`);
    return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text ? undefined : d;
  }
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(text)) return undefined;
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

interface Compiled {
  entry: Suppression;
  rule: RegExp;
  namespace?: RegExp;
  kind?: string;
  name?: RegExp;
  node?: RegExp;
  selector?: LabelRequirement[];
  expired: boolean;
}

function compile(s: Suppression, now: Date): Compiled {
  const c: Compiled = { entry: s, rule: globToRegExp(s.rule), expired: false };
  if (s.scope.namespace !== undefined) c.namespace = globToRegExp(s.scope.namespace);
  if (s.scope.kind !== undefined) c.kind = s.scope.kind.toLowerCase();
  if (s.scope.name !== undefined) c.name = globToRegExp(s.scope.name);
  if (s.scope.node !== undefined) c.node = globToRegExp(s.scope.node);
  if (s.scope.labelSelector !== undefined) c.selector = parseLabelSelector(s.scope.labelSelector);
  if (s.expires !== undefined) {
    const until = parseExpiry(s.expires);
    c.expired = until !== undefined && now.getTime() > until.getTime();
  }
  return c;
}

function applies(c: Compiled, f: Finding): boolean {
  if (!c.rule.test(f.ruleId)) return false;
  const s = f.subject;
  if (c.namespace && (s.namespace === undefined || !c.namespace.test(s.namespace))) return false;
  if (c.kind && s.kind.toLowerCase() !== c.kind) return false;
  if (c.name && !c.name.test(s.name)) return false;
  if (c.node && (s.node === undefined || !c.node.test(s.node))) return false;
  if (c.selector && !matchesLabels(c.selector, s.labels)) return false;
  return true;
}

/** Splits findings into active and suppressed (first matching entry wins, in file order). */
export function applySuppressions(
  findings: readonly Finding[],
  suppressions: readonly Suppression[],
  now: Date,
): SuppressionResult {
  const compiled = suppressions.map((s) => compile(s, now));
  const current = compiled.filter((c) => !c.expired);
  const expired = compiled.filter((c) => c.expired);
  const used = new Set<Compiled>();
  const wouldMatch = new Map<Compiled, number>();
  const active: Finding[] = [];
  const suppressed: { finding: Finding; by: Suppression }[] = [];
  for (const f of findings) {
    for (const e of expired) if (applies(e, f)) wouldMatch.set(e, (wouldMatch.get(e) ?? 0) + 1);
    const by = current.find((c) => applies(c, f));
    if (by) {
      used.add(by);
      suppressed.push({ finding: f, by: by.entry });
    } else active.push(f);
  }
  return {
    active,
    suppressed,
    expired: expired.map((e) => ({ suppression: e.entry, wouldMatch: wouldMatch.get(e) ?? 0 })),
    unused: current.filter((c) => !used.has(c)).map((c) => c.entry),
  };
}

export function describeSuppression(s: Suppression): string {
  return `${s.file}:${s.line}`;
}
