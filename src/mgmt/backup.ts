/**
 * `ferry mgmt backup`: export the Cluster API object graph through the API as `clusterctl move
 * --to-directory` would (capi.md §5.1: refuse paused clusters, pause, wait for block-move, read,
 * unpause) plus what move drops (H12 statuses, H14 `<cluster>-talos`) and what no owner reference
 * reaches yet (graph.ts); refuse an archive whose references name objects it would not hold
 * (references.ts); then pack, encrypt with age, upload to a versioned bucket, read back and
 * verify, and apply the retention policy.
 * Everything stays in memory: no plaintext reaches the disk.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describePauseProblems, pauseProblems } from '../capi/paused.js';
import { BLOCK_MOVE_ANNOTATION, PAUSED_ANNOTATION } from '../capi/view.js';
import { FerryError, inputError } from '../errors.js';
import { inParallel } from '../util/parallel.js';
import { encrypt } from './age.js';
import { buildArchive, packArchive } from './archive.js';
import { sha256Hex } from './canonical.js';
import { type Selection, selectGraph } from './graph.js';
import { INVENTORY_CRD, type MgmtKube, refOf } from './kube.js';
import { describeObject, type KindInfo, type KubeObject, type ProviderEntry } from './model.js';
import { refuseUnresolved } from './references.js';
import { applyRetention, type RetentionPolicy } from './retention.js';
import type { S3Location } from './s3-config.js';
import type { BackupStore } from './s3-store.js';
import { mergeMoved } from './via-clusterctl/merge.js';

/** Concurrent pause/unpause writes. */
const PARALLEL = 16;

export const META = {
  sha256: 'ferry-sha256',
  created: 'ferry-created',
  objects: 'ferry-objects',
  clusters: 'ferry-clusters',
} as const;

export interface BackupOptions {
  kube: MgmtKube;
  store: BackupStore;
  loc: S3Location;
  recipients: string[];
  retention: RetentionPolicy;
  now?: () => Date;
  /** How long objects may carry clusterctl's block-move annotation once paused (capi.md §5.1). */
  blockMoveTimeoutMs?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
  /**
   * `--via clusterctl`: the objects `clusterctl move --to-directory` writes for these Clusters. It
   * runs before ferry's own read (it pauses and unpauses by itself and refuses what is paused);
   * ferry's read then adds what move drops.
   */
  moveExport?: (clusters: KubeObject[]) => Promise<KubeObject[]>;
}

export interface BackupReport {
  url: string;
  versionId: string;
  createdAt: string;
  size: number;
  sha256: string;
  verified: boolean;
  objects: number;
  counts: Record<string, number>;
  clusters: string[];
  providers: ProviderEntry[];
  leftBehind: string[];
  retention: { kept: { versionId: string; why: string[] }[]; deleted: string[] };
}

interface Observed {
  kinds: KindInfo[];
  /** Every Cluster API object listed (the inventory excluded), carried or not. */
  custom: KubeObject[];
  selection: Selection;
  providers: ProviderEntry[];
}

/** Lists in flight at once while reading the graph (one per kind, as kubectl get makes them). */
const READ_CONCURRENCY = 8;

async function observe(kube: MgmtKube, kinds: KindInfo[]): Promise<Observed> {
  // Every kind at once (bounded) while the clusters are paused: the pause lasts as long as the slowest lists, not their sum.
  const reads: (() => Promise<KubeObject[]>)[] = [
    ...kinds.map((k) => () => kube.listKind(k)),
    () => kube.list('v1', 'Secret'),
    () => kube.list('v1', 'ConfigMap'),
  ];
  const lists: KubeObject[][] = new Array(reads.length);
  await inParallel([...reads.keys()], READ_CONCURRENCY, async (i) => {
    lists[i] = await reads[i]!();
  });
  const custom: KubeObject[] = [];
  let providers: ProviderEntry[] = [];
  kinds.forEach((k, i) => {
    const items = lists[i]!;
    if (k.crd === INVENTORY_CRD)
      providers = items.map((p) => ({
        namespace: p.metadata.namespace ?? '',
        name: p.metadata.name,
        providerName: String(p['providerName'] ?? ''),
        type: String(p['type'] ?? ''),
        version: String(p['version'] ?? ''),
      }));
    else custom.push(...items);
  });
  const secrets = lists[kinds.length]!;
  const configMaps = lists[kinds.length + 1]!;
  const selection = selectGraph({ custom, secrets, configMaps });
  return { kinds, custom, selection, providers };
}

export function requireClusterApi(kinds: KindInfo[], server: string): void {
  if (!kinds.some((k) => k.crd === 'clusters.cluster.x-k8s.io'))
    throw inputError(
      `${server} serves no Cluster API (no CRD clusters.cluster.x-k8s.io): it is not a management cluster`,
      { object: 'CustomResourceDefinition clusters.cluster.x-k8s.io' },
      "pass --kubeconfig the management cluster's kubeconfig",
    );
}

/** Pauses every Cluster (spec.paused) and ClusterClass (annotation) as move does, runs `fn`, and always unpauses. */
async function whilePaused<T>(
  kube: MgmtKube,
  clusters: KubeObject[],
  classes: KubeObject[],
  log: (l: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const paused: { obj: KubeObject; undo: unknown; byHand: string }[] = [];
  const where = (x: KubeObject) => `${x.kind.toLowerCase()} ${x.metadata.name} -n ${x.metadata.namespace}`;
  let result: T;
  try {
    for (const c of clusters) {
      // Restores what was there: absent (null removes it in a merge patch) or false.
      const undo = { spec: { paused: c.spec?.paused === false ? false : null } };
      paused.push({
        obj: c,
        undo,
        byHand: `kubectl patch ${where(c)} --type merge -p '${JSON.stringify(undo)}'`,
      });
    }
    for (const cc of classes)
      paused.push({
        obj: cc,
        undo: { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } },
        byHand: `kubectl annotate ${where(cc)} ${PAUSED_ANNOTATION}-`,
      });
    // Recorded before the writes: a pause that failed halfway is undone too (undoing an unpaused object is a no-op).
    await inParallel(paused, PARALLEL, async (p) => {
      await kube.mergePatch(
        refOf(p.obj),
        p.obj.kind === 'Cluster'
          ? { spec: { paused: true } }
          : { metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } } },
      );
    });
    log(`paused ${clusters.length} cluster(s) and ${classes.length} cluster class(es) while reading`);
    result = await fn();
  } finally {
    const failed: { name: string; byHand: string; err: unknown }[] = [];
    await inParallel(paused, PARALLEL, async (p) => {
      try {
        await kube.mergePatch(refOf(p.obj), p.undo);
      } catch (err) {
        failed.push({ name: describeObject(p.obj), byHand: p.byHand, err });
      }
    });
    if (failed.length > 0)
      // Takes precedence over the error that brought us here: a paused cluster is not reconciled.
      // biome-ignore lint/correctness/noUnsafeFinally: the unpause failure is the one the operator must act on
      throw new FerryError(
        'internal',
        `could not unpause ${failed.map((f) => f.name).join(', ')} after reading them`,
        {
          remediation: `unpause by hand: ${failed.map((f) => f.byHand).join('; ')}`,
          cause: failed[0]!.err,
        },
      );
    log('unpaused');
  }
  return result;
}

export async function runBackup(o: BackupOptions): Promise<BackupReport> {
  const log = o.log ?? (() => {});
  const now = o.now ?? (() => new Date());
  const check = () => {
    if (o.signal?.aborted)
      throw new FerryError('gate', 'interrupted', { remediation: 'run the backup again' });
  };
  // Before touching the cluster: a bucket that cannot hold versions would lose the last backup.
  await o.store.requireVersioned();
  const kinds = await o.kube.discoverKinds();
  requireClusterApi(kinds, o.kube.req.server);
  // Clusters and ClusterClasses first: ferry must not pause what someone else paused.
  const listed = async (crd: string) => {
    const k = kinds.find((x) => x.crd === crd);
    return k ? o.kube.listKind(k) : [];
  };
  const [clusters, classes] = await Promise.all([
    listed('clusters.cluster.x-k8s.io'),
    listed('clusterclasses.cluster.x-k8s.io'),
  ]);
  const refuse = (problems: ReturnType<typeof pauseProblems>) => {
    if (problems.length === 0) return;
    const d = describePauseProblems(problems);
    throw new FerryError('gate', d.message, { remediation: d.remediation });
  };
  refuse(pauseProblems(clusters, classes));
  check();
  const moved = o.moveExport ? await o.moveExport(clusters) : undefined;
  check();
  const seen = await whilePaused(o.kube, clusters, classes, log, async () => {
    const deadline = Date.now() + (o.blockMoveTimeoutMs ?? 60_000);
    for (let wait = 500; ; wait = Math.min(wait * 1.5, 5000)) {
      check();
      const cur = await observe(o.kube, kinds);
      // Read once, while paused: an object paused by annotation (a TCP mid-migration) is refused here,
      // and the clusters are unpaused on the way out. Every object read counts, as for `mgmt status`,
      // not only those the graph reached. ClusterClasses carry ferry's own annotation now.
      refuse(
        pauseProblems(
          [],
          cur.custom.filter((x) => x.kind !== 'ClusterClass'),
        ),
      );
      const blocked = cur.selection.selected.filter(
        (s) => s.object.metadata.annotations?.[BLOCK_MOVE_ANNOTATION] !== undefined,
      );
      if (blocked.length === 0) return cur;
      if (Date.now() > deadline)
        throw new FerryError(
          'gate',
          `${blocked.map((b) => describeObject(b.object)).join(', ')} still carry ${BLOCK_MOVE_ANNOTATION}: a provider is not ready to be moved`,
          {
            remediation:
              'wait until the provider removes the annotation, then back up again (or raise --block-move-timeout)',
          },
        );
      log(`waiting for ${BLOCK_MOVE_ANNOTATION} on ${blocked.length} object(s)`);
      await sleep(wait);
    }
  });
  // The archive holds the clusters as they were before ferry paused them (never paused: refused above).
  const pausedBefore = new Map(clusters.map((c) => [c.metadata.uid, c.spec?.paused]));
  for (const s of seen.selection.selected) {
    if (s.object.kind === 'Cluster') {
      const spec = { ...s.object.spec };
      const was = pausedBefore.get(s.object.metadata.uid);
      if (was === undefined) delete spec.paused;
      else spec.paused = was;
      s.object = { ...s.object, spec };
    } else if (
      s.object.kind === 'ClusterClass' &&
      s.object.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined
    ) {
      const { [PAUSED_ANNOTATION]: _p, ...annotations } = s.object.metadata.annotations;
      s.object = { ...s.object, metadata: { ...s.object.metadata, annotations } };
    }
  }
  const created = now();
  const selected = moved ? mergeMoved(seen.selection.selected, moved) : seen.selection.selected;
  refuseUnresolved(selected.map((s) => s.object));
  const archive = buildArchive({
    selected,
    kinds: seen.kinds,
    providers: seen.providers,
    leftBehind: seen.selection.leftBehind,
    server: o.kube.req.address,
    now: created,
  });
  const cipher = await encrypt(packArchive(archive), o.recipients);
  const sha256 = sha256Hex(cipher);
  check();
  const versionId = await o.store.put(cipher, {
    [META.sha256]: sha256,
    [META.created]: created.toISOString(),
    [META.objects]: String(archive.objects.length),
    [META.clusters]: String(archive.manifest.clusters.length),
  });
  log(`uploaded ${o.loc.url} version ${versionId} (${cipher.length} bytes)`);
  const back = await o.store.get(versionId);
  const backSha = sha256Hex(back.bytes);
  if (backSha !== sha256 || back.metadata[META.sha256] !== sha256)
    throw new FerryError(
      'internal',
      `read back version ${versionId} of ${o.loc.url} and its sha256 ${backSha} is not the ${sha256} uploaded`,
      {
        remediation:
          'the S3 service did not store the backup faithfully; do not rely on it, check the service and back up again',
      },
    );
  const versions = await o.store.versions();
  // The new version is kept whatever the clocks say.
  const { keep, remove } = applyRetention(versions, o.retention);
  const deleted: string[] = [];
  for (const v of remove) {
    if (v.versionId === versionId) continue;
    await o.store.deleteVersion(v.versionId);
    deleted.push(v.versionId);
  }
  return {
    url: o.loc.url,
    versionId,
    createdAt: created.toISOString(),
    size: cipher.length,
    sha256,
    verified: true,
    objects: archive.objects.length,
    counts: archive.manifest.counts,
    clusters: archive.manifest.clusters.map((c) => `${c.namespace}/${c.name}`),
    providers: archive.manifest.providers,
    leftBehind: archive.manifest.leftBehind,
    retention: { kept: [...keep].map(([id, why]) => ({ versionId: id, why })), deleted },
  };
}
