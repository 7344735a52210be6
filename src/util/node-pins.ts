/**
 * Where a pod's rules pin it to named nodes: spec.nodeName, a kubernetes.io/hostname nodeSelector,
 * or required node affinity whose every term names nodes (kubernetes.io/hostname In […], or
 * matchFields metadata.name In […]). One predicate for the audit (pods Pending once old nodes go),
 * the batch planner (pods no batch can move) and the drain (replacements that cannot come back
 * elsewhere), so that the three never disagree on which pods are pinned.
 */

const HOSTNAME = 'kubernetes.io/hostname';
const NAME_FIELD = 'metadata.name';

export interface NodePin {
  /** Where in the spec, e.g. `spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`. */
  field: string;
  /** The nodes the rule lets the pod run on (possibly none). */
  nodes: string[];
}

type Requirement = { key?: unknown; operator?: unknown; values?: unknown };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/**
 * The node names one node-selector term allows, or undefined when it does not restrict names.
 * Requirements in a term are ANDed: each `In` on the hostname or the name narrows the set, each
 * `NotIn` removes from it; a `NotIn` alone pins nothing (every other node matches).
 */
function termNodes(term: unknown): string[] | undefined {
  if (!isRecord(term)) return undefined;
  let allowed: Set<string> | undefined;
  const excluded = new Set<string>();
  const scan = (list: unknown, key: string) => {
    if (!Array.isArray(list)) return;
    for (const e of list as Requirement[]) {
      if (!isRecord(e) || e.key !== key) continue;
      const values = strings(e.values);
      if (e.operator === 'In') {
        const prev = allowed;
        allowed = new Set(prev ? values.filter((v) => prev.has(v)) : values);
      } else if (e.operator === 'NotIn') for (const v of values) excluded.add(v);
    }
  };
  scan(term['matchExpressions'], HOSTNAME);
  scan(term['matchFields'], NAME_FIELD);
  return allowed ? [...allowed].filter((n) => !excluded.has(n)) : undefined;
}

/** Each rule of a pod spec that pins it to named nodes, with the field it is in. */
export function pinsOf(spec: unknown, specPath: string, includeNodeName: boolean): NodePin[] {
  if (!isRecord(spec)) return [];
  const out: NodePin[] = [];
  if (includeNodeName && typeof spec['nodeName'] === 'string' && spec['nodeName'])
    out.push({ field: `${specPath}.nodeName`, nodes: [spec['nodeName']] });
  const sel = spec['nodeSelector'];
  if (isRecord(sel) && typeof sel[HOSTNAME] === 'string')
    out.push({ field: `${specPath}.nodeSelector["${HOSTNAME}"]`, nodes: [sel[HOSTNAME]] });
  const affinity = spec['affinity'];
  const nodeAffinity = isRecord(affinity) ? affinity['nodeAffinity'] : undefined;
  const required = isRecord(nodeAffinity)
    ? nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution']
    : undefined;
  const terms = isRecord(required) ? required['nodeSelectorTerms'] : undefined;
  if (Array.isArray(terms) && terms.length > 0) {
    // Terms are ORed: the pods are pinned only when every term names nodes.
    const perTerm = terms.map(termNodes);
    if (perTerm.every((p) => p !== undefined)) {
      out.push({
        field: `${specPath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`,
        nodes: [...new Set(perTerm.flat())],
      });
    }
  }
  return out;
}

/**
 * The only nodes a pod spec's scheduling rules let it run on, when they name nodes (the rules are
 * ANDed: the names every pinning rule allows); undefined when they do not pin it. A pod bound by
 * spec.nodeName is not counted: that says where it runs, not where a replacement may go.
 */
export function pinnedNodes(spec: unknown): string[] | undefined {
  const pins = pinsOf(spec, 'spec', false);
  if (pins.length === 0) return undefined;
  let allowed = pins[0]!.nodes;
  for (const p of pins.slice(1)) allowed = allowed.filter((n) => p.nodes.includes(n));
  return [...new Set(allowed)];
}
