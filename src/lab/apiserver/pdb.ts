/**
 * PodDisruptionBudget status and the eviction decision, as the disruption controller
 * (pkg/controller/disruption) and the eviction subresource (pkg/registry/core/pod/storage/
 * eviction.go) compute them. Pure: the registry feeds in the PDB, the pods of its namespace and the
 * workloads that own them.
 */

import { fromLabelSelector, matchesLabels } from '../../util/label-selector.js';
import { isPlainObject, type KObj, metaOf, rfc3339 } from './object.js';

/** After this long an evicted pod that still is not being deleted leaves disruptedPods. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;
/** eviction.go MaxDisruptedPodSize. */
export const MAX_DISRUPTED_PODS = 2000;

export type PdbStatus = {
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  expectedPods: number;
  observedGeneration: number;
  disruptedPods?: Record<string, string>;
  conditions: {
    type: 'DisruptionAllowed';
    status: 'True' | 'False';
    reason: 'SufficientPods' | 'InsufficientPods' | 'SyncFailed';
    message: string;
    observedGeneration: number;
    lastTransitionTime: string;
  }[];
};

export function isPodReady(pod: KObj): boolean {
  const conds =
    isPlainObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conds.some((c: unknown) => isPlainObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** The pods a PDB covers: same namespace, matching its selector (`{}` = all, absent = none). */
export function podsOfPdb(pdb: KObj, pods: KObj[]): KObj[] {
  const reqs = fromLabelSelector(isPlainObject(pdb.spec) ? pdb.spec.selector : undefined);
  if (!reqs) return [];
  const ns = metaOf(pdb).namespace;
  return pods.filter((p) => metaOf(p).namespace === ns && matchesLabels(reqs, metaOf(p).labels));
}

type IntOrString = number | string;

/** intstr.GetScaledValueFromIntOrPercent with roundUp = true. */
function scaled(v: IntOrString, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) throw new Error(`invalid value for IntOrString: invalid value "${v}"`);
  return Math.ceil((Number(m[1]) * total) / 100);
}

/**
 * The sum of the scales of the controllers of `pods` (disruption.go getExpectedScale): a pod's
 * ReplicaSet counts with its Deployment's replicas when a Deployment owns it.
 */
function expectedScale(pods: KObj[], workloads: KObj[]): number {
  const byUid = new Map(workloads.map((w) => [metaOf(w).uid, w]));
  const scales = new Map<string, number>();
  for (const pod of pods) {
    const ref = (metaOf(pod).ownerReferences ?? []).find((r) => r.controller === true);
    if (!ref) continue; // unmanaged pods are reported by the controller, not counted
    let owner = byUid.get(ref.uid);
    if (owner && ref.kind === 'ReplicaSet') {
      const up = (metaOf(owner).ownerReferences ?? []).find(
        (r) => r.controller === true && r.kind === 'Deployment',
      );
      if (up) owner = byUid.get(up.uid) ?? owner;
    }
    if (!owner) throw new Error(`found no controllers for pod "${metaOf(pod).name}"`);
    const replicas =
      isPlainObject(owner.spec) && typeof owner.spec.replicas === 'number' ? owner.spec.replicas : 1;
    scales.set(metaOf(owner).uid!, replicas);
  }
  return [...scales.values()].reduce((a, b) => a + b, 0);
}

function expectedAndDesired(
  pdb: KObj,
  pods: KObj[],
  workloads: KObj[],
): { expected: number; desired: number } {
  const spec = isPlainObject(pdb.spec) ? pdb.spec : {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const expected = expectedScale(pods, workloads);
    return {
      expected,
      desired: Math.max(0, expected - scaled(spec.maxUnavailable as IntOrString, expected)),
    };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expected: pods.length, desired: spec.minAvailable };
    const expected = expectedScale(pods, workloads);
    return { expected, desired: scaled(spec.minAvailable as IntOrString, expected) };
  }
  return { expected: 0, desired: 0 };
}

/**
 * The status the disruption controller would write for `pdb` given the pods of its namespace and
 * the workloads (ReplicaSets, Deployments, StatefulSets) there. `disruptedPods` entries written by
 * evictions stay while their pod exists and is being deleted or the entry is younger than 2 min,
 * and leave when a pod of that name was created after the eviction.
 */
export function computePdbStatus(pdb: KObj, namespacePods: KObj[], workloads: KObj[], now: Date): PdbStatus {
  const generation = metaOf(pdb).generation ?? 1;
  const previous = isPlainObject(pdb.status) ? pdb.status : {};
  const pods = podsOfPdb(pdb, namespacePods);
  const byName = new Map(pods.map((p) => [metaOf(p).name, p]));
  const disrupted: Record<string, string> = {};
  const recorded = isPlainObject(previous.disruptedPods)
    ? (previous.disruptedPods as Record<string, string>)
    : {};
  for (const [name, at] of Object.entries(recorded)) {
    const pod = byName.get(name);
    if (!pod) continue;
    // A pod created after its name's eviction is a replacement (a StatefulSet's comes back under
    // the same name): the controller, which syncs on every pod event, saw the evicted one go and
    // dropped the entry then. Status computed on read never saw that moment, so infer it.
    const created = metaOf(pod).creationTimestamp;
    if (created !== undefined && Date.parse(created) > Date.parse(at)) continue;
    const terminating = metaOf(pod).deletionTimestamp !== undefined;
    if (terminating || Date.parse(at) + DELETION_TIMEOUT_MS > now.getTime()) disrupted[name] = at;
  }
  const currentHealthy = pods.filter(
    (p) => metaOf(p).deletionTimestamp === undefined && !(metaOf(p).name! in disrupted) && isPodReady(p),
  ).length;
  const prevCond = Array.isArray(previous.conditions)
    ? (previous.conditions[0] as PdbStatus['conditions'][0] | undefined)
    : undefined;
  const condition = (
    status: 'True' | 'False',
    reason: PdbStatus['conditions'][0]['reason'],
    message = '',
  ) => ({
    type: 'DisruptionAllowed' as const,
    status,
    reason,
    message,
    observedGeneration: generation,
    // Status is computed on read, so a transition has no stored time: the budget's creation stands in.
    lastTransitionTime:
      prevCond?.status === status
        ? prevCond.lastTransitionTime
        : (metaOf(pdb).creationTimestamp ?? rfc3339(now)),
  });
  let expected: number;
  let desired: number;
  try {
    ({ expected, desired } = expectedAndDesired(pdb, pods, workloads));
  } catch (err) {
    // failSafe: no disruption allowed while the budget cannot be computed.
    return {
      currentHealthy,
      desiredHealthy: 0,
      disruptionsAllowed: 0,
      expectedPods: 0,
      observedGeneration: generation,
      ...(Object.keys(disrupted).length > 0 && { disruptedPods: disrupted }),
      conditions: [condition('False', 'SyncFailed', (err as Error).message)],
    };
  }
  let allowed = currentHealthy - desired;
  // Zero expected pods: a PDB whose first pods appear must not allow disruptions yet.
  if (expected <= 0 || allowed <= 0) allowed = 0;
  return {
    currentHealthy,
    desiredHealthy: desired,
    disruptionsAllowed: allowed,
    expectedPods: expected,
    observedGeneration: generation,
    ...(Object.keys(disrupted).length > 0 && { disruptedPods: disrupted }),
    conditions: [allowed > 0 ? condition('True', 'SufficientPods') : condition('False', 'InsufficientPods')],
  };
}

export const EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget.";

export type EvictionDecision =
  /** `budget`: the PDB whose disruptedPods must record the pod (its disruptionsAllowed drops by one). */
  | {
      allowed: true;
      budget: KObj | undefined;
      reason: 'no-budget' | 'ignores-budget' | 'unhealthy-pod' | 'within-budget';
    }
  | { allowed: false; code: 403 | 429 | 500; pdb: string | undefined; message: string; cause?: string };

/**
 * Whether the eviction API lets `pod` go, given the PDBs of its namespace with computed status.
 */
export function decideEviction(pod: KObj, pdbs: KObj[]): EvictionDecision {
  const phase = isPlainObject(pod.status) ? pod.status.phase : undefined;
  // canIgnorePDB: terminal or pending pods, and pods already being deleted.
  if (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    metaOf(pod).deletionTimestamp !== undefined
  ) {
    return { allowed: true, budget: undefined, reason: 'ignores-budget' };
  }
  const matching = pdbs.filter((p) => podsOfPdb(p, [pod]).length > 0);
  if (matching.length === 0) return { allowed: true, budget: undefined, reason: 'no-budget' };
  if (matching.length > 1) {
    return {
      allowed: false,
      code: 500,
      pdb: undefined,
      message:
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    };
  }
  const pdb = matching[0]!;
  const name = metaOf(pdb).name!;
  const st = pdb.status as PdbStatus;
  if (st.observedGeneration < (metaOf(pdb).generation ?? 1)) {
    return {
      allowed: false,
      code: 429,
      pdb: name,
      message: EVICTION_REFUSED,
      cause: `The disruption budget ${name} is still being processed by the server.`,
    };
  }
  if (st.disruptionsAllowed < 0) {
    return { allowed: false, code: 403, pdb: name, message: 'pdb disruptions allowed is negative' };
  }
  if (Object.keys(st.disruptedPods ?? {}).length >= MAX_DISRUPTED_PODS) {
    return {
      allowed: false,
      code: 403,
      pdb: name,
      message: 'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    };
  }
  if (!isPodReady(pod)) {
    const policy = isPlainObject(pdb.spec) ? pdb.spec.unhealthyPodEvictionPolicy : undefined;
    if (policy === 'AlwaysAllow') return { allowed: true, budget: undefined, reason: 'unhealthy-pod' };
    if (st.currentHealthy >= st.desiredHealthy && st.desiredHealthy > 0) {
      return { allowed: true, budget: undefined, reason: 'unhealthy-pod' };
    }
  }
  if (st.disruptionsAllowed === 0) {
    return {
      allowed: false,
      code: 429,
      pdb: name,
      message: EVICTION_REFUSED,
      cause: `The disruption budget ${name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently`,
    };
  }
  return { allowed: true, budget: pdb, reason: 'within-budget' };
}
