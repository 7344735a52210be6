/**
 * The object references Cluster API objects hold in their specs, read in one place: a Cluster's
 * `controlPlaneRef`, `infrastructureRef` and topology class, a TalosControlPlane's
 * `infrastructureTemplate`, the bootstrap `configRef` and `infrastructureRef` of a
 * MachineDeployment's or MachineSet's machine template and of a Machine. Both reference shapes
 * are read, v1beta2's `apiGroup` and v1beta1's `apiVersion`, since both versions are served
 * (capi.md §4.1; the fields as the CRDs in schemas/capi define them); a reference names an object
 * in the referrer's namespace unless it says otherwise. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';

export interface ObjectReference {
  /** Where the reference sits in the referrer, e.g. "spec.controlPlaneRef". */
  field: string;
  /** The named object's API group ('' the core group); undefined when the reference leaves it out. */
  group: string | undefined;
  /** Undefined when the reference leaves it out (the CRDs require it): it then names nothing. */
  kind: string | undefined;
  namespace: string | undefined;
  name: string;
}

const CORE_GROUP = 'cluster.x-k8s.io';
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** The reference fields of each referrer kind, by API group and kind. */
const FIELDS: Record<string, readonly string[][]> = {
  [`${CORE_GROUP}|Cluster`]: [
    ['spec', 'controlPlaneRef'],
    ['spec', 'infrastructureRef'],
  ],
  'controlplane.cluster.x-k8s.io|TalosControlPlane': [['spec', 'infrastructureTemplate']],
  [`${CORE_GROUP}|MachineDeployment`]: [
    ['spec', 'template', 'spec', 'bootstrap', 'configRef'],
    ['spec', 'template', 'spec', 'infrastructureRef'],
  ],
  [`${CORE_GROUP}|MachineSet`]: [
    ['spec', 'template', 'spec', 'bootstrap', 'configRef'],
    ['spec', 'template', 'spec', 'infrastructureRef'],
  ],
  [`${CORE_GROUP}|Machine`]: [
    ['spec', 'bootstrap', 'configRef'],
    ['spec', 'infrastructureRef'],
  ],
};

const at = (o: unknown, path: readonly string[]): unknown => {
  let cur = o;
  for (const k of path)
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
};
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function refAt(o: KubeObject, path: readonly string[]): ObjectReference | undefined {
  const r = at(o, path);
  const kind = text(at(r, ['kind']));
  const name = text(at(r, ['name']));
  if (name === undefined) return undefined;
  const apiGroup = at(r, ['apiGroup']);
  const apiVersion = text(at(r, ['apiVersion']));
  return {
    field: path.join('.'),
    group: typeof apiGroup === 'string' ? apiGroup : apiVersion ? groupOf(apiVersion) : undefined,
    kind,
    namespace: text(at(r, ['namespace'])) ?? o.metadata.namespace,
    name,
  };
}

/** The Cluster's ClusterClass: v1beta2 `spec.topology.classRef`, v1beta1 `spec.topology.class`. */
function classRef(o: KubeObject): ObjectReference | undefined {
  const v2 = text(at(o, ['spec', 'topology', 'classRef', 'name']));
  const v1 = text(at(o, ['spec', 'topology', 'class']));
  const name = v2 ?? v1;
  if (name === undefined) return undefined;
  const ns = v2
    ? text(at(o, ['spec', 'topology', 'classRef', 'namespace']))
    : text(at(o, ['spec', 'topology', 'classNamespace']));
  return {
    field: v2 ? 'spec.topology.classRef' : 'spec.topology.class',
    group: CORE_GROUP,
    kind: 'ClusterClass',
    namespace: ns ?? o.metadata.namespace,
    name,
  };
}

/** Every object `o` names through its reference fields (none for a kind that has none). */
export function objectReferences(o: KubeObject): ObjectReference[] {
  const key = `${groupOf(o.apiVersion)}|${o.kind}`;
  const out = (FIELDS[key] ?? []).flatMap((p) => refAt(o, p) ?? []);
  if (key === `${CORE_GROUP}|Cluster`) {
    const c = classRef(o);
    if (c) out.push(c);
  }
  return out;
}

/** The reference at `field` of `o` ("spec.controlPlaneRef"), if it holds one. */
export function referenceAt(o: KubeObject, field: string): ObjectReference | undefined {
  return objectReferences(o).find((r) => r.field === field);
}

/** Whether `o` is the object `r` names. */
export function refersTo(r: ObjectReference, o: KubeObject): boolean {
  return (
    r.kind !== undefined &&
    o.kind === r.kind &&
    o.metadata.name === r.name &&
    o.metadata.namespace === r.namespace &&
    (r.group === undefined || groupOf(o.apiVersion) === r.group)
  );
}
