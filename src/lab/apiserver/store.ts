/**
 * The storage port of the lab API server: a revisioned key-value store with compare-and-swap
 * writes and a watchable event history, i.e. the part of etcd a kube-apiserver uses. Values are
 * Kubernetes objects without metadata.resourceVersion: the object's resourceVersion is the key's
 * mod revision, set by the registry on the way out.
 */
import type { KObj } from './object.js';

export type StoredObject = {
  key: string;
  value: KObj;
  modRevision: number;
  createRevision: number;
};

export type StoreEvent =
  | { type: 'put'; key: string; value: KObj; prev: KObj | undefined; revision: number }
  | { type: 'delete'; key: string; prev: KObj; revision: number };

/** A compare-and-swap outcome; failures are expected answers, not errors. */
export type WriteResult =
  | { ok: true; revision: number }
  | { ok: false; reason: 'exists' | 'notFound' | 'conflict' };

export type ListOptions = { revision?: number; startAfter?: string; limit?: number };

/** `remaining`: live keys past `items` that a `limit` left out (when the store cut the list). */
export type ListResult = { items: StoredObject[]; revision: number; remaining?: number };

export type WatchListener = {
  onEvent: (e: StoreEvent) => void;
  /** The watch ended on the store's side (member gone, compaction); no event follows. */
  onError: (err: Error) => void;
};

export interface StoreWatch {
  cancel(): Promise<void>;
}

export interface Store {
  readonly kind: 'memory' | 'etcd';
  /** A linearizable read of one key. */
  get(key: string): Promise<StoredObject | undefined>;
  /**
   * The keys under `prefix` in key order, at `revision` (default: the newest, read linearizably),
   * starting after `startAfter`, at most `limit` of them (a hint: a store may return more, the
   * caller cuts). Throws CompactedError for a compacted revision.
   */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Creates the key; `exists` when it already does. */
  create(key: string, value: KObj): Promise<WriteResult>;
  /** Replaces the key if its mod revision is still `expectedModRevision`. */
  update(key: string, value: KObj, expectedModRevision: number): Promise<WriteResult>;
  /** Deletes the key if its mod revision is still `expectedModRevision`. */
  delete(key: string, expectedModRevision: number): Promise<WriteResult>;
  /** Events under `prefix` with a revision greater than `afterRevision`, then live ones. */
  watch(prefix: string, afterRevision: number, listener: WatchListener): Promise<StoreWatch>;
  /** The current revision, read linearizably: the readiness probe. */
  revision(timeoutMs?: number): Promise<number>;
  /** Discards history up to `revision` (continue tokens and watches from before it expire). */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

/** The requested revision is older than the store's compaction point. */
export class CompactedError extends Error {
  readonly compactRevision: number | undefined;
  constructor(message: string, compactRevision?: number) {
    super(message);
    this.name = 'CompactedError';
    this.compactRevision = compactRevision;
  }
}

/** The store cannot answer: member stopped or removed, no quorum, deadline passed. */
export class StoreUnavailableError extends Error {
  readonly timedOut: boolean;
  constructor(message: string, opts: { timedOut?: boolean; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StoreUnavailableError';
    this.timedOut = opts.timedOut ?? false;
  }
}

/** The end of the key range that holds every key starting with `prefix` (etcd's range_end). */
export function prefixEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i] = b[i]! + 1;
      return end;
    }
  }
  return Buffer.from([0]);
}
