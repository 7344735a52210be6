/**
 * `ferry mgmt restore --via clusterctl`: the archive's objects as move's directory, restored by the
 * real `clusterctl move --from-directory`, then what move drops put back (statuses through the
 * status subresource, H12). clusterctl unpauses the Clusters when it is done, before the statuses
 * are back (a TalosControlPlane without `bootstrapped` would bootstrap etcd anew, H2): so every
 * object goes in with the `cluster.x-k8s.io/paused` annotation, which ferry removes only after the
 * statuses are in place. Checks the target as the API restore does, before anything is written.
 */

import { PAUSED_ANNOTATION } from '../../capi/view.js';
import { inputError } from '../../errors.js';
import type { MgmtKube } from '../kube.js';
import { refOf } from '../kube.js';
import type { KubeObject } from '../model.js';
import { checkTarget, type FetchedBackup, type RestoreReport, verifyRestore } from '../restore.js';
import type { S3Location } from '../s3-config.js';
import type { Tools } from '../tools/adapter.js';
import { type MoveTarget, moveFromDirectory } from './move-dir.js';

export async function restoreViaClusterctl(o: {
  kube: MgmtKube;
  backup: FetchedBackup;
  loc: S3Location;
  tools: Tools;
  target: MoveTarget;
  log?: (line: string) => void;
}): Promise<RestoreReport> {
  const log = o.log ?? (() => {});
  const { kube } = o;
  const { archive } = o.backup;
  const { problems } = await checkTarget(kube, archive);
  if (problems.length > 0)
    throw inputError(
      `cannot restore ${o.loc.url} version ${o.backup.versionId} into ${kube.req.server}:\n  ${problems.join('\n  ')}`,
      { object: kube.req.server },
      'nothing was applied; restore into an empty management cluster with Cluster API installed at the recorded provider versions',
    );
  const annotated: KubeObject[] = [];
  const files = archive.objects.map((a) => {
    if (a.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined) return a;
    annotated.push(a);
    return {
      ...a,
      metadata: { ...a.metadata, annotations: { ...a.metadata.annotations, [PAUSED_ANNOTATION]: 'true' } },
    };
  });
  await moveFromDirectory(o.tools, o.target, files);
  log(`clusterctl move --from-directory restored ${files.length} object(s)`);
  let statuses = 0;
  for (const a of archive.objects) {
    if (a.status === undefined || !kube.kindOf(a.apiVersion, a.kind)?.statusSubresource) continue;
    const cur = await kube.get(refOf(a));
    if (!cur) continue; // verify names it
    await kube.putStatus({ ...cur, status: a.status });
    statuses++;
  }
  log(`restored ${statuses} status(es)`);
  for (const a of annotated)
    await kube.mergePatch(refOf(a), { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
  log('unpaused');
  const uids: Record<string, string> = {};
  for (const a of archive.objects) {
    const cur = await kube.get(refOf(a));
    if (a.metadata.uid && cur?.metadata.uid) uids[a.metadata.uid] = cur.metadata.uid;
  }
  return {
    url: o.loc.url,
    versionId: o.backup.versionId,
    created: files.length,
    statuses,
    namespaces: [],
    uids,
    droppedOwners: [],
    verify: await verifyRestore(kube, archive),
  };
}
