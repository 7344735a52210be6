/**
 * Paginated listing with `limit`/`continue`, independent of HTTP so it can be tested alone.
 *
 * A continue token expires (410 Gone, reason Expired) when the list takes longer than the API
 * server's compaction window. The pages already read then belong to an older resourceVersion than
 * the rest would, so the list starts over instead of stitching two versions together. After
 * `maxRestarts` expired attempts it asks for the whole list in one response, as client-go's pager
 * does: slower for the server, but it cannot expire.
 */

import { isKubeApiError, type ListRetry } from '../../ports/kube.js';
import type { KubeObject } from '../../snapshot/model.js';

export interface ListPage {
  items: KubeObject[];
  continueToken?: string;
}

/** Fetches one page; `limit` undefined means "everything in one response". */
export type FetchPage = (continueToken: string | undefined, limit: number | undefined) => Promise<ListPage>;

export interface ListAllOptions {
  pageSize?: number;
  maxRestarts?: number;
  map?: (obj: KubeObject) => KubeObject | undefined;
  onPage?: (itemsSoFar: number) => void;
  onRetry?: (retry: ListRetry) => void;
}

export interface ListAllResult {
  items: KubeObject[];
  pages: number;
  /** How many times an expired continue token made the list start over. */
  restarts: number;
}

export async function listAll(fetchPage: FetchPage, opts: ListAllOptions = {}): Promise<ListAllResult> {
  const pageSize = opts.pageSize ?? 500;
  const maxRestarts = opts.maxRestarts ?? 2;
  let restarts = 0;
  let pages = 0;
  for (;;) {
    const unpaginated = restarts > maxRestarts;
    const items: KubeObject[] = [];
    let seen = 0; // this attempt's objects, also those `map` took and did not return
    let token: string | undefined;
    try {
      do {
        const page = await fetchPage(token, unpaginated ? undefined : pageSize);
        pages++;
        seen += page.items.length;
        for (const raw of page.items) {
          const obj = opts.map ? opts.map(raw) : raw;
          if (obj !== undefined) items.push(obj);
        }
        opts.onPage?.(items.length);
        const next = page.continueToken || undefined;
        if (next !== undefined && next === token) {
          throw new Error(`the API server returned the same continue token twice (${next.slice(0, 16)}…)`);
        }
        token = unpaginated ? undefined : next;
      } while (token !== undefined);
      return { items, pages, restarts };
    } catch (err) {
      // Only an expired *continue* restarts: a 410 on the first page is not about pagination.
      if (token !== undefined && isKubeApiError(err, 410)) {
        restarts++;
        opts.onRetry?.({
          restart: true,
          message: `the continue token expired (HTTP 410 Gone) after ${seen.toLocaleString('en-US')} objects; listing again from the start${restarts > maxRestarts ? ' in one request' : ''} (restart ${restarts} of ${maxRestarts + 1})`,
        });
        continue;
      }
      throw err;
    }
  }
}
