/**
 * The workload controllers of kube-controller-manager, as far as the lab needs them: Deployments
 * make ReplicaSets, ReplicaSets, StatefulSets and DaemonSets make pods (and recreate them when
 * they disappear), statuses are kept up to date, and the garbage collector deletes what lost its
 * owner. Pure: World in, Actions out.
 *
 * Simplifications (the lab is for rehearsal, not for testing Kubernetes): a Deployment whose
 * template changed gets its new ReplicaSet at full scale at once and the old ones are scaled to
 * zero when the new one is fully ready; StatefulSets do not create PersistentVolumeClaims.
 */
import {
  clone,
  isPlainObject,
  type KObj,
  metaOf,
  type ObjectMeta,
  type OwnerReference,
} from '../apiserver/object.js';
import { matchesNodeSelection, type Toleration, taintsOf, untoleratedTaint } from './schedule.js';
import {
  type Action,
  apiPath,
  at,
  controllerRef,
  type Fields,
  isActive,
  isPodReady,
  isTerminating,
  nameOf,
  nodeNameOf,
  nsOf,
  ownedBy,
  ownerReference,
  podPath,
  spec,
  status,
  templateHash,
  uidOf,
  type World,
} from './world.js';

const HASH_LABEL = 'pod-template-hash';

function replicasOf(o: KObj): number {
  const r = spec(o).replicas;
  return typeof r === 'number' && r >= 0 ? r : 1;
}

function generationOf(o: KObj): number {
  return metaOf(o).generation ?? 1;
}

/** A Pod made from a controller's template, as the controller would POST it. */
export function podFromTemplate(
  template: unknown,
  opts: {
    namespace: string;
    owner: OwnerReference;
    name?: string;
    generateName?: string;
    labels?: Record<string, string>;
    spec?: Record<string, unknown>;
  },
): KObj {
  const t = isPlainObject(template) ? template : {};
  const tmeta: ObjectMeta = isPlainObject(t.metadata) ? (t.metadata as ObjectMeta) : {};
  const metadata: ObjectMeta = {
    namespace: opts.namespace,
    labels: { ...(tmeta.labels ?? {}), ...(opts.labels ?? {}) },
    ownerReferences: [opts.owner],
  };
  if (opts.name !== undefined) metadata.name = opts.name;
  else metadata.generateName = opts.generateName;
  if (tmeta.annotations) metadata.annotations = { ...tmeta.annotations };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: { ...clone(isPlainObject(t.spec) ? t.spec : {}), ...(opts.spec ?? {}) },
  };
}

/** Writes the status only when one of its fields differs from what the object has. */
function statusPatch(path: string, current: Fields, next: Record<string, unknown>, why: string): Action[] {
  const changed = Object.entries(next).some(([k, v]) => JSON.stringify(current?.[k]) !== JSON.stringify(v));
  return changed ? [{ kind: 'patch', path: `${path}/status`, patch: { status: next }, why }] : [];
}

/** Pods to delete when there are too many: unscheduled first, then not ready, then the newest. */
function deletionOrder(pods: KObj[]): KObj[] {
  const rank = (p: KObj): number => (nodeNameOf(p) === undefined ? 0 : isPodReady(p) ? 2 : 1);
  return [...pods].sort((a, b) => {
    const r = rank(a) - rank(b);
    if (r !== 0) return r;
    return (metaOf(b).creationTimestamp ?? '').localeCompare(metaOf(a).creationTimestamp ?? '');
  });
}

// ---- Deployments -------------------------------------------------------------------------------

export function reconcileDeployment(d: KObj, world: World): Action[] {
  if (isTerminating(d)) return [];
  const ns = nsOf(d);
  const path = apiPath('apps/v1', 'deployments', ns, nameOf(d));
  const template = spec(d).template ?? {};
  const hash = templateHash(template);
  const owned = world.replicasets.filter((rs) => ownedBy(rs, d) && !isTerminating(rs));
  const current = owned.find((rs) => metaOf(rs).labels?.[HASH_LABEL] === hash);
  const old = owned.filter((rs) => rs !== current);
  const want = replicasOf(d);
  const actions: Action[] = [];
  if (!current) {
    const selector = spec(d).selector ?? {};
    const tmeta = template.metadata ?? {};
    const labels = { ...(tmeta.labels ?? {}), [HASH_LABEL]: hash };
    const revision =
      1 +
      Math.max(
        0,
        ...owned.map((rs) => Number(metaOf(rs).annotations?.['deployment.kubernetes.io/revision'] ?? 0)),
      );
    actions.push({
      kind: 'create',
      path: apiPath('apps/v1', 'replicasets', ns),
      body: {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${nameOf(d)}-${hash}`,
          namespace: ns,
          labels,
          annotations: { 'deployment.kubernetes.io/revision': String(revision) },
          ownerReferences: [ownerReference(d, 'apps/v1', 'Deployment')],
        },
        spec: {
          replicas: want,
          selector: { ...selector, matchLabels: { ...(selector.matchLabels ?? {}), [HASH_LABEL]: hash } },
          template: { ...clone(template), metadata: { ...clone(tmeta), labels } },
        },
      },
      why: `deployment ${ns}/${nameOf(d)} has no ReplicaSet for its template`,
    });
  } else if (replicasOf(current) !== want) {
    actions.push({
      kind: 'patch',
      path: apiPath('apps/v1', 'replicasets', ns, nameOf(current)),
      patch: { spec: { replicas: want } },
      why: `scale ${nameOf(current)} to ${want}`,
    });
  }
  // Old ReplicaSets go once the new one is fully ready: never fewer ready pods than asked for.
  const currentReady = current ? (status(current).readyReplicas ?? 0) : 0;
  if (current && currentReady >= want) {
    for (const rs of old) {
      if (replicasOf(rs) === 0) continue;
      actions.push({
        kind: 'patch',
        path: apiPath('apps/v1', 'replicasets', ns, nameOf(rs)),
        patch: { spec: { replicas: 0 } },
        why: `old ReplicaSet ${nameOf(rs)} of ${nameOf(d)} scaled down`,
      });
    }
  }
  const sum = (f: (rs: KObj) => number) => owned.reduce((a, rs) => a + f(rs), 0);
  const replicas = sum((rs) => status(rs).replicas ?? 0);
  const ready = sum((rs) => status(rs).readyReplicas ?? 0);
  const updated = current ? (status(current).replicas ?? 0) : 0;
  const available = ready;
  actions.push(
    ...statusPatch(
      path,
      status(d),
      {
        observedGeneration: generationOf(d),
        replicas,
        updatedReplicas: updated,
        readyReplicas: ready,
        availableReplicas: available,
        unavailableReplicas: Math.max(0, want - available),
      },
      `status of deployment ${ns}/${nameOf(d)}`,
    ),
  );
  return actions;
}

// ---- ReplicaSets -------------------------------------------------------------------------------

export function reconcileReplicaSet(rs: KObj, world: World): Action[] {
  if (isTerminating(rs)) return [];
  const ns = nsOf(rs);
  const pods = world.pods.filter((p) => ownedBy(p, rs));
  const active = pods.filter(isActive);
  const want = replicasOf(rs);
  const actions: Action[] = [];
  const owner = ownerReference(rs, 'apps/v1', 'ReplicaSet');
  for (let i = active.length; i < want; i++) {
    actions.push({
      kind: 'create',
      path: apiPath('v1', 'pods', ns),
      body: podFromTemplate(spec(rs).template, { namespace: ns, owner, generateName: `${nameOf(rs)}-` }),
      why: `replicaset ${ns}/${nameOf(rs)} has ${active.length} of ${want} pods`,
    });
  }
  for (const p of deletionOrder(active).slice(0, Math.max(0, active.length - want))) {
    actions.push({
      kind: 'delete',
      path: podPath(p),
      uid: uidOf(p),
      why: `replicaset ${nameOf(rs)} scaled down`,
    });
  }
  const ready = active.filter(isPodReady).length;
  actions.push(
    ...statusPatch(
      apiPath('apps/v1', 'replicasets', ns, nameOf(rs)),
      status(rs),
      {
        observedGeneration: generationOf(rs),
        replicas: active.length,
        fullyLabeledReplicas: active.length,
        readyReplicas: ready,
        availableReplicas: ready,
      },
      `status of replicaset ${ns}/${nameOf(rs)}`,
    ),
  );
  return actions;
}

// ---- StatefulSets ------------------------------------------------------------------------------

function ordinalOf(sts: KObj, pod: KObj): number | undefined {
  const m = new RegExp(`^${nameOf(sts).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`).exec(nameOf(pod));
  return m ? Number(m[1]) : undefined;
}

export function reconcileStatefulSet(sts: KObj, world: World): Action[] {
  if (isTerminating(sts)) return [];
  const ns = nsOf(sts);
  const want = replicasOf(sts);
  const parallel = spec(sts).podManagementPolicy === 'Parallel';
  const pods = world.pods.filter((p) => ownedBy(p, sts));
  const byOrdinal = new Map<number, KObj>();
  for (const p of pods) {
    const o = ordinalOf(sts, p);
    if (o !== undefined) byOrdinal.set(o, p);
  }
  const owner = ownerReference(sts, 'apps/v1', 'StatefulSet');
  const actions: Action[] = [];
  for (let i = 0; i < want; i++) {
    const p = byOrdinal.get(i);
    if (!p) {
      const name = `${nameOf(sts)}-${i}`;
      const podSpec: Record<string, unknown> = { hostname: name };
      if (typeof spec(sts).serviceName === 'string') podSpec.subdomain = spec(sts).serviceName;
      actions.push({
        kind: 'create',
        path: apiPath('v1', 'pods', ns),
        body: podFromTemplate(spec(sts).template, {
          namespace: ns,
          owner,
          name,
          labels: { 'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(i) },
          spec: podSpec,
        }),
        why: `statefulset ${ns}/${nameOf(sts)} is missing ordinal ${i}`,
      });
      if (!parallel) break;
      continue;
    }
    // OrderedReady: ordinal i+1 waits until i is running and ready (a terminating one is recreated
    // under the same name only once it is gone).
    if (!parallel && (!isActive(p) || !isPodReady(p))) break;
  }
  const extra = [...byOrdinal.entries()]
    .filter(([o, p]) => o >= want && isActive(p))
    .sort(([a], [b]) => b - a);
  for (const [, p] of parallel ? extra : extra.slice(0, 1)) {
    actions.push({
      kind: 'delete',
      path: podPath(p),
      uid: uidOf(p),
      why: `statefulset ${nameOf(sts)} scaled down`,
    });
  }
  const active = pods.filter(isActive);
  const ready = active.filter(isPodReady).length;
  actions.push(
    ...statusPatch(
      apiPath('apps/v1', 'statefulsets', ns, nameOf(sts)),
      status(sts),
      {
        observedGeneration: generationOf(sts),
        replicas: active.length,
        readyReplicas: ready,
        currentReplicas: active.length,
        updatedReplicas: active.length,
        availableReplicas: ready,
      },
      `status of statefulset ${ns}/${nameOf(sts)}`,
    ),
  );
  return actions;
}

// ---- DaemonSets --------------------------------------------------------------------------------

/** The tolerations the DaemonSet controller adds to every daemon pod (util.AddOrUpdateDaemonPodTolerations). */
export function daemonTolerations(hostNetwork: boolean): Toleration[] {
  const t: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork)
    t.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  return t;
}

function withDaemonTolerations(template: unknown): Toleration[] {
  const tolerations = at(template, 'spec', 'tolerations');
  const own: Toleration[] = Array.isArray(tolerations) ? tolerations : [];
  const added = daemonTolerations(at(template, 'spec', 'hostNetwork') === true).filter(
    (t) => !own.some((o) => o.key === t.key && o.effect === t.effect),
  );
  return [...own, ...added];
}

/** nodeShouldRunDaemonPod: selector/affinity and taints (NoSchedule/NoExecute) with the added tolerations. */
export function shouldRunDaemonPod(ds: KObj, node: KObj): boolean {
  const template = spec(ds).template ?? {};
  const probe: KObj = { metadata: { name: 'probe' }, spec: template.spec ?? {} };
  if (!matchesNodeSelection(probe, node)) return false;
  // A not-ready node still gets its daemons once tolerated; NoSchedule taints count at placement.
  return untoleratedTaint(taintsOf(node), withDaemonTolerations(template)) === undefined;
}

export function reconcileDaemonSet(ds: KObj, world: World): Action[] {
  if (isTerminating(ds)) return [];
  const ns = nsOf(ds);
  const owner = ownerReference(ds, 'apps/v1', 'DaemonSet');
  const template = spec(ds).template ?? {};
  const pods = world.pods.filter((p) => ownedBy(p, ds));
  const actions: Action[] = [];
  let desired = 0;
  let scheduled = 0;
  let ready = 0;
  let misscheduled = 0;
  for (const node of world.nodes) {
    const nodeName = nameOf(node);
    const onNode = pods.filter((p) => daemonTarget(p) === nodeName && isActive(p));
    if (!shouldRunDaemonPod(ds, node)) {
      misscheduled += onNode.length;
      for (const p of onNode) {
        actions.push({
          kind: 'delete',
          path: podPath(p),
          uid: uidOf(p),
          why: `daemon pod on ineligible node ${nodeName}`,
        });
      }
      continue;
    }
    desired++;
    if (onNode.length > 0) {
      if (onNode.some((p) => nodeNameOf(p) === nodeName)) scheduled++;
      if (onNode.some(isPodReady)) ready++;
      for (const p of onNode.slice(1)) {
        actions.push({
          kind: 'delete',
          path: podPath(p),
          uid: uidOf(p),
          why: `duplicate daemon pod on ${nodeName}`,
        });
      }
      continue;
    }
    // A terminating daemon pod blocks its replacement until it is gone, as in the real controller.
    if (pods.some((p) => daemonTarget(p) === nodeName && isTerminating(p))) continue;
    actions.push({
      kind: 'create',
      path: apiPath('v1', 'pods', ns),
      body: podFromTemplate(template, {
        namespace: ns,
        owner,
        generateName: `${nameOf(ds)}-`,
        spec: {
          tolerations: withDaemonTolerations(template),
          affinity: {
            ...(template.spec?.affinity ?? {}),
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] },
                ],
              },
            },
          },
        },
      }),
      why: `daemonset ${ns}/${nameOf(ds)} has no pod on ${nodeName}`,
    });
  }
  actions.push(
    ...statusPatch(
      apiPath('apps/v1', 'daemonsets', ns, nameOf(ds)),
      status(ds),
      {
        observedGeneration: generationOf(ds),
        desiredNumberScheduled: desired,
        currentNumberScheduled: scheduled,
        updatedNumberScheduled: scheduled,
        numberReady: ready,
        numberAvailable: ready,
        numberUnavailable: Math.max(0, desired - ready),
        numberMisscheduled: misscheduled,
      },
      `status of daemonset ${ns}/${nameOf(ds)}`,
    ),
  );
  return actions;
}

/** The node a daemon pod is for: where it is bound, or its metadata.name node affinity. */
export function daemonTarget(pod: KObj): string | undefined {
  const bound = nodeNameOf(pod);
  if (bound) return bound;
  const terms =
    spec(pod).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  for (const term of Array.isArray(terms) ? terms : []) {
    for (const f of Array.isArray(term?.matchFields) ? term.matchFields : []) {
      if (f?.key === 'metadata.name' && f.operator === 'In' && Array.isArray(f.values)) return f.values[0];
    }
  }
  return undefined;
}

// ---- garbage collector -------------------------------------------------------------------------

const OWNER_KINDS: Record<string, keyof World> = {
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
  Deployment: 'deployments',
};

/** Objects whose controlling owner is gone (background propagation). Unknown owner kinds are left alone. */
export function collectGarbage(world: World): Action[] {
  const actions: Action[] = [];
  const exists = (kind: string, uid: string): boolean | undefined => {
    const key = OWNER_KINDS[kind];
    if (!key) return undefined;
    return (world[key] as KObj[]).some((o) => uidOf(o) === uid);
  };
  for (const rs of world.replicasets) {
    const ref = controllerRef(rs);
    if (ref && !isTerminating(rs) && exists(ref.kind, ref.uid) === false) {
      actions.push({
        kind: 'delete',
        path: apiPath('apps/v1', 'replicasets', nsOf(rs), nameOf(rs)),
        uid: uidOf(rs),
        why: `owner ${ref.kind} ${ref.name} is gone`,
      });
    }
  }
  for (const p of world.pods) {
    const ref = controllerRef(p);
    if (ref && !isTerminating(p) && exists(ref.kind, ref.uid) === false) {
      actions.push({
        kind: 'delete',
        path: podPath(p),
        uid: uidOf(p),
        why: `owner ${ref.kind} ${ref.name} is gone`,
      });
    }
  }
  return actions;
}

/** Every workload controller and the garbage collector, in one pass. */
export function reconcileWorkloads(world: World): Action[] {
  return [
    ...world.deployments.flatMap((d) => reconcileDeployment(d, world)),
    ...world.replicasets.flatMap((rs) => reconcileReplicaSet(rs, world)),
    ...world.statefulsets.flatMap((s) => reconcileStatefulSet(s, world)),
    ...world.daemonsets.flatMap((ds) => reconcileDaemonSet(ds, world)),
    ...collectGarbage(world),
  ];
}
