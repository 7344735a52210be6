/**
 * `ferry mgmt restore`: download a backup, verify its sha256, decrypt, check the manifest and the
 * target (kinds served, providers at the recorded versions, no object already there) and that
 * every reference of its Clusters, TalosControlPlanes and MachineDeployments names an object it
 * holds (an older ferry archived what no owner reference reached only partly) — all before the
 * first write — then create the objects owners first with ownerRef UIDs rewritten, put the
 * statuses back through the status subresource (what move drops, H12), unpause, and verify.
 * A write that fails midway deletes what this run created: nothing is left half-applied.
 */
import { objectReferences } from '../capi/refs.js';
import { CLUSTER_NAME_LABEL, objectName } from '../capi/view.js';
import { inputError } from '../errors.js';
import { decrypt } from './age.js';
import { unpackArchive } from './archive.js';
import { META } from './backup.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { INVENTORY_CRD, type MgmtKube } from './kube.js';
import { type Archive, describeObject, type KindInfo, type KubeObject } from './model.js';
import { describeUnresolved, isCheckedReferrer, unresolvedReferences } from './references.js';
import { writeArchive } from './restore-write.js';
import type { S3Location } from './s3-config.js';
import type { BackupStore, Downloaded } from './s3-store.js';

export interface FetchedBackup {
  archive: Archive;
  versionId: string;
  lastModified: Date;
  size: number;
}

/** Download, checksum, decrypt, unpack: the backup as ferry trusts it, or a clear error. */
export async function fetchBackup(o: {
  store: BackupStore;
  loc: S3Location;
  versionId?: string | undefined;
  identities: string[];
  identityFile: string;
}): Promise<FetchedBackup> {
  const got = await o.store.get(o.versionId);
  const where = `${o.loc.url} version ${got.versionId}`;
  verifyChecksum(got, where);
  const plain = await decrypt(got.bytes, o.identities, where, o.identityFile);
  return {
    archive: unpackArchive(plain, where),
    versionId: got.versionId,
    lastModified: got.lastModified,
    size: got.bytes.length,
  };
}

export function verifyChecksum(got: Downloaded, where: string): void {
  const want = got.metadata[META.sha256];
  if (!want)
    throw inputError(
      `${where} has no ${META.sha256} metadata: it was not written by ferry mgmt backup`,
      { object: where },
      'restore a version ferry wrote (`ferry mgmt status` lists them)',
    );
  const have = sha256Hex(got.bytes);
  if (have !== want)
    throw inputError(
      `${where} is corrupted: its sha256 is ${have}, the backup recorded ${want}`,
      { object: where },
      'nothing was applied; restore another version (`ferry mgmt status` lists them)',
    );
}

export interface RestoreReport {
  url: string;
  versionId: string;
  created: number;
  statuses: number;
  namespaces: string[];
  /** Archived UID → new UID, for every object created. */
  uids: Record<string, string>;
  droppedOwners: string[];
  verify: { ok: boolean; problems: string[] };
}

/** Everything that must hold on the target before the first create. */
export async function checkTarget(
  kube: MgmtKube,
  archive: Archive,
): Promise<{ problems: string[]; existingNamespaces: Set<string> }> {
  // Refused rather than restored and then reported: once the Clusters are unpaused, a controller
  // acts on a Cluster whose control plane is not there (capi.md H2), and nothing undoes that.
  const problems: string[] = unresolvedReferences(archive.objects, archive.objects).map(
    (u) =>
      `${describeUnresolved(u, 'the backup')} (the backup is incomplete: take a new one with this ferry, which carries what no owner reference reaches)`,
  );
  const kinds = await kube.discoverKinds();
  const used = new Set(archive.objects.map((o) => `${o.apiVersion}|${o.kind}`));
  for (const u of used) {
    const [apiVersion, kind] = u.split('|') as [string, string];
    if (apiVersion === 'v1') continue;
    const [group, version] = apiVersion.split('/') as [string, string];
    const k = kinds.find((x) => x.group === group && x.kind === kind);
    if (!k) problems.push(`the target serves no ${kind} (${group}): install its provider first`);
    else if (!k.served.includes(version))
      problems.push(`the target serves ${kind} at ${k.served.join(', ')}, not ${version}`);
  }
  if (archive.manifest.providers.length > 0) {
    const inv = kinds.find((k) => k.crd === INVENTORY_CRD);
    const have = inv ? await kube.listKind(inv) : [];
    for (const p of archive.manifest.providers) {
      const t = have.find((h) => h['providerName'] === p.providerName && h['type'] === p.type);
      if (!t)
        problems.push(
          `provider ${p.type} ${p.providerName} ${p.version} is not installed on the target (clusterctl inventory)`,
        );
      else if (t['version'] !== p.version)
        problems.push(
          `provider ${p.type} ${p.providerName} is ${String(t['version'])} on the target, the backup was taken at ${p.version}`,
        );
    }
  }
  kube.setKinds(kinds);
  const existing = (await presentOn(kube, archive)).flatMap((cur, i) =>
    cur ? [describeObject(archive.objects[i]!)] : [],
  );
  if (existing.length > 0)
    problems.push(
      `${existing.length} object(s) already exist on the target: ${existing.slice(0, 10).join(', ')}${existing.length > 10 ? ', …' : ''}`,
    );
  const nsList = await kube.list('v1', 'Namespace');
  return { problems, existingNamespaces: new Set(nsList.map((n) => n.metadata.name)) };
}

export async function runRestore(o: {
  kube: MgmtKube;
  backup: FetchedBackup;
  loc: S3Location;
  log?: (line: string) => void;
  /** Writes in flight at most (default WRITE_CONCURRENCY). */
  writeConcurrency?: number | undefined;
}): Promise<RestoreReport> {
  const { archive } = o.backup;
  const { kube } = o;
  const { problems, existingNamespaces } = await checkTarget(kube, archive);
  if (problems.length > 0)
    throw inputError(
      `cannot restore ${o.loc.url} version ${o.backup.versionId} into ${kube.req.server}:\n  ${problems.join('\n  ')}`,
      { object: kube.req.server },
      'nothing was applied; restore into an empty management cluster with Cluster API installed at the recorded provider versions (`ferry mgmt status` on the old one, or the backup manifest, lists them)',
    );
  const written = await writeArchive({
    kube,
    archive,
    start: { kind: 'empty', existingNamespaces },
    log: o.log ?? (() => {}),
    writeConcurrency: o.writeConcurrency,
  });
  return {
    url: o.loc.url,
    versionId: o.backup.versionId,
    ...written,
    verify: await verifyRestore(kube, archive),
  };
}

/** Each archived object as the target holds it now (undefined: absent), from one list per kind. */
export async function presentOn(kube: MgmtKube, archive: Archive): Promise<(KubeObject | undefined)[]> {
  const lists = new Map<string, Map<string, KubeObject>>();
  const out: (KubeObject | undefined)[] = [];
  for (const o of archive.objects) {
    if (o.apiVersion !== 'v1' && !kube.kindOf(o.apiVersion, o.kind)) {
      out.push(undefined);
      continue;
    }
    const k = `${o.apiVersion}|${o.kind}`;
    let byName = lists.get(k);
    if (!byName) {
      byName = new Map(
        (await kube.list(o.apiVersion, o.kind)).map((x) => [`${x.metadata.namespace}/${x.metadata.name}`, x]),
      );
      lists.set(k, byName);
    }
    out.push(byName.get(`${o.metadata.namespace}/${o.metadata.name}`));
  }
  return out;
}

function conditionTrue(o: KubeObject, type: string): boolean {
  const cs = (o.status?.conditions ?? []) as { type?: string; status?: string }[];
  return cs.some((c) => c.type === type && c.status === 'True');
}

/** The references of restored Clusters, TalosControlPlanes and MachineDeployments the target does not resolve. */
async function unresolvedOnTarget(kube: MgmtKube, referrers: KubeObject[]): Promise<string[]> {
  const kinds = new Map<string, KindInfo>();
  for (const o of referrers)
    for (const r of objectReferences(o)) {
      const k = r.group !== undefined && r.kind !== undefined ? kube.kindIn(r.group, r.kind) : undefined;
      if (k) kinds.set(k.crd, k);
    }
  const held = (await Promise.all([...kinds.values()].map((k) => kube.listKind(k)))).flat();
  return unresolvedReferences(referrers, held).map((u) => describeUnresolved(u, 'the target'));
}

/**
 * Every Cluster Ready, every Machine with its nodeRef, no Machine re-created, statuses as archived,
 * every reference of a Cluster, TalosControlPlane or MachineDeployment naming an object there.
 */
export async function verifyRestore(
  kube: MgmtKube,
  archive: Archive,
): Promise<{ ok: boolean; problems: string[] }> {
  const problems: string[] = [];
  const present = await presentOn(kube, archive);
  for (const [i, a] of archive.objects.entries()) {
    const cur = present[i];
    const name = describeObject(a);
    if (!cur) {
      problems.push(`${name} is missing`);
      continue;
    }
    if (a.kind === 'Cluster' && !(conditionTrue(cur, 'Ready') || conditionTrue(cur, 'Available')))
      problems.push(`${name} is not Ready`);
    if (a.kind === 'Machine') {
      if (!cur.status?.nodeRef?.name) problems.push(`${name} has no nodeRef`);
      if ((cur.spec?.providerID ?? '') !== (a.spec?.providerID ?? ''))
        problems.push(
          `${name} has providerID ${cur.spec?.providerID ?? '(none)'}, the backup ${a.spec?.providerID ?? '(none)'}: it was re-created`,
        );
    }
    if (a.status !== undefined && canonicalJson(cur.status) !== canonicalJson(a.status))
      problems.push(`${name}: status differs from the backup`);
  }
  problems.push(
    ...(await unresolvedOnTarget(
      kube,
      present.filter((p): p is KubeObject => p !== undefined && isCheckedReferrer(p)),
    )),
  );
  // A Machine of a restored cluster that the backup does not name was created by a controller: a re-created Machine.
  const machines = archive.objects.filter((o) => o.kind === 'Machine');
  const machineKind = kube.kindIn('cluster.x-k8s.io', 'Machine');
  if (machineKind) {
    const clusters = new Set(archive.manifest.clusters.map((c) => `${c.namespace}/${c.name}`));
    const known = new Set(machines.map((m) => `${m.metadata.namespace}/${m.metadata.name}`));
    for (const m of await kube.listKind(machineKind)) {
      const c = `${m.metadata.namespace}/${m.metadata.labels?.[CLUSTER_NAME_LABEL] ?? m.spec?.clusterName}`;
      if (clusters.has(c) && !known.has(`${m.metadata.namespace}/${m.metadata.name}`))
        problems.push(
          `${objectName({ kind: 'Machine', namespace: m.metadata.namespace, name: m.metadata.name })} is not in the backup: a Machine was created after the restore`,
        );
    }
  }
  return { ok: problems.length === 0, problems };
}
