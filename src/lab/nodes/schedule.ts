/**
 * The lab scheduler's decision, pure: whether a pod fits a node (requests vs allocatable, taints
 * and tolerations, nodeSelector and required node affinity, cordon, required pod anti-affinity) and
 * which fitting node it goes to. Messages follow the real scheduler's "0/N nodes are available: …"
 * so that whoever reads a Pending pod's condition sees what they would on a real cluster.
 */

import {
  type LabelRequirement,
  matchesLabels,
  nodeSelectorRequirement,
  readLabelSelector,
  selects,
} from '../../util/label-selector.js';
import { cpuMillis, parseQuantity } from '../../util/quantity.js';
import { isPlainObject, type KObj, metaOf } from '../apiserver/object.js';

export type Taint = { key: string; value?: string; effect: string };
export type Toleration = {
  key?: string;
  operator?: 'Equal' | 'Exists' | string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
};

export type Requests = { cpuMillis: number; memoryBytes: number };

/** A node and the pods bound to it that still hold resources (not Succeeded/Failed). */
export type NodeView = { node: KObj; pods: KObj[] };

export type Verdict = { fits: true } | { fits: false; reason: string };

export type Placement = { node: string } | { node: undefined; message: string };

// biome-ignore lint/suspicious/noExplicitAny: pod specs are read structurally
type AnySpec = any;

function specOf(o: KObj): AnySpec {
  return isPlainObject(o.spec) ? o.spec : {};
}

function containerRequests(c: AnySpec): Requests {
  const req = isPlainObject(c?.resources?.requests) ? c.resources.requests : {};
  return {
    cpuMillis: cpuMillis(req.cpu as string | undefined) ?? 0,
    memoryBytes: parseQuantity(req.memory as string | undefined) ?? 0,
  };
}

/**
 * What the pod asks for: the sum over its containers, or the largest init container when that is
 * more (init containers run one at a time, before the others), as the scheduler computes it.
 */
export function podRequests(pod: KObj): Requests {
  const spec = specOf(pod);
  const sum: Requests = { cpuMillis: 0, memoryBytes: 0 };
  for (const c of Array.isArray(spec.containers) ? spec.containers : []) {
    const r = containerRequests(c);
    sum.cpuMillis += r.cpuMillis;
    sum.memoryBytes += r.memoryBytes;
  }
  for (const c of Array.isArray(spec.initContainers) ? spec.initContainers : []) {
    const r = containerRequests(c);
    sum.cpuMillis = Math.max(sum.cpuMillis, r.cpuMillis);
    sum.memoryBytes = Math.max(sum.memoryBytes, r.memoryBytes);
  }
  return sum;
}

/** status.allocatable; a resource the node does not report is unlimited. */
export function allocatable(node: KObj): { cpuMillis: number; memoryBytes: number; pods: number } {
  const a =
    isPlainObject(node.status) && isPlainObject(node.status.allocatable) ? node.status.allocatable : {};
  return {
    cpuMillis: cpuMillis(a.cpu as string | undefined) ?? Number.POSITIVE_INFINITY,
    memoryBytes: parseQuantity(a.memory as string | undefined) ?? Number.POSITIVE_INFINITY,
    pods: parseQuantity(a.pods as string | undefined) ?? Number.POSITIVE_INFINITY,
  };
}

export function taintsOf(node: KObj): Taint[] {
  const t = specOf(node).taints;
  return Array.isArray(t) ? (t as Taint[]) : [];
}

/** v1.Toleration.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  // An empty key with Exists matches every taint.
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

export function tolerationsOf(pod: KObj): Toleration[] {
  const t = specOf(pod).tolerations;
  return Array.isArray(t) ? (t as Toleration[]) : [];
}

/** The first NoSchedule/NoExecute taint none of the tolerations tolerate (PreferNoSchedule never blocks). */
export function untoleratedTaint(taints: Taint[], tolerations: Toleration[]): Taint | undefined {
  return taints.find(
    (taint) =>
      (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') &&
      !tolerations.some((t) => tolerates(t, taint)),
  );
}

/** The requirements of a node selector term's list; undefined when one is invalid (it matches no node). */
function requirements(list: unknown): LabelRequirement[] | undefined {
  try {
    return (Array.isArray(list) ? list : []).map(nodeSelectorRequirement);
  } catch {
    return undefined;
  }
}

/** spec.nodeSelector and requiredDuringSchedulingIgnoredDuringExecution node affinity. */
export function matchesNodeSelection(pod: KObj, node: KObj): boolean {
  const labels = metaOf(node).labels;
  const spec = specOf(pod);
  // An absent or empty nodeSelector constrains nothing.
  const nodeSelector = readLabelSelector({
    matchLabels: isPlainObject(spec.nodeSelector) ? spec.nodeSelector : {},
  });
  if (!selects(nodeSelector, labels)) return false;
  const terms =
    spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!Array.isArray(terms) || terms.length === 0) return true;
  // Terms are ORed, requirements inside a term ANDed; a term without requirements matches nothing.
  return terms.some((term: AnySpec) => {
    const exprs = requirements(term?.matchExpressions);
    const fields = requirements(term?.matchFields);
    if (!exprs || !fields || exprs.length + fields.length === 0) return false;
    return (
      matchesLabels(exprs, labels) &&
      // matchFields supports metadata.name only (what the DaemonSet controller uses).
      fields.every((r) => r.key === 'metadata.name') &&
      matchesLabels(fields, { 'metadata.name': metaOf(node).name ?? '' })
    );
  });
}

/** Required pod anti-affinity terms of `pod` violated by pods already in the node's topology domain. */
function antiAffinityViolated(pod: KObj, node: KObj, all: NodeView[]): boolean {
  const terms = specOf(pod).affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!Array.isArray(terms)) return false;
  const ns = metaOf(pod).namespace;
  return terms.some((term: AnySpec) => {
    const key = typeof term?.topologyKey === 'string' ? term.topologyKey : 'kubernetes.io/hostname';
    const domain = metaOf(node).labels?.[key];
    if (domain === undefined) return false;
    // An absent or invalid selector matches nothing (the API would have refused an invalid one).
    const sel = readLabelSelector(term.labelSelector);
    if (sel === null) return false;
    const namespaces: string[] =
      Array.isArray(term.namespaces) && term.namespaces.length > 0 ? term.namespaces : [ns];
    return all.some(
      (v) =>
        metaOf(v.node).labels?.[key] === domain &&
        v.pods.some(
          (p) =>
            metaOf(p).name !== metaOf(pod).name &&
            namespaces.includes(metaOf(p).namespace ?? '') &&
            selects(sel, metaOf(p).labels),
        ),
    );
  });
}

export const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** Whether `pod` may go to `view.node`; `all` is every node's view (for anti-affinity). */
export function checkNode(pod: KObj, view: NodeView, all: NodeView[] = [view]): Verdict {
  const node = view.node;
  const tolerations = tolerationsOf(pod);
  if (specOf(node).unschedulable === true && !tolerations.some((t) => tolerates(t, UNSCHEDULABLE_TAINT))) {
    return { fits: false, reason: 'node(s) were unschedulable' };
  }
  if (!matchesNodeSelection(pod, node)) {
    return { fits: false, reason: "node(s) didn't match Pod's node affinity/selector" };
  }
  const taint = untoleratedTaint(taintsOf(node), tolerations);
  if (taint) {
    return { fits: false, reason: `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}` };
  }
  const cap = allocatable(node);
  if (view.pods.length + 1 > cap.pods) return { fits: false, reason: 'Too many pods' };
  const want = podRequests(pod);
  const used = view.pods
    .map(podRequests)
    .reduce(
      (a, b) => ({ cpuMillis: a.cpuMillis + b.cpuMillis, memoryBytes: a.memoryBytes + b.memoryBytes }),
      { cpuMillis: 0, memoryBytes: 0 },
    );
  if (used.cpuMillis + want.cpuMillis > cap.cpuMillis) return { fits: false, reason: 'Insufficient cpu' };
  if (used.memoryBytes + want.memoryBytes > cap.memoryBytes)
    return { fits: false, reason: 'Insufficient memory' };
  if (antiAffinityViolated(pod, node, all)) {
    return { fits: false, reason: "node(s) didn't match pod anti-affinity rules" };
  }
  return { fits: true };
}

function controllerUid(pod: KObj): string | undefined {
  return (metaOf(pod).ownerReferences ?? []).find((r) => r.controller === true)?.uid;
}

/** Lower is better: spread a controller's pods first, then prefer the least requested CPU. */
function score(pod: KObj, view: NodeView): [number, number, number] {
  const owner = controllerUid(pod);
  const siblings = owner === undefined ? 0 : view.pods.filter((p) => controllerUid(p) === owner).length;
  const cap = allocatable(view.node);
  const cpu = view.pods.reduce((a, p) => a + podRequests(p).cpuMillis, 0);
  const cpuShare = Number.isFinite(cap.cpuMillis) && cap.cpuMillis > 0 ? cpu / cap.cpuMillis : 0;
  return [siblings, cpuShare, view.pods.length];
}

function better(a: [number, number, number], b: [number, number, number]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** The node the pod goes to, or the scheduler's message when none fits. */
export function schedule(pod: KObj, views: NodeView[]): Placement {
  let best: { name: string; score: [number, number, number] } | undefined;
  const reasons = new Map<string, number>();
  for (const view of views) {
    const v = checkNode(pod, view, views);
    if (!v.fits) {
      reasons.set(v.reason, (reasons.get(v.reason) ?? 0) + 1);
      continue;
    }
    const s = score(pod, view);
    const name = metaOf(view.node).name ?? '';
    if (!best || better(s, best.score) || (!better(best.score, s) && name < best.name))
      best = { name, score: s };
  }
  if (best) return { node: best.name };
  const parts = [...reasons.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([reason, n]) => `${n} ${reason}`);
  return {
    node: undefined,
    message: `0/${views.length} nodes are available: ${parts.join(', ')}.`,
  };
}
