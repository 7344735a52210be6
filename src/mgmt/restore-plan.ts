/**
 * How an archive is re-created (capi.md §5.1, `--from-directory`): objects in ownerRef depth order,
 * server-written metadata stripped, ownerRef UIDs rewritten to the new owners' UIDs, Clusters and
 * ClusterClasses created paused so that no controller acts before the statuses are back. Pure.
 */

import { PAUSED_ANNOTATION } from '../capi/view.js';
import { SERVER_METADATA_FIELDS } from '../util/server-metadata.js';
import type { Archive, KubeObject } from './model.js';

/** Indexes into `archive.objects` by ownerRef depth: each level only owned by earlier levels. */
export function restoreLevels(archive: Archive): number[][] {
  const index = new Map<string, number>();
  archive.objects.forEach((o, i) => {
    if (o.metadata.uid) index.set(o.metadata.uid, i);
  });
  const depth = new Map<number, number>();
  const depthOf = (i: number, seen: Set<number>): number => {
    const known = depth.get(i);
    if (known !== undefined) return known;
    if (seen.has(i)) return 0; // an ownerRef cycle: the API server would refuse nothing, so neither do we
    seen.add(i);
    let d = 0;
    for (const r of archive.objects[i]!.metadata.ownerReferences ?? []) {
      const owner = index.get(r.uid);
      if (owner !== undefined) d = Math.max(d, depthOf(owner, seen) + 1);
    }
    depth.set(i, d);
    return d;
  };
  const levels: number[][] = [];
  archive.objects.forEach((_, i) => {
    const d = depthOf(i, new Set());
    for (let l = levels.length; l <= d; l++) levels.push([]);
    levels[d]!.push(i);
  });
  return levels;
}

/**
 * For each archived object, the archived owners whose create it waits for (their new UIDs go in
 * its ownerReferences): the owners at a lower level of restoreLevels. An ownerRef cycle's back
 * edge points up a level and is not waited on, so the waits never form a cycle.
 */
export function restoreOwners(archive: Archive): number[][] {
  const levelOf = new Map<number, number>();
  restoreLevels(archive).forEach((level, d) => {
    for (const i of level) levelOf.set(i, d);
  });
  const index = new Map<string, number>();
  archive.objects.forEach((o, i) => {
    if (o.metadata.uid) index.set(o.metadata.uid, i);
  });
  return archive.objects.map((o, i) => [
    ...new Set(
      (o.metadata.ownerReferences ?? []).flatMap((r) => {
        const j = index.get(r.uid);
        return j !== undefined && levelOf.get(j)! < levelOf.get(i)! ? [j] : [];
      }),
    ),
  ]);
}

/**
 * The archived → new UIDs of object `i`'s waited-on owners (restoreOwners), for createBody: only
 * those, so a cycle's back edge is dropped whether or not its owner won the race.
 */
export function ownerUids(
  archive: Archive,
  owners: readonly number[],
  uids: ReadonlyMap<string, string>,
): Map<string, string> {
  const known = new Map<string, string>();
  for (const j of owners) {
    const was = archive.objects[j]!.metadata.uid;
    const now = was ? uids.get(was) : undefined;
    if (was && now) known.set(was, now);
  }
  return known;
}

/**
 * The body to POST for an archived object. `uids` maps archived UIDs to the ones the target gave
 * the owners already created; a reference to an owner not in the backup is dropped and reported.
 */
export function createBody(
  o: KubeObject,
  uids: Map<string, string>,
  statusSubresource: boolean,
): { body: KubeObject; droppedOwners: string[] } {
  const metadata: Record<string, unknown> = { ...o.metadata };
  for (const f of SERVER_METADATA_FIELDS) delete metadata[f];
  const droppedOwners: string[] = [];
  const refs = (o.metadata.ownerReferences ?? []).flatMap((r) => {
    const uid = uids.get(r.uid);
    if (uid === undefined) {
      droppedOwners.push(`${r.kind} ${r.name}`);
      return [];
    }
    return [{ ...r, uid }];
  });
  if (refs.length > 0) metadata['ownerReferences'] = refs;
  else delete metadata['ownerReferences'];
  const body: KubeObject = { ...o, metadata: metadata as KubeObject['metadata'] };
  // With a status subresource the server ignores status on create; it is put back afterwards.
  if (statusSubresource) delete body.status;
  if (o.kind === 'Cluster') body.spec = { ...o.spec, paused: true };
  if (o.kind === 'ClusterClass')
    body.metadata = {
      ...body.metadata,
      annotations: { ...body.metadata.annotations, [PAUSED_ANNOTATION]: 'true' },
    };
  return { body, droppedOwners };
}

/** The merge patch that returns a restored Cluster or ClusterClass to its archived pause state. */
export function unpausePatch(o: KubeObject): unknown | undefined {
  if (o.kind === 'Cluster') return { spec: { paused: o.spec?.paused ?? null } };
  if (o.kind === 'ClusterClass')
    return {
      metadata: { annotations: { [PAUSED_ANNOTATION]: o.metadata.annotations?.[PAUSED_ANNOTATION] ?? null } },
    };
  return undefined;
}
