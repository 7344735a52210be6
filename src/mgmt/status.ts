/**
 * `ferry mgmt status`: what the management cluster holds (clusters, machines, providers, what is
 * paused) and the newest backup's age and whether it verifies (checksum; with an identity also
 * decryption and the manifest). A backup that cannot be read is reported, not hidden.
 */

import { isClusterPaused, isReady } from '../capi/paused.js';
import { CLUSTER_NAME_LABEL, PAUSED_ANNOTATION } from '../capi/view.js';
import { FerryError } from '../errors.js';
import { loadIdentities } from './age.js';
import { requireClusterApi } from './backup.js';
import { openMgmtKube, openStore } from './connect.js';
import { INVENTORY_CRD, type MgmtKube } from './kube.js';
import type { KubeObject } from './model.js';
import { fetchBackup, verifyChecksum } from './restore.js';
import type { S3Flags, S3Location } from './s3-config.js';
import type { BackupStore } from './s3-store.js';

export interface ClusterStatus {
  namespace: string;
  name: string;
  paused: boolean;
  ready: boolean;
  machines: number;
  machinesWithNodeRef: number;
  /** Objects of the cluster carrying the paused annotation (mid-migration TCPs). */
  pausedObjects: string[];
}

export interface BackupStatus {
  url: string;
  versions: number;
  newest?: {
    versionId: string;
    createdAt: string;
    ageSeconds: number;
    size: number;
    verified: boolean;
    /** checksum: sha256 only; full: decrypted and the manifest checked. */
    depth: 'checksum' | 'full';
    problem?: string;
    objects?: number;
  };
}

export interface MgmtStatus {
  server?: string;
  clusters?: ClusterStatus[];
  providers?: { namespace: string; name: string; type: string; providerName: string; version: string }[];
  backup?: BackupStatus;
}

export async function clusterStatus(
  kube: MgmtKube,
): Promise<Pick<MgmtStatus, 'server' | 'clusters' | 'providers'>> {
  const kinds = await kube.discoverKinds();
  requireClusterApi(kinds, kube.req.server);
  const byKind = new Map<string, KubeObject[]>();
  for (const k of kinds) byKind.set(k.crd, await kube.listKind(k));
  const all = [...byKind.entries()].filter(([crd]) => crd !== INVENTORY_CRD).flatMap(([, v]) => v);
  const clusterOf = (o: KubeObject) =>
    `${o.metadata.namespace}/${o.metadata.labels?.[CLUSTER_NAME_LABEL] ?? o.spec?.clusterName ?? ''}`;
  const clusters = (byKind.get('clusters.cluster.x-k8s.io') ?? []).map((c): ClusterStatus => {
    const id = `${c.metadata.namespace}/${c.metadata.name}`;
    const mine = all.filter((o) => o.kind !== 'Cluster' && clusterOf(o) === id);
    const machines = mine.filter((o) => o.kind === 'Machine');
    return {
      namespace: c.metadata.namespace ?? '',
      name: c.metadata.name,
      paused: isClusterPaused(c),
      ready: isReady(c),
      machines: machines.length,
      machinesWithNodeRef: machines.filter((m) => m.status?.nodeRef?.name).length,
      pausedObjects: mine
        .filter((o) => o.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
        .map((o) => `${o.kind} ${o.metadata.name}`),
    };
  });
  const providers = (byKind.get(INVENTORY_CRD) ?? []).map((p) => ({
    namespace: p.metadata.namespace ?? '',
    name: p.metadata.name,
    type: String(p['type'] ?? ''),
    providerName: String(p['providerName'] ?? ''),
    version: String(p['version'] ?? ''),
  }));
  return { server: kube.req.server, clusters, providers };
}

export async function backupStatus(o: {
  store: BackupStore;
  loc: S3Location;
  identity?: { identities: string[]; file: string };
  now: Date;
}): Promise<BackupStatus> {
  const versions = await o.store.versions();
  const newest = versions[0];
  if (!newest) return { url: o.loc.url, versions: 0 };
  const base = {
    versionId: newest.versionId,
    createdAt: newest.lastModified.toISOString(),
    ageSeconds: Math.max(0, Math.round((o.now.getTime() - newest.lastModified.getTime()) / 1000)),
    size: newest.size,
  };
  try {
    if (o.identity) {
      const f = await fetchBackup({
        store: o.store,
        loc: o.loc,
        versionId: newest.versionId,
        identities: o.identity.identities,
        identityFile: o.identity.file,
      });
      return {
        url: o.loc.url,
        versions: versions.length,
        newest: {
          ...base,
          verified: true,
          depth: 'full',
          objects: f.archive.objects.length,
          createdAt: f.archive.manifest.createdAt,
        },
      };
    }
    const got = await o.store.get(newest.versionId);
    verifyChecksum(got, `${o.loc.url} version ${newest.versionId}`);
    return {
      url: o.loc.url,
      versions: versions.length,
      newest: { ...base, verified: true, depth: 'checksum' },
    };
  } catch (err) {
    // An unreachable S3 is not a verdict on the backup: that stays an error.
    if (err instanceof FerryError && err.kind === 'unreachable') throw err;
    return {
      url: o.loc.url,
      versions: versions.length,
      newest: {
        ...base,
        verified: false,
        depth: o.identity ? 'full' : 'checksum',
        problem: (err as Error).message,
      },
    };
  }
}

/** `ferry mgmt status`: the management cluster's, its backups', or both (paths resolved already). */
export async function mgmtStatus(o: {
  cluster?: { kubeconfig: string; context?: string | undefined } | undefined;
  backup?: { url: string; s3: S3Flags; identityFile?: string | undefined } | undefined;
  env: NodeJS.ProcessEnv;
  now: Date;
}): Promise<MgmtStatus> {
  const s: MgmtStatus = {};
  if (o.cluster)
    Object.assign(s, await clusterStatus(await openMgmtKube(o.cluster.kubeconfig, o.cluster.context)));
  if (o.backup) {
    const { loc, store } = await openStore(o.backup.url, '--from', o.backup.s3, o.env);
    try {
      const file = o.backup.identityFile;
      const identity = file === undefined ? undefined : { identities: await loadIdentities(file), file };
      s.backup = await backupStatus({ store, loc, now: o.now, ...(identity && { identity }) });
    } finally {
      store.destroy();
    }
  }
  return s;
}

/** A status finding (exit 1): the newest backup is missing, does not verify, or is older than `maxAgeSeconds`. */
export function statusFinding(s: MgmtStatus, maxAgeSeconds: number | undefined): boolean {
  const n = s.backup?.newest;
  return (
    s.backup !== undefined && (!n?.verified || (maxAgeSeconds !== undefined && n.ageSeconds > maxAgeSeconds))
  );
}
