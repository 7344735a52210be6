/**
 * A Store on one etcd member, as a stacked kube-apiserver uses its local member: every request
 * goes to that member only (no failover to other endpoints), reads are linearizable, writes are
 * transactions comparing the key's mod revision, and calls have short deadlines. So the instance
 * fails exactly when its member is stopped, removed or cut off from quorum.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { noop } from 'cockatiel';
import { Etcd3, type IKeyValue, type IResponseHeader, type Watcher } from 'etcd3';
import type { KObj } from './object.js';
import {
  CompactedError,
  type ListResult,
  prefixEnd,
  type Store,
  type StoredObject,
  StoreUnavailableError,
  type StoreWatch,
  type WatchListener,
  type WriteResult,
} from './store.js';

export type EtcdStoreOptions = {
  /** The member's client URL, e.g. https://127.0.10.1:2379: the only endpoint ever used. */
  endpoint: string;
  /** etcd CA, client certificate and key (kubeadm's apiserver-etcd-client). */
  credentials: { rootCertificate: Buffer; certChain: Buffer; privateKey: Buffer };
  /** Deadline of each unary call. Default 2 s. */
  callTimeoutMs?: number;
  /** How long a watch may take to be established. Default 3 s. */
  watchTimeoutMs?: number;
};

const COMPACTED = /compacted/i;
const DEADLINE = /deadline|timed? ?out|timeout/i;

function translate(err: unknown, what: string): Error {
  if (err instanceof CompactedError || err instanceof StoreUnavailableError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  if (COMPACTED.test(msg)) return new CompactedError(msg);
  return new StoreUnavailableError(`etcd ${what}: ${msg}`, { timedOut: DEADLINE.test(msg), cause: err });
}

/**
 * UNAVAILABLE answers of a live member during an election or a leadership transfer, and the
 * channel etcd3 closes under a concurrent call when such an answer resets the host's services.
 */
const BETWEEN_LEADERS = /leader changed|no leader|channel closed before call started/i;
const READ_RETRY_MS = 25;

const rev = (s: string | number): number => Number(s);

function stored(kv: IKeyValue): StoredObject {
  return {
    key: kv.key.toString(),
    value: JSON.parse(kv.value.toString()) as KObj,
    modRevision: rev(kv.mod_revision),
    createRevision: rev(kv.create_revision),
  };
}

export class EtcdStore implements Store {
  readonly kind = 'etcd' as const;
  readonly endpoint: string;
  readonly #client: Etcd3;
  readonly #callTimeoutMs: number;
  readonly #watchTimeoutMs: number;

  constructor(opts: EtcdStoreOptions) {
    this.endpoint = opts.endpoint;
    this.#callTimeoutMs = opts.callTimeoutMs ?? 2_000;
    this.#watchTimeoutMs = opts.watchTimeoutMs ?? 3_000;
    this.#client = new Etcd3({
      hosts: [opts.endpoint],
      credentials: opts.credentials,
      dialTimeout: this.#callTimeoutMs,
      // No circuit breaker and no retry: the failure must reach the client, as it does for a
      // kube-apiserver whose only etcd endpoint is gone (test-infra.md).
      faultHandling: { host: () => noop, global: noop },
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + this.#callTimeoutMs }),
    });
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translate(err, what);
    }
  }

  /**
   * A read, retried while the cluster is between leaders, as clientv3's retry interceptor retries
   * a Range on UNAVAILABLE (25 ms apart, within the call's deadline): a leadership move then costs
   * a kube-apiserver's reads a few ms, not an error. A member that is gone still fails at once.
   */
  async #read<T>(what: string, fn: () => Promise<T>, budgetMs = this.#callTimeoutMs): Promise<T> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        if (!BETWEEN_LEADERS.test(msg) || Date.now() + READ_RETRY_MS >= deadline) throw translate(err, what);
        await sleep(READ_RETRY_MS);
      }
    }
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const res = await this.#read('get', () => this.#client.kv.range({ key: Buffer.from(key) }));
    const kv = res.kvs[0];
    return kv ? stored(kv) : undefined;
  }

  async list(prefix: string, opts: { revision?: number; startAfter?: string } = {}): Promise<ListResult> {
    const start = opts.startAfter === undefined ? Buffer.from(prefix) : Buffer.from(`${opts.startAfter}\0`);
    const res = await this.#read('list', () =>
      this.#client.kv.range({
        key: start,
        range_end: prefixEnd(prefix),
        ...(opts.revision !== undefined && { revision: opts.revision }),
      }),
    );
    return { items: res.kvs.map(stored), revision: opts.revision ?? headerRevision(res.header) };
  }

  async create(key: string, value: KObj): Promise<WriteResult> {
    const k = Buffer.from(key);
    const res = await this.#call('create', () =>
      this.#client.kv.txn({
        compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key: k, value: Buffer.from(JSON.stringify(value)) } }],
        failure: [],
      }),
    );
    return res.succeeded
      ? { ok: true, revision: headerRevision(res.header) }
      : { ok: false, reason: 'exists' };
  }

  async #guarded(
    what: string,
    key: string,
    expected: number,
    op: 'put' | 'delete',
    value?: KObj,
  ): Promise<WriteResult> {
    const k = Buffer.from(key);
    const success =
      op === 'put'
        ? [{ request_put: { key: k, value: Buffer.from(JSON.stringify(value)) } }]
        : [{ request_delete_range: { key: k } }];
    const res = await this.#call(what, () =>
      this.#client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: expected }],
        success,
        // On failure, read the key to tell a conflict from a missing key.
        failure: [{ request_range: { key: k } }],
      }),
    );
    if (res.succeeded) return { ok: true, revision: headerRevision(res.header) };
    const found = res.responses[0]?.response_range?.kvs?.length ?? 0;
    return { ok: false, reason: found > 0 ? 'conflict' : 'notFound' };
  }

  update(key: string, value: KObj, expectedModRevision: number): Promise<WriteResult> {
    return this.#guarded('update', key, expectedModRevision, 'put', value);
  }

  delete(key: string, expectedModRevision: number): Promise<WriteResult> {
    return this.#guarded('delete', key, expectedModRevision, 'delete');
  }

  async watch(prefix: string, afterRevision: number, listener: WatchListener): Promise<StoreWatch> {
    // etcd cancels a watch on a compacted revision; a range at that revision says so plainly.
    await this.#call('watch', () =>
      this.#client.kv.range({
        key: Buffer.from(prefix),
        range_end: prefixEnd(prefix),
        revision: afterRevision,
        count_only: true,
      }),
    );
    const watcher = this.#client
      .watch()
      .prefix(prefix)
      .startRevision(String(afterRevision + 1))
      .withPreviousKV()
      .watcher();
    let ended = false;
    const end = (err: Error) => {
      if (ended) return;
      ended = true;
      void watcher.cancel().catch(() => undefined);
      listener.onError(err);
    };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        ended = true;
        void watcher.cancel().catch(() => undefined);
        reject(
          new StoreUnavailableError(`etcd watch: not established within ${this.#watchTimeoutMs} ms`, {
            timedOut: true,
          }),
        );
      }, this.#watchTimeoutMs);
      watcher.once('connected', () => {
        clearTimeout(timer);
        resolve();
      });
      watcher.once('error', (err: Error) => {
        clearTimeout(timer);
        if (!ended) {
          ended = true;
          reject(translate(err, 'watch'));
        }
      });
    });
    attach(watcher, listener, end);
    return {
      cancel: async () => {
        ended = true;
        await watcher.cancel().catch(() => undefined);
      },
    };
  }

  async revision(timeoutMs?: number): Promise<number> {
    const budget = timeoutMs ?? this.#callTimeoutMs;
    const deadline = Date.now() + budget;
    const res = await this.#read(
      'readiness read',
      () => this.#client.kv.range({ key: Buffer.from('/registry/health'), count_only: true }, { deadline }),
      budget,
    );
    return headerRevision(res.header);
  }

  async compact(revision: number): Promise<void> {
    await this.#call('compact', () => this.#client.kv.compact({ revision })).catch((err: unknown) => {
      // Another instance compacted further already: nothing to do.
      if (err instanceof CompactedError) return;
      throw err;
    });
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}

function headerRevision(h: IResponseHeader): number {
  return rev(h.revision);
}

function attach(watcher: Watcher, listener: WatchListener, end: (err: Error) => void): void {
  watcher.on('put', (kv, prev) => {
    listener.onEvent({
      type: 'put',
      key: kv.key.toString(),
      value: JSON.parse(kv.value.toString()) as KObj,
      prev: prev ? (JSON.parse(prev.value.toString()) as KObj) : undefined,
      revision: rev(kv.mod_revision),
    });
  });
  watcher.on('delete', (kv, prev) => {
    if (!prev) return; // a delete without its previous value cannot be served as DELETED
    listener.onEvent({
      type: 'delete',
      key: kv.key.toString(),
      prev: JSON.parse(prev.value.toString()) as KObj,
      revision: rev(kv.mod_revision),
    });
  });
  // The client would reconnect and resume silently; a kube watch ends instead and the client
  // re-lists or resumes from its last resourceVersion.
  watcher.on('disconnected', (err: Error) => end(translate(err, 'watch')));
  watcher.on('error', (err: Error) => end(translate(err, 'watch')));
}
