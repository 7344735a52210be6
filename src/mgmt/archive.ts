/**
 * The backup archive: a manifest (object counts, provider and CRD versions, a sha256 per object)
 * and the objects themselves, as one gzip'd JSON document that age then encrypts. Packing and
 * checking are pure; nothing here touches a disk (no plaintext on disk).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { objectName } from '../capi/view.js';
import { inputError } from '../errors.js';
import { VERSION } from '../version.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import type { Selected } from './graph.js';
import {
  ARCHIVE_FORMAT,
  type Archive,
  type KindInfo,
  type KubeObject,
  type Manifest,
  type ProviderEntry,
} from './model.js';

/** What the archive keeps of a live object: everything but the server's bookkeeping of writes. */
export function archivedCopy(o: KubeObject): KubeObject {
  const { managedFields: _m, resourceVersion: _r, ...metadata } = o.metadata;
  return { ...o, metadata: { ...metadata } };
}

export function buildArchive(input: {
  selected: Selected[];
  kinds: KindInfo[];
  providers: ProviderEntry[];
  leftBehind: string[];
  server: string;
  now: Date;
}): Archive {
  const objects = input.selected.map((s) => archivedCopy(s.object));
  const counts: Record<string, number> = {};
  for (const o of objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  const namespaces = [
    ...new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n)),
  ].sort();
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    createdAt: input.now.toISOString(),
    ferryVersion: VERSION,
    source: { server: input.server },
    kinds: input.kinds,
    providers: input.providers,
    namespaces,
    clusters: objects
      .filter((o) => o.kind === 'Cluster')
      .map((o) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name })),
    counts,
    objects: objects.map((o, i) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      ...(o.metadata.namespace !== undefined && { namespace: o.metadata.namespace }),
      name: o.metadata.name,
      uid: o.metadata.uid ?? '',
      reason: input.selected[i]!.reason,
      sha256: sha256Hex(canonicalJson(o)),
    })),
    leftBehind: input.leftBehind,
  };
  return { manifest, objects };
}

export function packArchive(a: Archive): Uint8Array {
  return gzipSync(Buffer.from(JSON.stringify(a), 'utf8'));
}

/**
 * Unpacks and checks an archive before anything is applied: the format, the manifest against the
 * objects (same count, order, identity), each object against its sha256. `where` names the backup.
 */
export function unpackArchive(bytes: Uint8Array, where: string): Archive {
  let doc: unknown;
  try {
    doc = JSON.parse(gunzipSync(bytes).toString('utf8'));
  } catch (err) {
    throw inputError(
      `backup ${where} decrypted but is not a ferry archive (not gzip'd JSON)`,
      { file: where },
      'restore another version (`ferry mgmt status` lists them); this one was not written by `ferry mgmt backup`',
      err,
    );
  }
  const a = doc as Partial<Archive>;
  if (
    a?.manifest?.format !== ARCHIVE_FORMAT ||
    !Array.isArray(a.objects) ||
    !Array.isArray(a.manifest.objects)
  )
    throw inputError(
      `backup ${where} has format ${JSON.stringify(a?.manifest?.format)}, not ${ARCHIVE_FORMAT}`,
      { file: where, field: 'manifest.format' },
      'restore it with the ferry version that wrote it, or restore another version',
    );
  const archive = a as Archive;
  const problems = checkArchive(archive);
  if (problems.length > 0)
    throw inputError(
      `backup ${where} is corrupted: ${problems.length} object(s) do not match the manifest:\n  ${problems.slice(0, 10).join('\n  ')}`,
      { file: where, field: 'manifest.objects' },
      'nothing was applied; restore another version (`ferry mgmt status` lists them)',
    );
  return archive;
}

export function checkArchive(a: Archive): string[] {
  const out: string[] = [];
  if (a.objects.length !== a.manifest.objects.length)
    out.push(
      `the manifest lists ${a.manifest.objects.length} objects, the archive holds ${a.objects.length}`,
    );
  const n = Math.min(a.objects.length, a.manifest.objects.length);
  for (let i = 0; i < n; i++) {
    const o = a.objects[i]!;
    const e = a.manifest.objects[i]!;
    const name = objectName(e);
    if (o.kind !== e.kind || o.metadata?.name !== e.name || o.metadata?.namespace !== e.namespace)
      out.push(
        `object ${i} is ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}, the manifest says ${name}`,
      );
    else if (sha256Hex(canonicalJson(o)) !== e.sha256) out.push(`${name}: sha256 differs from the manifest`);
  }
  const counts: Record<string, number> = {};
  for (const o of a.objects) counts[o.kind] = (counts[o.kind] ?? 0) + 1;
  if (canonicalJson(counts) !== canonicalJson(a.manifest.counts))
    out.push(
      `object counts ${canonicalJson(counts)} differ from the manifest's ${canonicalJson(a.manifest.counts)}`,
    );
  return out;
}
