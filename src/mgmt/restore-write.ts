/**
 * The one write pipeline of a restore through the API (capi.md §5.1): the missing namespaces, then
 * each missing object as soon as its owners exist (ownerRef UIDs rewritten, Clusters and
 * ClusterClasses paused) with its status put back right after (what move drops, H12), then every
 * status an object already present lacks, then the archived pause state. A whole restore and the
 * completion of an interrupted one differ only in what the target holds already (`start`).
 */

import { FerryError } from '../errors.js';
import { isKubeApiError } from '../ports/kube.js';
import { inDependencyOrder, inParallel } from '../util/parallel.js';
import { canonicalJson } from './canonical.js';
import { type MgmtKube, refOf } from './kube.js';
import { type Archive, describeObject, type KubeObject } from './model.js';
import { createBody, ownerUids, restoreOwners, unpausePatch } from './restore-plan.js';

/**
 * Concurrent writes to the target by default (`--write-concurrency`): enough to hide round trips,
 * well under kube-apiserver's default --max-mutating-requests-inflight of 200.
 */
export const WRITE_CONCURRENCY = 16;

/** What the target holds of the archive before the first write. */
export type RestoreStart =
  /**
   * Nothing (checkTarget proved it): every object of the backup there after a failure was created
   * by this run, so a failure deletes them again and nothing is left half-applied.
   */
  | { kind: 'empty'; existingNamespaces: ReadonlySet<string> }
  /**
   * What an interrupted restore into ferry's own kind cluster created (index into
   * `archive.objects` → the object as the target holds it). Kept, and a failure deletes nothing:
   * Clusters were created paused, but a deleted CAPI object's controllers could tear down the
   * machines behind it.
   */
  | {
      kind: 'interrupted';
      existingNamespaces: ReadonlySet<string>;
      present: ReadonlyMap<number, KubeObject>;
    };

export interface Written {
  created: number;
  statuses: number;
  /** The namespaces this run created. */
  namespaces: string[];
  /** Archived UID → the UID on the target, for every object created or found. */
  uids: Record<string, string>;
  droppedOwners: string[];
}

export async function writeArchive(o: {
  kube: MgmtKube;
  archive: Archive;
  start: RestoreStart;
  log: (line: string) => void;
  /** Writes in flight at most (default WRITE_CONCURRENCY). */
  writeConcurrency?: number | undefined;
}): Promise<Written> {
  const { kube, archive, start, log } = o;
  const present: ReadonlyMap<number, KubeObject> = start.kind === 'interrupted' ? start.present : new Map();
  const limit = o.writeConcurrency ?? WRITE_CONCURRENCY;
  const createdNs: string[] = [];
  const created: KubeObject[] = [];
  // Creates whose answer never came (connection lost, deadline): the object may exist. On an empty
  // target the rollback deletes these too.
  const inDoubt: KubeObject[] = [];
  const uids = new Map<string, string>();
  for (const [i, cur] of present) {
    const was = archive.objects[i]!.metadata.uid;
    if (was && cur.metadata.uid) uids.set(was, cur.metadata.uid);
  }
  const droppedOwners: string[] = [];
  let statuses = 0;
  try {
    await inParallel(
      archive.manifest.namespaces.filter((ns) => !start.existingNamespaces.has(ns)),
      limit,
      async (ns) => {
        await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
        createdNs.push(ns);
      },
    );
    // Each missing object as soon as its owners exist (present ones count as done), its status right after.
    const owners = restoreOwners(archive);
    await inDependencyOrder(
      archive.objects.length,
      (i) => owners[i]!,
      limit,
      async (i) => {
        if (present.has(i)) return;
        const a = archive.objects[i]!;
        const sub = kube.kindOf(a.apiVersion, a.kind)?.statusSubresource ?? false;
        const { body, droppedOwners: dropped } = createBody(a, ownerUids(archive, owners[i]!, uids), sub);
        droppedOwners.push(...dropped.map((d) => `${describeObject(a)} → ${d}`));
        let c: KubeObject;
        try {
          c = await kube.create(body);
        } catch (err) {
          if (!isKubeApiError(err)) inDoubt.push(body);
          throw err;
        }
        created.push(c);
        if (a.metadata.uid && c.metadata.uid) uids.set(a.metadata.uid, c.metadata.uid);
        // H12: the status subresource takes the whole object; the created one carries the right resourceVersion.
        if (a.status !== undefined && sub) {
          await kube.putStatus({ ...c, status: a.status });
          statuses++;
        }
      },
    );
    if (start.kind === 'interrupted') log(`created the ${created.length} missing object(s)`);
    // The interrupted run may have stopped between an object's create and its status.
    await inParallel([...present], limit, async ([i, cur]) => {
      const a = archive.objects[i]!;
      if (a.status === undefined || !kube.kindOf(a.apiVersion, a.kind)?.statusSubresource) return;
      if (canonicalJson(cur.status) === canonicalJson(a.status)) return;
      // The object may have changed since it was listed (a status landed): read it again.
      const fresh = (await kube.get(refOf(cur))) ?? cur;
      await kube.putStatus({ ...fresh, status: a.status });
      statuses++;
    });
    log(
      start.kind === 'empty'
        ? `created ${created.length} object(s) in ${archive.manifest.namespaces.length} namespace(s), restored ${statuses} status(es)`
        : `restored ${statuses} status(es)`,
    );
    await inParallel(
      archive.objects.filter((a) => unpausePatch(a) !== undefined),
      limit,
      async (a) => {
        await kube.mergePatch(refOf(a), unpausePatch(a));
      },
    );
    log('unpaused');
  } catch (err) {
    if (start.kind === 'interrupted') throw err;
    const left = await rollback(kube, [...created, ...inDoubt], createdNs);
    throw new FerryError(
      'internal',
      `restore failed after creating ${created.length} object(s); ${left.length === 0 ? 'they were deleted again' : `could not delete ${left.join(', ')}`}`,
      {
        remediation:
          left.length === 0
            ? 'fix the cause below and restore again'
            : `delete the objects listed by hand, fix the cause below and restore again`,
        cause: err,
      },
    );
  }
  return {
    created: created.length,
    statuses,
    namespaces: createdNs,
    uids: Object.fromEntries(uids),
    droppedOwners,
  };
}

async function rollback(kube: MgmtKube, created: KubeObject[], namespaces: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const c of [...created].reverse()) {
    try {
      await kube.delete(refOf(c));
    } catch {
      left.push(describeObject(c));
    }
  }
  for (const ns of [...namespaces].reverse()) {
    try {
      await kube.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
    } catch {
      left.push(`Namespace ${ns}`);
    }
  }
  return left;
}
