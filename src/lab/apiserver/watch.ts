/**
 * Kubernetes watch over a Store watch: ADDED/MODIFIED/DELETED events for the objects a selector
 * matches (an object that stops matching is DELETED, one that starts matching is ADDED, as the
 * real watch cache does), an initial ADDED burst when no resourceVersion is given, resumption
 * after a resourceVersion, and a 410 ERROR event when that revision has been compacted.
 */

import { type ListQuery, matches, parseSelectors } from './list-query.js';
import type { KObj } from './object.js';
import type { Registry } from './registry.js';
import { collectionPrefix, type ResourceDef } from './resources.js';
import { badRequest, expired, type Status } from './status.js';
import { CompactedError, type StoreEvent } from './store.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'ERROR';
export type WatchEvent = { type: WatchEventType; object: KObj | Status };

export type WatchHandle = { cancel(): Promise<void> };

export async function startWatch(
  reg: Registry,
  d: ResourceDef,
  ns: string | undefined,
  q: ListQuery,
  send: (e: WatchEvent) => void,
  end: (err?: Error) => void,
): Promise<WatchHandle> {
  const sel = parseSelectors(d, q);
  const prefix = collectionPrefix(d, ns);
  let from: number;
  const rv = q.resourceVersion;
  if (rv === undefined || rv === '' || rv === '0') {
    const list = await reg.store.list(prefix);
    const initial = await reg.present(
      d,
      list.items.filter((s) => matches(sel, s.value)),
    );
    for (const o of initial) send({ type: 'ADDED', object: o });
    from = list.revision;
  } else {
    from = Number(rv);
    if (!Number.isInteger(from) || from < 0) throw badRequest(`invalid resourceVersion "${rv}"`);
  }

  let chain = Promise.resolve();
  let closed = false;
  const enqueue = (fn: () => Promise<void> | void) => {
    chain = chain.then(fn).catch((err: unknown) => {
      if (!closed) {
        closed = true;
        end(err as Error);
      }
    });
  };
  const emit = async (type: WatchEventType, value: KObj, revision: number) => {
    const [obj] = await reg.present(d, [{ key: '', value, modRevision: revision, createRevision: 0 }]);
    if (!closed) send({ type, object: obj! });
  };
  const onEvent = (e: StoreEvent) =>
    enqueue(async () => {
      if (closed) return;
      if (e.type === 'delete') {
        if (matches(sel, e.prev)) await emit('DELETED', e.prev, e.revision);
        return;
      }
      const now = matches(sel, e.value);
      const before = e.prev !== undefined && matches(sel, e.prev);
      if (now && before) await emit('MODIFIED', e.value, e.revision);
      else if (now) await emit('ADDED', e.value, e.revision);
      else if (before) await emit('DELETED', e.value, e.revision);
    });

  try {
    const w = await reg.store.watch(prefix, from, {
      onEvent,
      onError: (err) =>
        enqueue(() => {
          if (closed) return;
          closed = true;
          end(err);
        }),
    });
    return {
      cancel: async () => {
        closed = true;
        await w.cancel();
      },
    };
  } catch (err) {
    if (!(err instanceof CompactedError)) throw err;
    // A real server answers 200 and then one ERROR event carrying the 410.
    send({
      type: 'ERROR',
      object: expired(`too old resource version: ${from} (${err.compactRevision ?? 0})`).status,
    });
    closed = true;
    end();
    return { cancel: async () => undefined };
  }
}
