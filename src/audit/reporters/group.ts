/**
 * Findings grouped by rule, the one model the human formats (table, md, html) render: a cluster of
 * 5,000 nodes has 17,000 findings, 15,000 of them one rule's, and nobody reads them one by one.
 * One entry per rule, most severe first, with the count, the fix once and the affected objects by
 * namespace, the first SHOWN_OBJECTS of them shown and the rest counted (`--expand RULE` shows them
 * all). Pure: findings in, groups out; the machine formats (json, yaml, sarif, junit) stay per finding.
 */
import { type Finding, SEVERITIES, type Severity, severityRank } from '../findings.js';

/** Objects shown per rule before the rest are only counted. */
export const SHOWN_OBJECTS = 20;

/** Up to this many findings a rule's entry shows each one in full: a few differ in what matters. */
export const DETAILED_UP_TO = 3;

/** Whether a group's findings are shown one by one (few of them, or `--expand RULE`). */
export function detailed(g: RuleGroup<unknown>): boolean {
  return g.expanded || g.total <= DETAILED_UP_TO;
}

/** How a namespace heading reads; cluster-scoped subjects (nodes, files, the cluster) have none. */
export function namespaceLabel(ns: string | undefined): string {
  return ns ?? 'cluster-scoped';
}

export interface NamespaceGroup<T> {
  /** Undefined for cluster-scoped subjects (nodes, files, the cluster itself). */
  namespace: string | undefined;
  items: T[];
  /** Items of this namespace in the whole group: more than `items` when the list is cut there. */
  total: number;
}

/** A text every finding of a group carries, or the first of several (then `same` is false). */
export interface Shared {
  text: string;
  same: boolean;
}

export interface RuleGroup<T> {
  ruleId: string;
  family: string;
  title: string;
  /** The most severe finding's: the group's place in the report. */
  severity: Severity;
  /** How many of its findings have each severity (a rule may raise or lower one finding's). */
  bySeverity: Record<Severity, number>;
  total: number;
  /** Every item, most severe first, then by namespace, kind and name. */
  items: T[];
  /** The items a reader sees: the first SHOWN_OBJECTS, or all when expanded. */
  shown: NamespaceGroup<T>[];
  /** The others, by namespace: the HTML keeps them folded, the text formats only count them. */
  rest: NamespaceGroup<T>[];
  hidden: number;
  /** Namespaces (cluster scope counting as one) only the hidden items are in. */
  hiddenNamespaces: number;
  /** Distinct namespaces of all items (cluster scope counting as one). */
  namespaces: number;
  expanded: boolean;
  message: Shared;
  fix: Shared;
  /** Kit files that fix any of its findings, each once. */
  artifacts: string[];
  /** Why the kit does not resolve them, each distinct reason once. */
  kitGaps: string[];
  docs?: string;
}

export interface GroupOptions {
  /** Rule ids whose every object is shown. */
  expand?: readonly string[];
  shown?: number;
}

/** Groups items (findings, or suppressed/resolved entries carrying one) by the rule of their finding. */
export function groupByRule<T>(
  items: readonly T[],
  findingOf: (item: T) => Finding,
  opts: GroupOptions = {},
): RuleGroup<T>[] {
  const limit = opts.shown ?? SHOWN_OBJECTS;
  const expand = new Set(opts.expand ?? []);
  const byRule = new Map<string, T[]>();
  for (const item of items) {
    const id = findingOf(item).ruleId;
    const list = byRule.get(id);
    if (list) list.push(item);
    else byRule.set(id, [item]);
  }
  const groups: RuleGroup<T>[] = [];
  for (const [ruleId, list] of byRule) {
    const keyed = list.map((item) => ({ item, f: findingOf(item) }));
    keyed.sort(
      (a, b) =>
        severityRank(a.f.severity) - severityRank(b.f.severity) ||
        compare(a.f.subject.namespace ?? '', b.f.subject.namespace ?? '') ||
        compare(a.f.subject.kind, b.f.subject.kind) ||
        NAMES.compare(a.f.subject.name, b.f.subject.name) ||
        compare(a.f.fingerprint, b.f.fingerprint),
    );
    const first = keyed[0]!.f;
    const bySeverity: Record<Severity, number> = { blocker: 0, risk: 0, info: 0 };
    const artifacts = new Set<string>();
    const kitGaps = new Set<string>();
    let sameMessage = true;
    let sameFix = true;
    for (const { f } of keyed) {
      bySeverity[f.severity]++;
      for (const a of f.artifacts) artifacts.add(a);
      if (f.kitGap) kitGaps.add(f.kitGap);
      if (f.message !== first.message) sameMessage = false;
      if (f.remediation !== first.remediation) sameFix = false;
    }
    const expanded = expand.has(ruleId);
    const cut = expanded ? keyed.length : Math.min(limit, keyed.length);
    const perNs = new Map<string | undefined, number>();
    for (const { f } of keyed) perNs.set(f.subject.namespace, (perNs.get(f.subject.namespace) ?? 0) + 1);
    const shown = byNamespace(keyed.slice(0, cut), perNs);
    const rest = byNamespace(keyed.slice(cut), perNs);
    const shownNs = new Set(shown.map((g) => g.namespace));
    groups.push({
      ruleId,
      family: first.family,
      // The rule's title: a finding may override it, the group is the rule's.
      title: keyed.find((k) => k.f.title)?.f.title ?? ruleId,
      severity: first.severity,
      bySeverity,
      total: keyed.length,
      items: keyed.map((k) => k.item),
      shown,
      rest,
      hidden: keyed.length - cut,
      hiddenNamespaces: rest.filter((g) => !shownNs.has(g.namespace)).length,
      namespaces: new Set(keyed.map((k) => k.f.subject.namespace)).size,
      expanded,
      message: { text: first.message, same: sameMessage },
      fix: { text: first.remediation, same: sameFix },
      artifacts: [...artifacts],
      kitGaps: [...kitGaps],
      ...(first.docs !== undefined ? { docs: first.docs } : {}),
    });
  }
  groups.sort((a, b) => severityRank(a.severity) - severityRank(b.severity) || compare(a.ruleId, b.ruleId));
  return groups;
}

/** Groups of one severity, in report order (blockers, risks, info), empty ones left out. */
export function bySeverity<T>(
  groups: readonly RuleGroup<T>[],
): { severity: Severity; groups: RuleGroup<T>[] }[] {
  return SEVERITIES.map((severity) => ({
    severity,
    groups: groups.filter((g) => g.severity === severity),
  })).filter((s) => s.groups.length > 0);
}

/** "3 blockers, 2 risks" for a group whose findings differ in severity; undefined when they agree. */
export function severityMix(g: RuleGroup<unknown>): string | undefined {
  const parts = SEVERITIES.filter((s) => g.bySeverity[s] > 0);
  if (parts.length < 2) return undefined;
  return parts
    .map((s) => `${g.bySeverity[s]} ${s === 'info' ? 'info' : `${s}${g.bySeverity[s] === 1 ? '' : 's'}`}`)
    .join(', ');
}

/**
 * The objects of one namespace, compactly: "Deployment web, api; DaemonSet agent" (the kind said
 * once per run of the same kind; a node the subject lives on after its name).
 */
export function compactObjects<T>(items: readonly T[], findingOf: (item: T) => Finding): string {
  const runs: { kind: string; names: string[] }[] = [];
  for (const item of items) {
    const s = findingOf(item).subject;
    const name = s.node && s.kind !== 'Node' && s.node !== s.name ? `${s.name} (on ${s.node})` : s.name;
    const last = runs[runs.length - 1];
    if (last && last.kind === s.kind) last.names.push(name);
    else runs.push({ kind: s.kind, names: [name] });
  }
  return runs.map((r) => `${r.kind} ${r.names.join(', ')}`).join('; ');
}

/** "(15)", or "(20 of 53)" when the namespace's list is cut; nothing for one object. */
export function namespaceCount(ns: NamespaceGroup<unknown>): string {
  if (ns.items.length === ns.total) return ns.total > 1 ? ` (${ns.total})` : '';
  return ` (${ns.items.length} of ${ns.total.toLocaleString('en-US')})`;
}

/** "… and 15,761 more in 299 namespaces": what a text format says of the objects it did not list. */
export function hiddenLine(g: RuleGroup<unknown>): string | undefined {
  if (g.hidden === 0) return undefined;
  const where = g.hiddenNamespaces > 0 ? ` (${plural(g.hiddenNamespaces, 'more namespace')})` : '';
  return `… and ${g.hidden.toLocaleString('en-US')} more${where}`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : `${word}s`}`;
}

function byNamespace<T>(
  keyed: readonly { item: T; f: Finding }[],
  totals: ReadonlyMap<string | undefined, number>,
): NamespaceGroup<T>[] {
  const out: NamespaceGroup<T>[] = [];
  const index = new Map<string | undefined, NamespaceGroup<T>>();
  for (const { item, f } of keyed) {
    const ns = f.subject.namespace;
    let g = index.get(ns);
    if (!g) {
      g = { namespace: ns, items: [], total: totals.get(ns) ?? 0 };
      index.set(ns, g);
      out.push(g);
    }
    g.items.push(item);
  }
  return out;
}

/** svc-2 before svc-10: names are read by people. */
const NAMES = new Intl.Collator('en', { numeric: true });

/** Code-unit order: stable across locales, and fast on 15,000 names. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
