/**
 * Completing a restore into kind that a crash cut short. The kind cluster is ferry's own (this
 * journal created it), so an archived object present there was created by the interrupted run: it
 * is kept (its UID maps the archived one, for the ownerRefs of what is still missing) and the
 * restore's one write pipeline (restore-write.ts) does the rest, as a whole restore would, except
 * that nothing is deleted: Clusters were created paused, but a deleted CAPI object's controllers
 * could tear down the machines behind it.
 */

import type { MgmtKube } from '../kube.js';
import type { Archive, KubeObject } from '../model.js';
import { type FetchedBackup, presentOn, type RestoreReport, verifyRestore } from '../restore.js';
import { writeArchive } from '../restore-write.js';
import type { S3Location } from '../s3-config.js';

/** The archived objects the target holds now, by index into `archive.objects`. */
async function present(kube: MgmtKube, archive: Archive): Promise<Map<number, KubeObject>> {
  const out = new Map<number, KubeObject>();
  (await presentOn(kube, archive)).forEach((cur, i) => {
    if (cur) out.set(i, cur);
  });
  return out;
}

/** How many of the archive's objects the target holds already. */
export async function countPresent(kube: MgmtKube, archive: Archive): Promise<number> {
  await kube.discoverKinds();
  return (await present(kube, archive)).size;
}

export async function completeRestore(o: {
  kube: MgmtKube;
  backup: FetchedBackup;
  loc: S3Location;
  log?: (line: string) => void;
  /** Writes in flight at most (default WRITE_CONCURRENCY, as a whole restore). */
  writeConcurrency?: number | undefined;
}): Promise<RestoreReport> {
  const log = o.log ?? (() => {});
  const { kube } = o;
  const { archive } = o.backup;
  await kube.discoverKinds();
  const existingNamespaces = new Set((await kube.list('v1', 'Namespace')).map((n) => n.metadata.name));
  const have = await present(kube, archive);
  log(`${have.size} of ${archive.objects.length} object(s) were created by the interrupted run`);
  const written = await writeArchive({
    kube,
    archive,
    start: { kind: 'interrupted', existingNamespaces, present: have },
    log,
    writeConcurrency: o.writeConcurrency,
  });
  return {
    url: o.loc.url,
    versionId: o.backup.versionId,
    ...written,
    verify: await verifyRestore(kube, archive),
  };
}
