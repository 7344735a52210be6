/**
 * Fault injection for collection lists (tests only; see LabApiServer.setListFault): before each
 * GET of a collection the server asks the fault how to answer that page. These are the ways a
 * long list fails half-way on a real cluster: the API server restarts under it (the connection
 * drops with no answer), the priority-and-fairness filter throttles it (429 with Retry-After), or
 * its continue token outlives the compaction window (410 Expired).
 */
import { EXPIRED_CONTINUE, encodeContinue } from './list-query.js';
import { type ApiError, expired, tooManyRequests } from './status.js';

export type ListPage = { plural: string; namespace: string | undefined; continued: boolean };

export type ListFaultAnswer =
  /** The connection is destroyed before any answer, as when the server process goes away. */
  | { kind: 'reset' }
  /** 429 TooManyRequests with a Retry-After header. */
  | { kind: 'throttle'; retryAfterSeconds: number }
  /** 410 Expired, as for a continue token older than the last compaction. */
  | { kind: 'expire' };

export type ListFault = (page: ListPage) => ListFaultAnswer | undefined;

/** The refusal for a throttle or expire answer; `reset` has none (the caller drops the socket). */
export function listFaultError(a: Exclude<ListFaultAnswer, { kind: 'reset' }>): ApiError {
  switch (a.kind) {
    case 'throttle':
      return tooManyRequests('Too many requests, please try again later.', [], a.retryAfterSeconds);
    case 'expire':
      return expired(EXPIRED_CONTINUE, encodeContinue({ rv: 0, start: '' }));
    default: {
      const never: never = a;
      throw new Error(`unknown list fault ${JSON.stringify(never)}`);
    }
  }
}
