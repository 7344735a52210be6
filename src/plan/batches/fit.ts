/**
 * Whether a pod's scheduling rules admit a node's labels and taints: tolerations against
 * NoSchedule/NoExecute taints, nodeSelector, required node affinity (and its volumes' node
 * affinity). The scheduler's predicates, minus what the planner models elsewhere (resources,
 * spreading) and what it does not model (preferred rules, inter-pod affinity).
 */
import type { Taint } from '../../snapshot/model.js';
import type { NodeTerm, Scheduling } from './model.js';

type Toleration = Scheduling['tolerations'][number];

function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  // An empty key with Exists tolerates every taint.
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** A label value as the scheduler's ParseInt reads it: decimal digits, an optional sign; else none. */
function integer(s: string | undefined): number | undefined {
  return s !== undefined && /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}

function termHolds(r: NodeTerm, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'In':
      return has && r.values.includes(v!);
    case 'NotIn':
      return !has || !r.values.includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      const n = integer(v);
      const bound = integer(r.values[0]);
      if (n === undefined || bound === undefined) return false;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
    default:
      return false;
  }
}

export function admits(s: Scheduling, labels: Record<string, string>, taints: readonly Taint[]): boolean {
  for (const taint of taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!s.tolerations.some((t) => tolerates(t, taint))) return false;
  }
  for (const k in s.nodeSelector) if (labels[k] !== s.nodeSelector[k]) return false;
  // Each list: its terms are ORed, a term's requirements ANDed.
  return s.required.every((terms) => terms.some((term) => term.every((r) => termHolds(r, labels))));
}
