/**
 * Whether the spec references of an archive's Clusters, TalosControlPlanes and MachineDeployments
 * (capi/refs.ts) name objects that are there. A restored Cluster whose controlPlaneRef names
 * nothing has lost its control plane and the TalosControlPlane's `status.bootstrapped` with it:
 * the split-brain of capi.md H2 once a control plane is created again. A backup refuses such an
 * archive, a restore refuses it before the first write and checks the target after its writes.
 */
import { type ObjectReference, objectReferences, refersTo } from '../capi/refs.js';
import { objectName } from '../capi/view.js';
import { FerryError } from '../errors.js';
import { describeObject, type KubeObject } from './model.js';

/** The referrers whose references must resolve: the objects a controller reconciles from them. */
const REFERRERS = new Set([
  'cluster.x-k8s.io|Cluster',
  'controlplane.cluster.x-k8s.io|TalosControlPlane',
  'cluster.x-k8s.io|MachineDeployment',
]);

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

export function isCheckedReferrer(o: KubeObject): boolean {
  return REFERRERS.has(`${groupOf(o.apiVersion)}|${o.kind}`);
}

export interface Unresolved {
  /** "Cluster ns/name" */
  referrer: string;
  /** "spec.controlPlaneRef" */
  field: string;
  reference: ObjectReference;
}

/** How messages name the object a reference names. */
export function describeReference(r: ObjectReference): string {
  return `${objectName({ kind: r.kind ?? '(no kind)', namespace: r.namespace, name: r.name })}${r.group ? ` (${r.group})` : ''}`;
}

/** Each reference of a checked referrer among `referrers` that names no object of `held`. */
export function unresolvedReferences(
  referrers: readonly KubeObject[],
  held: readonly KubeObject[],
): Unresolved[] {
  return referrers.filter(isCheckedReferrer).flatMap((o) =>
    objectReferences(o)
      .filter((r) => !held.some((h) => refersTo(r, h)))
      .map((reference) => ({ referrer: describeObject(o), field: reference.field, reference })),
  );
}

/** One line per unresolved reference: `where` is what does not hold the named object ("the backup"). */
export function describeUnresolved(u: Unresolved, where: string): string {
  return `${u.referrer} ${u.field} names ${describeReference(u.reference)}, which ${where} does not hold`;
}

/**
 * Refuses (exit 3, before anything is stored) an archive in which a checked reference names an
 * object the archive does not hold: restored, it would look complete and verify, and not be.
 */
export function refuseUnresolved(objects: readonly KubeObject[]): void {
  const unresolved = unresolvedReferences(objects, objects);
  if (unresolved.length === 0) return;
  throw new FerryError(
    'gate',
    `refusing to back up: ${unresolved.length} reference(s) name objects the backup would not hold, so a restore of it would miss them:\n  ${unresolved.map((u) => describeUnresolved(u, 'the backup')).join('\n  ')}`,
    {
      remediation:
        'nothing was stored. The named object is missing from the management cluster, or its kind is one a backup does not read (a CRD neither of a *.cluster.x-k8s.io group nor labelled clusterctl.cluster.x-k8s.io): re-create it (for an adopted cluster, `ferry capi adopt` again re-creates what is missing) or correct the reference, then back up again',
    },
  );
}
