/**
 * The subresources that are verbs rather than parts of an object: pods/eviction (the budget check
 * and its bookkeeping), pods/binding (what a scheduler posts) and the scale subresource (autoscaling/v1 Scale
 * over the replicas field of a workload or custom resource).
 */

import { labelSelectorString } from '../../util/label-selector.js';
import type { EvictionLog } from './eviction-log.js';
import { clone, isPlainObject, type KObj, metaOf, rfc3339, setValueAt, valueAt } from './object.js';
import { computePdbStatus, decideEviction, type PdbStatus } from './pdb.js';
import { gr, type Registry, type RequestUser } from './registry.js';
import { collectionPrefix, def, type ResourceDef } from './resources.js';
import {
  ApiError,
  badRequest,
  conflict,
  forbiddenObject,
  internalError,
  invalid,
  type Status,
  success,
  tooManyRequests,
} from './status.js';
import { storableForWrite } from './storable.js';

const PODS = def('', 'pods');
const PDBS = def('policy', 'poddisruptionbudgets');

/** A fault injected into evictions: return a message to refuse the pod's eviction with 429. */
export type EvictionFault = (pod: { namespace: string; name: string }) => string | undefined;

function setCondition(obj: KObj, condition: Record<string, unknown>): void {
  const status: Record<string, unknown> = isPlainObject(obj.status) ? obj.status : {};
  obj.status = status;
  const conds = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : [];
  status.conditions = [...conds.filter((c) => c.type !== condition.type), condition];
}

export type EvictionContext = {
  user: RequestUser;
  instance: string;
  log: EvictionLog;
  fault: EvictionFault | undefined;
};

const MAX_EVICTION_ATTEMPTS = 5;

/**
 * POST pods/NAME/eviction: 201 when the pod may go (it is then deleted gracefully and its budget
 * records it in disruptedPods), 429 with the DisruptionBudget cause when its budget has no room.
 */
export async function evict(
  reg: Registry,
  ns: string,
  name: string,
  body: unknown,
  ctx: EvictionContext,
): Promise<Status> {
  if (!isPlainObject(body)) throw badRequest('the request body must be a policy/v1 Eviction');
  const evName = isPlainObject(body.metadata) ? body.metadata.name : undefined;
  if (evName !== undefined && evName !== name)
    throw badRequest('name in URL does not match name in Eviction object');
  const deleteOptions = isPlainObject(body.deleteOptions) ? body.deleteOptions : {};
  const base = {
    at: rfc3339(reg.now()),
    instance: ctx.instance,
    user: ctx.user.name,
    namespace: ns,
    pod: name,
  };
  for (let attempt = 1; attempt <= MAX_EVICTION_ATTEMPTS; attempt++) {
    const pod = await reg.get(PODS, ns, name);
    const { pods, workloads } = await reg.namespaceContext(ns);
    const stored = (await reg.store.list(collectionPrefix(PDBS, ns))).items;
    const budgets = stored.map((s) => {
      const o = reg.raw(PDBS, s);
      o.status = computePdbStatus(o, pods, workloads, reg.now());
      return { stored: s, obj: o };
    });
    const decision = decideEviction(
      pod,
      budgets.map((b) => b.obj),
    );
    const budgetOf = (pdbName: string | undefined) => {
      const st = budgets.find((b) => metaOf(b.obj).name === pdbName)?.obj.status as PdbStatus | undefined;
      return (
        st && {
          budget: {
            currentHealthy: st.currentHealthy,
            desiredHealthy: st.desiredHealthy,
            disruptionsAllowed: st.disruptionsAllowed,
            expectedPods: st.expectedPods,
          },
        }
      );
    };
    const injected = ctx.fault?.({ namespace: ns, name });
    if (injected !== undefined) {
      ctx.log.record({ ...base, outcome: 'refused', code: 429, reason: injected });
      throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: 'DisruptionBudget', message: injected },
      ]);
    }
    if (!decision.allowed) {
      const pdbField = decision.pdb !== undefined ? { pdb: decision.pdb, ...budgetOf(decision.pdb) } : {};
      ctx.log.record({
        ...base,
        outcome: 'refused',
        code: decision.code,
        reason: decision.cause ?? decision.message,
        ...pdbField,
      });
      if (decision.code === 429) {
        throw tooManyRequests(
          decision.message,
          decision.cause ? [{ reason: 'DisruptionBudget', message: decision.cause }] : [],
        );
      }
      if (decision.code === 403) throw forbiddenObject(gr(PDBS), decision.pdb ?? '', decision.message);
      throw internalError(decision.message);
    }
    const budget = decision.budget;
    if (budget) {
      const st = clone(budget.status as PdbStatus);
      st.disruptedPods = { ...(st.disruptedPods ?? {}), [name]: rfc3339(reg.now()) };
      st.disruptionsAllowed -= 1;
      const entry = budgets.find((b) => b.obj === budget)!;
      const next = clone(entry.stored.value);
      next.status = st;
      // The budget is decremented with compare-and-swap: two evictions racing for the last
      // disruption cannot both win; the loser recomputes and is refused.
      const res = await reg.store.update(entry.stored.key, storableForWrite(next), entry.stored.modRevision);
      if (!res.ok) continue;
    }
    const pdbName = budget ? metaOf(budget).name : undefined;
    ctx.log.record({
      ...base,
      outcome: 'evicted',
      code: 201,
      reason: decision.reason,
      ...(pdbName !== undefined && { pdb: pdbName, ...budgetOf(pdbName) }),
    });
    try {
      if (metaOf(pod).deletionTimestamp === undefined) {
        await reg.mutate(PODS, ns, name, 'status', (cur) => {
          setCondition(cur, {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
            lastTransitionTime: rfc3339(reg.now()),
          });
          return cur;
        });
      }
      const grace = deleteOptions.gracePeriodSeconds;
      const pre = isPlainObject(deleteOptions.preconditions) ? deleteOptions.preconditions : undefined;
      await reg.delete(PODS, ns, name, {
        ...(typeof grace === 'number' && { gracePeriodSeconds: grace }),
        ...(pre && { preconditions: pre as { uid?: string; resourceVersion?: string } }),
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    return success(undefined, 201);
  }
  ctx.log.record({ ...base, outcome: 'failed', code: 429, reason: 'too many conflicting evictions' });
  throw tooManyRequests('Cannot evict pod: too many concurrent evictions, try again', [], 1);
}

/** POST pods/NAME/binding: what a scheduler does to place a pod. */
export async function bind(reg: Registry, ns: string, name: string, body: unknown): Promise<Status> {
  const target = isPlainObject(body) && isPlainObject(body.target) ? body.target.name : undefined;
  if (typeof target !== 'string' || target === '') {
    throw invalid('Binding', '', name, [{ field: 'target.name', type: 'Required', detail: '' }]);
  }
  await reg.mutate(PODS, ns, name, 'internal', (cur) => {
    if (metaOf(cur).deletionTimestamp !== undefined) {
      throw conflict(gr(PODS), name, `pod ${name} is being deleted, cannot be assigned to a host`);
    }
    if (isPlainObject(cur.spec) && cur.spec.nodeName) {
      throw conflict(
        gr(PODS),
        name,
        `pod ${name} is already assigned to node "${String(cur.spec.nodeName)}"`,
      );
    }
    cur.spec = { ...(cur.spec ?? {}), nodeName: target };
    setCondition(cur, {
      type: 'PodScheduled',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: rfc3339(reg.now()),
    });
    delete cur.metadata.resourceVersion;
    return cur;
  });
  return success(undefined, 201);
}

// ---- scale ------------------------------------------------------------------------------------

function scaleOf(d: ResourceDef, obj: KObj): KObj {
  const paths = d.scale!;
  const m = metaOf(obj);
  const sel = paths.labelSelectorPath ? valueAt(obj, paths.labelSelectorPath) : undefined;
  const specReplicas = valueAt(obj, paths.specReplicasPath);
  const statusReplicas = valueAt(obj, paths.statusReplicasPath);
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: m.name,
      ...(m.namespace !== undefined && { namespace: m.namespace }),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: typeof specReplicas === 'number' ? specReplicas : 0 },
    status: {
      replicas: typeof statusReplicas === 'number' ? statusReplicas : 0,
      ...(sel !== undefined && { selector: typeof sel === 'string' ? sel : labelSelectorString(sel) }),
    },
  };
}

export async function getScale(
  reg: Registry,
  d: ResourceDef,
  ns: string | undefined,
  name: string,
): Promise<KObj> {
  return scaleOf(d, await reg.get(d, ns, name));
}

export async function updateScale(
  reg: Registry,
  d: ResourceDef,
  ns: string | undefined,
  name: string,
  body: unknown,
  opts: { dryRun?: boolean } = {},
): Promise<KObj> {
  const replicas = isPlainObject(body) && isPlainObject(body.spec) ? body.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', name, [
      {
        field: 'spec.replicas',
        type: 'Invalid',
        value: replicas ?? null,
        detail: 'must be greater than or equal to 0',
      },
    ]);
  }
  const rv = isPlainObject(body) && isPlainObject(body.metadata) ? body.metadata.resourceVersion : undefined;
  const obj = await reg.mutate(
    d,
    ns,
    name,
    'internal',
    (cur) => {
      setValueAt(cur as Record<string, unknown>, d.scale!.specReplicasPath, replicas);
      if (typeof rv === 'string' && rv !== '') cur.metadata.resourceVersion = rv;
      else delete cur.metadata.resourceVersion;
      return cur;
    },
    opts,
  );
  return scaleOf(d, obj);
}
