/**
 * Completing a restore into kind that a crash cut short. The kind cluster is ferry's own (this
 * journal created it), so an archived object present there was created by the interrupted run: it
 * is kept (its UID maps the archived one, for the ownerRefs of what is still missing), the missing
 * objects are created owners first, every status that differs from the backup is put back, and
 * everything is unpaused, as a whole restore would. Nothing is deleted: Clusters were created
 * paused, but a deleted CAPI object's controllers could tear down the machines behind it.
 */

import { inDependencyOrder, inParallel } from '../../util/parallel.js';
import { canonicalJson } from '../canonical.js';
import { type MgmtKube, refOf } from '../kube.js';
import { type Archive, describeObject, type KubeObject } from '../model.js';
import { type FetchedBackup, type RestoreReport, verifyRestore, WRITE_CONCURRENCY } from '../restore.js';
import { createBody, ownerUids, restoreOwners, unpausePatch } from '../restore-plan.js';
import type { S3Location } from '../s3-config.js';

const key = (o: { kind: string; metadata: { namespace?: string | undefined; name: string } }) =>
  `${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

/** The archived objects the target holds now, by kind/namespace/name: one list per kind. */
async function present(kube: MgmtKube, archive: Archive): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  const listed = new Set<string>();
  for (const o of archive.objects) {
    const t = `${o.apiVersion}|${o.kind}`;
    if (listed.has(t)) continue;
    listed.add(t);
    if (o.apiVersion !== 'v1' && !kube.kindOf(o.apiVersion, o.kind)) continue;
    for (const x of await kube.list(o.apiVersion, o.kind)) out.set(key(x), x);
  }
  return out;
}

/** How many of the archive's objects the target holds already. */
export async function countPresent(kube: MgmtKube, archive: Archive): Promise<number> {
  await kube.discoverKinds();
  const have = await present(kube, archive);
  return archive.objects.filter((o) => have.has(key(o))).length;
}

export async function completeRestore(o: {
  kube: MgmtKube;
  backup: FetchedBackup;
  loc: S3Location;
  log?: (line: string) => void;
  /** Writes in flight at most (default WRITE_CONCURRENCY, as a whole restore). */
  writeConcurrency?: number;
}): Promise<RestoreReport> {
  const log = o.log ?? (() => {});
  const { kube } = o;
  const { archive } = o.backup;
  await kube.discoverKinds();
  const nsHave = new Set((await kube.list('v1', 'Namespace')).map((n) => n.metadata.name));
  const namespaces: string[] = [];
  for (const ns of archive.manifest.namespaces) {
    if (nsHave.has(ns)) continue;
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    namespaces.push(ns);
  }
  const have = await present(kube, archive);
  const uids = new Map<string, string>();
  const current = new Map<number, KubeObject>();
  archive.objects.forEach((a, i) => {
    const cur = have.get(key(a));
    if (!cur) return;
    current.set(i, cur);
    if (a.metadata.uid && cur.metadata.uid) uids.set(a.metadata.uid, cur.metadata.uid);
  });
  log(`${current.size} of ${archive.objects.length} object(s) were created by the interrupted run`);
  const droppedOwners: string[] = [];
  let created = 0;
  const limit = o.writeConcurrency ?? WRITE_CONCURRENCY;
  // As a whole restore writes: each missing object as soon as its owners exist (present ones
  // count as done), at most `limit` writes in flight.
  const owners = restoreOwners(archive);
  await inDependencyOrder(
    archive.objects.length,
    (i) => owners[i]!,
    limit,
    async (i) => {
      if (current.has(i)) return;
      const a = archive.objects[i]!;
      const sub = kube.kindOf(a.apiVersion, a.kind)?.statusSubresource ?? false;
      const { body, droppedOwners: dropped } = createBody(a, ownerUids(archive, owners[i]!, uids), sub);
      droppedOwners.push(...dropped.map((d) => `${describeObject(a)} → ${d}`));
      const c = await kube.create(body);
      created++;
      current.set(i, c);
      if (a.metadata.uid && c.metadata.uid) uids.set(a.metadata.uid, c.metadata.uid);
    },
  );
  log(`created the ${created} missing object(s)`);
  let statuses = 0;
  await inParallel([...current], limit, async ([i, cur]) => {
    const a = archive.objects[i]!;
    if (a.status === undefined || !kube.kindOf(a.apiVersion, a.kind)?.statusSubresource) return;
    if (canonicalJson(cur.status) === canonicalJson(a.status)) return;
    // The object may have changed since it was listed (this run created it, or a status landed): read it again.
    const fresh = (await kube.get(refOf(cur))) ?? cur;
    await kube.putStatus({ ...fresh, status: a.status });
    statuses++;
  });
  log(`restored ${statuses} status(es)`);
  await inParallel([...current.keys()], limit, async (i) => {
    const patch = unpausePatch(archive.objects[i]!);
    if (patch) await kube.mergePatch(refOf(archive.objects[i]!), patch);
  });
  log('unpaused');
  const verify = await verifyRestore(kube, archive);
  return {
    url: o.loc.url,
    versionId: o.backup.versionId,
    created,
    statuses,
    namespaces,
    uids: Object.fromEntries(uids),
    droppedOwners,
    verify,
  };
}
