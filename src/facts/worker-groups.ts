/**
 * Worker groups: the kubeadm workers grouped by the labels and taints only some of them have
 * (blockers.md nodes.labels-taints-carryover). Generate gives each group its own Talos patch and
 * Cluster API pool; the audit judges the names those pools get. Both read them from here, so they
 * cannot disagree.
 */
import { CONTROL_PLANE_TAINT, SELF_SET_LABEL_PREFIXES } from '../knowledge/talos-config.js';
import type { SourceRef, Taint } from '../snapshot/model.js';
import type { NodeFact } from './model.js';
import { type Sourced, sourced } from './sourced.js';

export interface NodeShape {
  labels: Record<string, Sourced<string>>;
  /** Talos form: key → "value:Effect" or "Effect". */
  taints: Record<string, Sourced<string>>;
}

export interface WorkerGroup {
  name: string;
  nodes: string[];
  own: NodeShape;
}

const LEGACY_MASTER_TAINT = 'node-role.kubernetes.io/master';
/** Taints controllers and cloud providers set and remove by themselves. */
const TRANSIENT_TAINT_PREFIXES = [
  'node.kubernetes.io/',
  'node.cloudprovider.kubernetes.io/',
  'ToBeDeletedByClusterAutoscaler',
];

export function nodeRef(name: string, field?: string): SourceRef {
  return field
    ? { kind: 'object', objectKind: 'Node', name, field }
    : { kind: 'object', objectKind: 'Node', name };
}

export function isCarriedLabel(key: string): boolean {
  return !SELF_SET_LABEL_PREFIXES.some((p) => key.startsWith(p));
}

function isCarriedTaint(t: Taint): boolean {
  if (t.key === CONTROL_PLANE_TAINT || t.key === LEGACY_MASTER_TAINT) return false;
  return !TRANSIENT_TAINT_PREFIXES.some((p) => t.key.startsWith(p));
}

/** Talos writes a taint as key: "value:Effect" (or "Effect" without a value). talos.md §3.3 goldens. */
export function talosTaintValue(t: Taint): string {
  return t.value ? `${t.value}:${t.effect}` : t.effect;
}

interface Split {
  common: NodeShape;
  own: Map<string, NodeShape>;
}

/** Splits carried labels and taints into those every node shares and those of single nodes. */
export function splitShapes(nodes: NodeFact[], field: 'labels' | 'taints' | 'both' = 'both'): Split {
  const labelSets = nodes.map((n) => Object.entries(n.labels).filter(([k]) => isCarriedLabel(k)));
  const taintSets = nodes.map((n) =>
    n.taints.filter(isCarriedTaint).map((t) => [t.key, talosTaintValue(t)] as [string, string]),
  );
  const common: NodeShape = { labels: {}, taints: {} };
  const own = new Map<string, NodeShape>(nodes.map((n) => [n.name, { labels: {}, taints: {} }]));
  const everywhere = (sets: [string, string][][], k: string, v: string) =>
    sets.every((s) => s.some(([a, b]) => a === k && b === v));
  nodes.forEach((n, i) => {
    const mine = own.get(n.name)!;
    if (field !== 'taints') {
      for (const [k, v] of labelSets[i] ?? []) {
        if (everywhere(labelSets, k, v))
          common.labels[k] = sourced(
            v,
            nodes.map((x) => nodeRef(x.name, `metadata.labels["${k}"]`)),
          );
        else mine.labels[k] = sourced(v, [nodeRef(n.name, `metadata.labels["${k}"]`)]);
      }
    }
    if (field !== 'labels') {
      for (const [k, v] of taintSets[i] ?? []) {
        if (everywhere(taintSets, k, v))
          common.taints[k] = sourced(
            v,
            nodes.map((x) => nodeRef(x.name, 'spec.taints')),
          );
        else mine.taints[k] = sourced(v, [nodeRef(n.name, 'spec.taints')]);
      }
    }
  });
  return { common, own };
}

/** Workers grouped by the labels/taints only some of them have; one patch per group. */
export function workerGroups(workers: NodeFact[], own: Map<string, NodeShape>): WorkerGroup[] {
  const bySignature = new Map<string, { nodes: string[]; own: NodeShape }>();
  for (const w of workers) {
    const shape = own.get(w.name) ?? { labels: {}, taints: {} };
    if (Object.keys(shape.labels).length === 0 && Object.keys(shape.taints).length === 0) continue;
    const sig = JSON.stringify([
      Object.entries(shape.labels)
        .map(([k, v]) => [k, v.value])
        .sort(),
      Object.entries(shape.taints)
        .map(([k, v]) => [k, v.value])
        .sort(),
    ]);
    const g = bySignature.get(sig);
    if (g) {
      g.nodes.push(w.name);
      for (const [k, v] of Object.entries(shape.labels)) g.own.labels[k]!.sources.push(...v.sources);
      for (const [k, v] of Object.entries(shape.taints)) g.own.taints[k]!.sources.push(...v.sources);
    } else {
      const copy: NodeShape = {
        labels: Object.fromEntries(
          Object.entries(shape.labels).map(([k, v]) => [k, sourced(v.value, [...v.sources])]),
        ),
        taints: Object.fromEntries(
          Object.entries(shape.taints).map(([k, v]) => [k, sourced(v.value, [...v.sources])]),
        ),
      };
      bySignature.set(sig, { nodes: [w.name], own: copy });
    }
  }
  return [...bySignature.values()].map((g, i) => ({ name: groupName(g.own, i), nodes: g.nodes, own: g.own }));
}

/** A readable group name from its first label value ("pool-general"), else "group-N". */
function groupName(shape: NodeShape, i: number): string {
  const first = Object.entries(shape.labels)[0];
  const base = first ? `${first[0].split('/').pop() ?? 'group'}-${first[1].value}` : `group-${i + 1}`;
  const clean = base
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${clean || 'group'}-${i + 1}`;
}

/**
 * The names of the worker groups that get a pool of their own, as deriveTalosValues groups them
 * (same functions, same input): the audit's nodes.name-reuse judges the template names they give.
 */
export function poolGroupNames(workers: NodeFact[]): string[] {
  return workerGroups(workers, splitShapes(workers).own).map((g) => g.name);
}
