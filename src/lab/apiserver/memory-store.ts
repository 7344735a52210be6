/**
 * An in-memory Store with etcd's semantics where the server relies on them: one global revision
 * counter, per-key create/mod revisions, reads at a past revision until compaction, compare-and-
 * swap writes and a replayable event history. For fast tests; `setUnavailable` plays a lost member.
 */
import type { KObj } from './object.js';
import {
  CompactedError,
  type ListOptions,
  type ListResult,
  type Store,
  type StoredObject,
  type StoreEvent,
  StoreUnavailableError,
  type StoreWatch,
  type WatchListener,
  type WriteResult,
} from './store.js';

type Version = { rev: number; createRev: number; json: string | null };
type LoggedEvent = { key: string; rev: number; json: string | null; prevJson: string | null };

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  #rev = 1;
  #compacted = 0;
  readonly #versions = new Map<string, Version[]>();
  /** Every key of #versions in order, rebuilt on the next list after a key comes or goes: a paged list of 30,000 pods must not sort the store once per page. */
  #sorted: string[] | undefined;
  #log: LoggedEvent[] = [];
  readonly #watchers = new Set<{ prefix: string; listener: WatchListener }>();
  #unavailable: string | undefined;

  /** Makes every call fail as if the store's member were gone (and ends open watches). */
  setUnavailable(reason: string | undefined): void {
    this.#unavailable = reason;
    if (reason === undefined) return;
    const err = new StoreUnavailableError(reason);
    for (const w of [...this.#watchers]) {
      this.#watchers.delete(w);
      w.listener.onError(err);
    }
  }

  #check(): void {
    if (this.#unavailable !== undefined) throw new StoreUnavailableError(this.#unavailable);
  }

  #latest(key: string, atRev = this.#rev): Version | undefined {
    const vs = this.#versions.get(key);
    if (!vs) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) if (vs[i]!.rev <= atRev) return vs[i];
    return undefined;
  }

  #live(key: string): Version | undefined {
    const v = this.#latest(key);
    return v && v.json !== null ? v : undefined;
  }

  /** `value` is parsed on first use: a list answered from cached JSON (registry listText) never parses. */
  #stored(key: string, v: Version): StoredObject {
    const json = v.json!;
    let value: KObj | undefined;
    return {
      key,
      get value(): KObj {
        value ??= JSON.parse(json) as KObj;
        return value;
      },
      set value(next: KObj) {
        value = next;
      },
      modRevision: v.rev,
      createRevision: v.createRev,
    };
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.#check();
    const v = this.#live(key);
    return v ? this.#stored(key, v) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.#check();
    const at = opts.revision ?? this.#rev;
    if (at < this.#compacted) {
      throw new CompactedError(
        `mvcc: required revision ${at} has been compacted (at ${this.#compacted})`,
        this.#compacted,
      );
    }
    if (at > this.#rev) throw new Error(`mvcc: required revision ${at} is a future revision`);
    this.#sorted ??= [...this.#versions.keys()].sort();
    const keys = this.#sorted;
    const from = opts.startAfter !== undefined && opts.startAfter >= prefix ? opts.startAfter : prefix;
    const items: StoredObject[] = [];
    let remaining = 0;
    for (let i = lowerBound(keys, from); i < keys.length; i++) {
      const k = keys[i]!;
      if (!k.startsWith(prefix)) break;
      if (opts.startAfter !== undefined && k <= opts.startAfter) continue;
      const v = this.#latest(k, at);
      if (!v || v.json === null) continue;
      // Past the limit only counted: parsing is what costs.
      if (opts.limit !== undefined && items.length >= opts.limit) remaining++;
      else items.push(this.#stored(k, v));
    }
    return { items, revision: at, ...(opts.limit !== undefined && { remaining }) };
  }

  #write(key: string, json: string | null): number {
    const prev = this.#live(key);
    const rev = ++this.#rev;
    let vs = this.#versions.get(key);
    if (!vs) {
      vs = [];
      this.#sorted = undefined;
    }
    vs.push({ rev, createRev: json === null ? 0 : (prev?.createRev ?? rev), json });
    this.#versions.set(key, vs);
    const ev: LoggedEvent = { key, rev, json, prevJson: prev?.json ?? null };
    this.#log.push(ev);
    for (const w of this.#watchers) if (key.startsWith(w.prefix)) w.listener.onEvent(toEvent(ev));
    return rev;
  }

  async create(key: string, value: KObj): Promise<WriteResult> {
    this.#check();
    if (this.#live(key)) return { ok: false, reason: 'exists' };
    return { ok: true, revision: this.#write(key, JSON.stringify(value)) };
  }

  async update(key: string, value: KObj, expectedModRevision: number): Promise<WriteResult> {
    this.#check();
    const cur = this.#live(key);
    if (!cur) return { ok: false, reason: 'notFound' };
    if (cur.rev !== expectedModRevision) return { ok: false, reason: 'conflict' };
    return { ok: true, revision: this.#write(key, JSON.stringify(value)) };
  }

  async delete(key: string, expectedModRevision: number): Promise<WriteResult> {
    this.#check();
    const cur = this.#live(key);
    if (!cur) return { ok: false, reason: 'notFound' };
    if (cur.rev !== expectedModRevision) return { ok: false, reason: 'conflict' };
    return { ok: true, revision: this.#write(key, null) };
  }

  async watch(prefix: string, afterRevision: number, listener: WatchListener): Promise<StoreWatch> {
    this.#check();
    if (afterRevision < this.#compacted) {
      throw new CompactedError(
        `mvcc: required revision ${afterRevision + 1} has been compacted`,
        this.#compacted,
      );
    }
    // Replay and subscription happen in one synchronous step: no event can fall in between.
    for (const ev of this.#log)
      if (ev.rev > afterRevision && ev.key.startsWith(prefix)) listener.onEvent(toEvent(ev));
    const entry = { prefix, listener };
    this.#watchers.add(entry);
    return {
      cancel: async () => {
        this.#watchers.delete(entry);
      },
    };
  }

  async revision(): Promise<number> {
    this.#check();
    return this.#rev;
  }

  async compact(revision: number): Promise<void> {
    this.#check();
    if (revision <= this.#compacted) return;
    this.#compacted = Math.min(revision, this.#rev);
    for (const [key, vs] of this.#versions) {
      // Keep every version after the compaction point and the one visible at it (unless deleted).
      const visible = vs.filter((v) => v.rev <= this.#compacted).pop();
      const kept = vs.filter((v) => v.rev > this.#compacted);
      if (visible && visible.json !== null) kept.unshift(visible);
      if (kept.length === 0) {
        this.#versions.delete(key);
        this.#sorted = undefined;
      } else this.#versions.set(key, kept);
    }
    this.#log = this.#log.filter((e) => e.rev > this.#compacted);
  }

  async close(): Promise<void> {
    this.#watchers.clear();
  }
}

/** The first index whose key is not below `key` (keys sorted as Array.prototype.sort orders strings). */
function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function toEvent(ev: LoggedEvent): StoreEvent {
  const prev = ev.prevJson === null ? undefined : (JSON.parse(ev.prevJson) as KObj);
  if (ev.json === null) return { type: 'delete', key: ev.key, prev: prev!, revision: ev.rev };
  return { type: 'put', key: ev.key, value: JSON.parse(ev.json) as KObj, prev, revision: ev.rev };
}
