/**
 * In-memory fakes of the two ports `runBackup` (backup.ts) talks through, for its unit tests: a
 * management cluster (`MgmtKube`: discovery, lists, merge patches) and a versioned bucket
 * (`BackupStore`). Both record what was asked of them, and both can be told to fail or to lie, so
 * that a test can say what was written, what was refused and what was left paused.
 */
import { FerryError, inputError } from '../errors.js';
import type { MgmtKube, ObjectRef } from './kube.js';
import { describeObject, type KindInfo, type KubeObject } from './model.js';
import type { BackupStore, Downloaded, StoredVersion } from './s3-store.js';

const PAUSED = 'cluster.x-k8s.io/paused';
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch, as the API server applies `--type merge`. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

export interface ListCall {
  /** The kind listed. */
  kind: string;
  /** Whether, when the list was served, every Cluster had spec.paused true and every ClusterClass the pause annotation. */
  allPaused: boolean;
}

export interface PatchCall {
  /** "Cluster ns/name" */
  object: string;
  body: unknown;
}

type Hook<A extends unknown[]> = (...args: A) => void | Promise<void>;

/** The parts of MgmtKube a backup uses, over a list of objects held in memory. */
export class FakeMgmtKube
  implements Pick<MgmtKube, 'req' | 'discoverKinds' | 'listKind' | 'list' | 'mergePatch'>
{
  readonly req = {
    address: '10.20.30.40:6443',
    server: 'https://mgmt.example:6443',
    request: async (): Promise<unknown> => {
      throw new Error('FakeMgmtKube: no raw requests');
    },
  };
  objects: KubeObject[];
  readonly lists: ListCall[] = [];
  readonly patches: PatchCall[] = [];
  /** Runs before a list is answered: may change `objects`, abort, or throw to fail the list. */
  onList: Hook<[kind: string, kube: FakeMgmtKube]> | undefined;
  /** Runs before a patch is applied: may throw to fail it. */
  onPatch: Hook<[object: string, body: unknown, kube: FakeMgmtKube]> | undefined;

  constructor(
    objects: KubeObject[],
    readonly kinds: KindInfo[],
  ) {
    this.objects = structuredClone(objects);
  }

  asKube(): MgmtKube {
    return this as unknown as MgmtKube;
  }

  /** The object as the server holds it now. */
  find(kind: string, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.find(
      (o) => o.kind === kind && o.metadata.namespace === namespace && o.metadata.name === name,
    );
  }

  /** The number of times the graph was read (one list of Secrets per read). */
  get reads(): number {
    return this.lists.filter((l) => l.kind === 'Secret').length;
  }

  async discoverKinds(): Promise<KindInfo[]> {
    return structuredClone(this.kinds);
  }

  async listKind(k: KindInfo): Promise<KubeObject[]> {
    return this.serve(k.kind, `${k.group}/${k.storageVersion}`, (o) => groupOf(o.apiVersion) === k.group);
  }

  async list(apiVersion: string, kind: string): Promise<KubeObject[]> {
    return this.serve(kind, apiVersion, (o) => o.apiVersion === apiVersion);
  }

  async mergePatch(r: ObjectRef, body: unknown): Promise<KubeObject> {
    const object = describeObject({
      apiVersion: r.apiVersion,
      kind: r.kind,
      metadata: { name: r.name, namespace: r.namespace },
    });
    await this.onPatch?.(object, body, this);
    this.patches.push({ object, body: structuredClone(body) });
    const i = this.objects.findIndex(
      (o) =>
        o.kind === r.kind &&
        groupOf(o.apiVersion) === groupOf(r.apiVersion) &&
        o.metadata.namespace === r.namespace &&
        o.metadata.name === r.name,
    );
    if (i < 0) throw new Error(`FakeMgmtKube: ${object} not found`);
    const patched = applyMergePatch(this.objects[i], body) as KubeObject;
    this.objects[i] = patched;
    return structuredClone(patched);
  }

  private async serve(
    kind: string,
    apiVersion: string,
    inGroup: (o: KubeObject) => boolean,
  ): Promise<KubeObject[]> {
    await this.onList?.(kind, this);
    this.lists.push({ kind, allPaused: this.allPaused() });
    return this.objects
      .filter((o) => o.kind === kind && inGroup(o))
      .map((o) => ({ ...structuredClone(o), apiVersion }));
  }

  private allPaused(): boolean {
    return this.objects.every((o) =>
      o.kind === 'Cluster'
        ? o.spec?.paused === true
        : o.kind === 'ClusterClass'
          ? o.metadata.annotations?.[PAUSED] === 'true'
          : true,
    );
  }
}

interface Held extends StoredVersion {
  bytes: Uint8Array;
  metadata: Record<string, string>;
}

/** A versioned bucket key in memory. Versions are dated by `clock` (one second apart by default). */
export class MemoryStore implements BackupStore {
  versioned = true;
  readonly held: Held[] = [];
  readonly puts: { bytes: Uint8Array; metadata: Record<string, string> }[] = [];
  readonly gets: (string | undefined)[] = [];
  readonly deletes: string[] = [];
  /** Makes the next put fail with this error. */
  failPut: Error | undefined;
  /** Changes what a get answers (a service that does not store faithfully). */
  tamper: ((d: Downloaded) => Downloaded) | undefined;
  #n = 0;
  /** The date a put version gets. */
  clock: () => Date = () => new Date(Date.UTC(2026, 11, 1, 12, 0, this.#n));

  /** A version already in the bucket, with the date given. */
  seed(lastModified: Date, bytes = new Uint8Array([1, 2, 3])): string {
    return this.add(bytes, {}, lastModified);
  }

  async requireVersioned(): Promise<void> {
    if (!this.versioned) throw inputError('bucket is not versioned', { object: 's3://fake' }, 'enable it');
  }

  async put(bytes: Uint8Array, metadata: Record<string, string>): Promise<string> {
    if (this.failPut) throw this.failPut;
    this.puts.push({ bytes: Uint8Array.from(bytes), metadata: { ...metadata } });
    return this.add(bytes, metadata, this.clock());
  }

  async get(versionId?: string): Promise<Downloaded> {
    this.gets.push(versionId);
    const h = versionId === undefined ? this.newest() : this.held.find((x) => x.versionId === versionId);
    if (!h) throw new FerryError('input', `no version ${versionId}`);
    const d: Downloaded = {
      bytes: Uint8Array.from(h.bytes),
      versionId: h.versionId,
      lastModified: h.lastModified,
      metadata: { ...h.metadata },
    };
    return this.tamper ? this.tamper(d) : d;
  }

  async versions(): Promise<StoredVersion[]> {
    return this.held
      .map(({ versionId, lastModified, size, isLatest }) => ({ versionId, lastModified, size, isLatest }))
      .sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime());
  }

  async deleteVersion(versionId: string): Promise<void> {
    this.deletes.push(versionId);
    const i = this.held.findIndex((h) => h.versionId === versionId);
    if (i >= 0) this.held.splice(i, 1);
  }

  destroy(): void {}

  ids(): string[] {
    return this.held.map((h) => h.versionId);
  }

  private newest(): Held | undefined {
    return this.held.find((h) => h.isLatest);
  }

  private add(bytes: Uint8Array, metadata: Record<string, string>, lastModified: Date): string {
    const versionId = `v${++this.#n}`;
    for (const h of this.held) h.isLatest = false;
    this.held.push({
      versionId,
      lastModified,
      size: bytes.length,
      isLatest: true,
      bytes: Uint8Array.from(bytes),
      metadata: { ...metadata },
    });
    return versionId;
  }
}
