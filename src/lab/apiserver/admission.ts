/**
 * What a real API server's strategies, defaulting and admission plugins do to an object on
 * create and update, for the behaviours ferry and the lab depend on: status reset, defaults that
 * change meaning (pod grace, replicas), the not-ready taint on new Nodes, namespace and CRD status,
 * and the validation errors (required names, immutable fields, selector/template mismatch). Pure.
 */
import { randomInt } from 'node:crypto';
import { fromLabelSelector, matchesLabels, type SelectorError } from '../../util/label-selector.js';
import { clone, deepEqual, isPlainObject, type KObj, metaOf, valueAt } from './object.js';
import type { ResourceDef } from './resources.js';
import type { FieldError } from './status.js';

const LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function validateName(def: ResourceDef, name: string): FieldError[] {
  if (def.nameRule === 'path-segment') {
    // apimachinery's ValidatePathSegmentName: anything but ".", ".." and names holding "/" or "%".
    if (name === '.' || name === '..' || /[/%]/.test(name)) {
      return [
        {
          field: 'metadata.name',
          type: 'Invalid',
          value: name,
          detail: `may not be '.' or '..' and may not contain '/' or '%'`,
        },
      ];
    }
    return [];
  }
  if (def.nameRule === 'label') {
    if (name.length > 63 || !LABEL_RE.test(name)) {
      return [
        {
          field: 'metadata.name',
          type: 'Invalid',
          value: name,
          detail:
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        },
      ];
    }
    return [];
  }
  if (name.length > 253 || !SUBDOMAIN_RE.test(name)) {
    return [
      {
        field: 'metadata.name',
        type: 'Invalid',
        value: name,
        detail:
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      },
    ];
  }
  return [];
}

const NAME_SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** names.SimpleNameGenerator: the prefix (cut to fit) and five random characters. */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_SUFFIX_ALPHABET[randomInt(NAME_SUFFIX_ALPHABET.length)];
  return `${prefix.slice(0, 63 - 5)}${suffix}`;
}

const is = (def: ResourceDef, group: string, plural: string): boolean =>
  !def.custom && def.group === group && def.plural === plural;

function qosClass(spec: Record<string, unknown>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [
    ...((spec.containers as Record<string, unknown>[] | undefined) ?? []),
    ...((spec.initContainers as Record<string, unknown>[] | undefined) ?? []),
  ];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isPlainObject(c.resources) ? c.resources : {};
    const req = isPlainObject(res.requests) ? res.requests : {};
    const lim = isPlainObject(res.limits) ? res.limits : {};
    if (Object.keys(req).length > 0 || Object.keys(lim).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      const l = lim[r];
      const q = req[r] ?? l;
      if (l === undefined || q !== l) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' } as const;

/** SetDefaults_Pod/PodSpec: part of decoding, so every write of a pod gets them. */
function podSpecDefaults(pod: KObj): void {
  const spec: Record<string, unknown> = isPlainObject(pod.spec) ? pod.spec : {};
  pod.spec = spec;
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
}

/** What admission plugins add to a new pod, and the status a new pod starts with. */
function admitPod(pod: KObj): void {
  const spec = pod.spec as Record<string, unknown>;
  // The Priority admission plugin.
  spec.priority ??= 0;
  // The ServiceAccount admission plugin.
  spec.serviceAccountName ??= 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  // The DefaultTolerationSeconds admission plugin.
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as Record<string, unknown>[]) : [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerations.some((t) => t.key === key && (t.effect === 'NoExecute' || t.effect === undefined))) {
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
  }
  spec.tolerations = tolerations;
  pod.status = { phase: 'Pending', qosClass: qosClass(spec) };
}

function serviceDefaults(svc: KObj): void {
  const spec: Record<string, unknown> = isPlainObject(svc.spec) ? svc.spec : {};
  svc.spec = spec;
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (Array.isArray(spec.ports)) {
    for (const p of spec.ports as Record<string, unknown>[]) {
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
    }
  }
}

function allocateClusterIP(svc: KObj): void {
  const spec = svc.spec as Record<string, unknown>;
  if (spec.type !== 'ExternalName' && spec.clusterIP === undefined) {
    // Random in 10.96.0.0/16 past .0.x (kubernetes.default takes 10.96.0.1): no allocator is shared
    // between instances, so two Services may collide; nothing in the lab routes by it.
    spec.clusterIP = `10.96.${randomInt(1, 255)}.${randomInt(1, 255)}`;
  }
  if (typeof spec.clusterIP === 'string' && spec.clusterIP !== '' && spec.clusterIPs === undefined) {
    spec.clusterIPs = [spec.clusterIP];
  }
}

function defaultWorkload(def: ResourceDef, obj: KObj): void {
  const spec: Record<string, unknown> = isPlainObject(obj.spec) ? obj.spec : {};
  obj.spec = spec;
  if (def.plural !== 'daemonsets') spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  switch (def.plural) {
    case 'deployments':
      spec.progressDeadlineSeconds ??= 600;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      break;
    case 'statefulsets':
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
      break;
    case 'daemonsets':
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
      break;
  }
}

function crdStatus(crd: KObj, now: string): Record<string, unknown> {
  const spec = isPlainObject(crd.spec) ? crd.spec : {};
  const names = isPlainObject(spec.names) ? clone(spec.names as Record<string, unknown>) : {};
  if (typeof names.kind === 'string') {
    names.singular ??= names.kind.toLowerCase();
    names.listKind ??= `${names.kind}List`;
  }
  const versions = Array.isArray(spec.versions)
    ? (spec.versions as { name: string; storage?: boolean }[])
    : [];
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: 'True',
    reason,
    message,
    lastTransitionTime: now,
  });
  return {
    acceptedNames: names,
    conditions: [
      condition('NamesAccepted', 'NoConflicts', 'no conflicts found'),
      condition('Established', 'InitialNamesAccepted', 'the initial names have been accepted'),
    ],
    storedVersions: versions.filter((v) => v.storage).map((v) => v.name),
  };
}

/**
 * What decoding does to every written object: defaults (SetDefaults_*) and conversions such as a
 * Secret's write-only `stringData` folded into `data` (base64).
 */
export function applyDefaults(def: ResourceDef, obj: KObj): void {
  if (def.custom) return;
  if (is(def, '', 'secrets') && isPlainObject(obj.stringData)) {
    const data: Record<string, unknown> = isPlainObject(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    obj.data = data;
    delete obj.stringData;
  } else if (is(def, '', 'pods')) podSpecDefaults(obj);
  else if (is(def, '', 'services')) serviceDefaults(obj);
  else if (def.group === 'apps') defaultWorkload(def, obj);
}

/** Defaults, status reset and admission on create. `obj` already has its name, namespace, uid and timestamps. */
export function admitCreate(def: ResourceDef, obj: KObj, now: string): void {
  applyDefaults(def, obj);
  if (def.statusOnCreate === 'clear') delete obj.status;
  if (def.custom) return;
  if (is(def, '', 'pods')) admitPod(obj);
  else if (is(def, '', 'nodes')) {
    const spec: Record<string, unknown> = isPlainObject(obj.spec) ? obj.spec : {};
    obj.spec = spec;
    const taints = Array.isArray(spec.taints) ? (spec.taints as Record<string, unknown>[]) : [];
    // The TaintNodesByCondition admission plugin: only the node lifecycle controller lifts it.
    if (!taints.some((t) => t.key === NOT_READY_TAINT.key && t.effect === NOT_READY_TAINT.effect)) {
      taints.push({ ...NOT_READY_TAINT });
    }
    spec.taints = taints;
  } else if (is(def, '', 'namespaces')) {
    const m = obj.metadata;
    m.labels = { ...(m.labels ?? {}), 'kubernetes.io/metadata.name': m.name! };
    obj.spec = { finalizers: ['kubernetes'], ...(isPlainObject(obj.spec) ? obj.spec : {}) };
    obj.status = { phase: 'Active' };
  } else if (is(def, '', 'services')) allocateClusterIP(obj);
  else if (is(def, 'apiextensions.k8s.io', 'customresourcedefinitions')) obj.status = crdStatus(obj, now);
}

function selectorErrors(kind: string, obj: KObj): FieldError[] {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  if (spec.selector === undefined || spec.selector === null) {
    return [{ field: 'spec.selector', type: 'Required', detail: '' }];
  }
  let reqs: ReturnType<typeof fromLabelSelector>;
  try {
    reqs = fromLabelSelector(spec.selector);
  } catch (err) {
    return [
      {
        field: 'spec.selector',
        type: 'Invalid',
        value: spec.selector,
        detail: (err as SelectorError).message,
      },
    ];
  }
  if (!reqs || reqs.length === 0) {
    return [
      {
        field: 'spec.selector',
        type: 'Invalid',
        value: spec.selector,
        detail: `empty selector is invalid for ${kind.toLowerCase()}`,
      },
    ];
  }
  const labels = valueAt(obj, 'spec.template.metadata.labels') as Record<string, string> | undefined;
  if (!matchesLabels(reqs, labels)) {
    return [
      {
        field: 'spec.template.metadata.labels',
        type: 'Invalid',
        value: labels ?? {},
        detail: '`selector` does not match template `labels`',
      },
    ];
  }
  return [];
}

/** Validation shared by create and update (the object as it would be stored). */
export function validateObject(def: ResourceDef, obj: KObj): FieldError[] {
  if (def.custom) return [];
  const errs: FieldError[] = [];
  if (def.group === 'apps' || is(def, 'batch', 'jobs')) {
    if (!(is(def, 'batch', 'jobs') && valueAt(obj, 'spec.selector') === undefined))
      errs.push(...selectorErrors(def.kind, obj));
  }
  if (is(def, 'policy', 'poddisruptionbudgets')) {
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    if (spec.minAvailable != null && spec.maxUnavailable != null) {
      errs.push({
        field: 'spec',
        type: 'Invalid',
        value: spec,
        detail: 'minAvailable and maxUnavailable cannot be both set',
      });
    }
    if (spec.selector != null) {
      try {
        fromLabelSelector(spec.selector);
      } catch (err) {
        errs.push({
          field: 'spec.selector',
          type: 'Invalid',
          value: spec.selector,
          detail: (err as Error).message,
        });
      }
    }
  }
  if (is(def, '', 'pods')) {
    const containers = valueAt(obj, 'spec.containers');
    if (!Array.isArray(containers) || containers.length === 0) {
      errs.push({ field: 'spec.containers', type: 'Required', detail: '' });
    }
  }
  if (is(def, 'apiextensions.k8s.io', 'customresourcedefinitions')) {
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    const plural = valueAt(obj, 'spec.names.plural');
    const want = `${String(plural)}.${String(spec.group)}`;
    if (metaOf(obj).name !== want) {
      errs.push({
        field: 'metadata.name',
        type: 'Invalid',
        value: metaOf(obj).name,
        detail: 'must be spec.names.plural+"."+spec.group',
      });
    }
    if (!valueAt(obj, 'spec.names.kind'))
      errs.push({ field: 'spec.names.kind', type: 'Required', detail: '' });
    if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
      errs.push({
        field: 'spec.scope',
        type: 'NotSupported',
        value: spec.scope ?? '',
        detail: 'supported values: "Cluster", "Namespaced"',
      });
    }
    const versions = Array.isArray(spec.versions) ? (spec.versions as { storage?: boolean }[]) : [];
    if (versions.filter((v) => v.storage).length !== 1) {
      errs.push({
        field: 'spec.versions',
        type: 'Invalid',
        value: versions.length,
        detail: 'must have exactly one version marked as storage version',
      });
    }
  }
  return errs;
}

/** Pod spec fields a pod update may change (validation.ValidatePodUpdate). */
function podSpecWithoutMutable(spec: unknown): unknown {
  if (!isPlainObject(spec)) return spec;
  const s = clone(spec);
  for (const list of ['containers', 'initContainers']) {
    if (Array.isArray(s[list])) for (const c of s[list] as Record<string, unknown>[]) delete c.image;
  }
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  delete s.schedulingGates;
  return s;
}

/** Fields that must not change on update. `next` is the candidate, `prev` the stored object. */
export function validateUpdate(def: ResourceDef, prev: KObj, next: KObj): FieldError[] {
  const errs: FieldError[] = [];
  for (const path of def.immutable) {
    const a = valueAt(prev, path);
    const b = valueAt(next, path);
    if (a !== undefined && !deepEqual(a, b))
      errs.push({ field: path, type: 'Invalid', value: b ?? null, detail: 'field is immutable' });
  }
  if (is(def, '', 'pods') && !deepEqual(podSpecWithoutMutable(prev.spec), podSpecWithoutMutable(next.spec))) {
    errs.push({
      field: 'spec',
      type: 'Forbidden',
      detail:
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    });
  }
  return [...errs, ...validateObject(def, next)];
}

/** Values a PUT may leave out that the server keeps from the stored object (allocated fields). */
export function carryAllocated(def: ResourceDef, prev: KObj, next: KObj): void {
  if (is(def, '', 'services') && isPlainObject(next.spec) && isPlainObject(prev.spec)) {
    next.spec.clusterIP ??= prev.spec.clusterIP;
    next.spec.clusterIPs ??= prev.spec.clusterIPs;
  }
}
