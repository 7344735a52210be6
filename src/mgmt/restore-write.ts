/**
 * The one write pipeline of a restore through the API (capi.md §5.1): the missing namespaces, then
 * each missing object as soon as its owners exist (ownerRef UIDs rewritten, Clusters and
 * ClusterClasses paused) with its status put back right after (what move drops, H12), then every
 * status an object already present lacks, then the archived pause state. A whole restore and the
 * completion of an interrupted one differ only in what the target holds already (`start`).
 */

import { FerryError } from '../errors.js';
import { isKubeApiError, type KubeApiError } from '../ports/kube.js';
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
  // The write the target's API server answered with an error, by that error: named in the failure.
  const refused = new Map<unknown, string>();
  const write = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (isKubeApiError(err)) refused.set(err, what);
      throw err;
    }
  };
  try {
    await inParallel(
      archive.manifest.namespaces.filter((ns) => !start.existingNamespaces.has(ns)),
      limit,
      async (ns) => {
        await write(`create Namespace ${ns}`, () =>
          kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
        );
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
          c = await write(`create ${describeObject(a)}`, () => kube.create(body));
        } catch (err) {
          if (!isKubeApiError(err)) inDoubt.push(body);
          throw err;
        }
        created.push(c);
        if (a.metadata.uid && c.metadata.uid) uids.set(a.metadata.uid, c.metadata.uid);
        // H12: the status subresource takes the whole object; the created one carries the right resourceVersion.
        if (a.status !== undefined && sub) {
          await write(`put the status of ${describeObject(a)}`, () =>
            kube.putStatus({ ...c, status: a.status }),
          );
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
        await write(`unpause ${describeObject(a)}`, () => kube.mergePatch(refOf(a), unpausePatch(a)));
      },
    );
    log('unpaused');
  } catch (err) {
    if (start.kind === 'interrupted') throw err;
    const left = await rollback(kube, [...created, ...inDoubt], createdNs);
    throw restoreFailed(err, refused.get(err), created.length, left);
  }
  return {
    created: created.length,
    statuses,
    namespaces: createdNs,
    uids: Object.fromEntries(uids),
    droppedOwners,
  };
}

/**
 * The error a failed restore onto an empty target ends with. An answer of the target's API server
 * (RBAC's 403, a ResourceQuota's 403, 409, 422…) is no fault of ferry's: exit 2 with the server's
 * message (the cause), as the refusals before the first write; so is a server that went away.
 * Only what is neither is an internal error (exit 4).
 */
/** How an API server's error answer ends a restore: too many requests or a server fault may pass, the rest is refused. */
export function serverAnswerKind(err: KubeApiError): 'input' | 'unreachable' {
  return err.status === 429 || err.status >= 500 ? 'unreachable' : 'input';
}

function restoreFailed(err: unknown, what: string | undefined, created: number, left: string[]): FerryError {
  const undone = left.length === 0 ? 'they were deleted again' : `could not delete ${left.join(', ')}`;
  const byHand = left.length === 0 ? '' : 'delete the objects listed by hand, then ';
  if (isKubeApiError(err)) {
    const transient = serverAnswerKind(err) === 'unreachable';
    return new FerryError(
      serverAnswerKind(err),
      `restore failed after creating ${created} object(s); ${undone}: the target's API server answered ${what ?? 'a write'} with HTTP ${err.status}${err.reason ? ` ${err.reason}` : ''}`,
      {
        remediation: transient
          ? `${byHand}restore again once the target's API server answers (its message is above)`
          : `${byHand}remove the cause the server's message above names (a missing RBAC permission, a ResourceQuota or an admission policy that refuses the object, an object in the way) and restore again`,
        cause: err,
      },
    );
  }
  const kind = err instanceof FerryError && err.kind !== 'internal' ? err.kind : 'internal';
  return new FerryError(kind, `restore failed after creating ${created} object(s); ${undone}`, {
    remediation: `${byHand}fix the cause above and restore again`,
    cause: err,
  });
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
