/**
 * The port through which the core reads a Kubernetes API. No client library here: collect.ts and
 * tests depend on this file only; `reader.ts` implements it with @kubernetes/client-node.
 */
import type { KubeObject } from '../snapshot/model.js';
import type { ResourceKind } from './kube-kinds.js';

export interface ListOptions {
  /** Omit for all namespaces. */
  namespace?: string;
  fieldSelector?: string;
  labelSelector?: string;
  /** Page size (`limit`); default 500 like kubectl. */
  pageSize?: number;
  /**
   * Applied to each item as its page arrives, so a 150,000-pod list is held only in its reduced
   * form. Return undefined to drop the item.
   */
  map?: (obj: KubeObject) => KubeObject | undefined;
  /** Called after each page with the running item count (progress display). */
  onPage?: (itemsSoFar: number) => void;
  /**
   * Called before a page is asked for again (`restart: false`: a transient answer, the list
   * resumes where it was) or before the list starts over (`restart: true`: an expired continue
   * token; what `map` saw of the earlier attempt is void).
   */
  onRetry?: (retry: ListRetry) => void;
}

export interface ListRetry {
  restart: boolean;
  /** What happened and what is done about it, for the operator. */
  message: string;
}

export interface ServerVersion {
  gitVersion: string;
  major?: string;
  minor?: string;
  platform?: string;
}

export interface KubeReader {
  /** The API server URL from the kubeconfig, e.g. "https://10.0.0.10:6443". */
  readonly server: string;
  /** The kubeconfig context in use. */
  readonly context: string;
  /** GET /version: the first request, so an unreachable server fails here and fast. */
  version(): Promise<ServerVersion>;
  /**
   * The complete list, every item with `apiVersion` and `kind` set. Pages with `limit`/`continue`;
   * when a continue token expires (410 Gone) the list starts over, so the result is one
   * consistent list and never holds an item twice.
   */
  list(kind: ResourceKind, opts?: ListOptions): Promise<KubeObject[]>;
  /** One object, or undefined when the API answers 404. */
  get(kind: ResourceKind, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
}

/** An HTTP-level error answer from the API server (a Kubernetes `Status` when it sent one). */
export class KubeApiError extends Error {
  readonly status: number;
  /** Status.reason, e.g. "NotFound", "Forbidden", "Expired". */
  readonly reason: string | undefined;
  readonly path: string;
  /** host:port the request went to. */
  readonly address: string;
  /** Status.metadata.continue on a 410 Expired answer. */
  readonly continueToken: string | undefined;
  /** Retry-After header on 429/503, in seconds. */
  readonly retryAfterSeconds: number | undefined;
  /** The server's own words (Status.message), without the address and path. */
  readonly serverMessage: string;

  constructor(opts: {
    status: number;
    reason?: string;
    message: string;
    path: string;
    address: string;
    continueToken?: string;
    retryAfterSeconds?: number;
  }) {
    super(
      `${opts.address} GET ${opts.path}: HTTP ${opts.status}${opts.reason ? ` ${opts.reason}` : ''}: ${opts.message}`,
    );
    this.name = 'KubeApiError';
    this.status = opts.status;
    this.reason = opts.reason;
    this.path = opts.path;
    this.address = opts.address;
    this.continueToken = opts.continueToken;
    this.retryAfterSeconds = opts.retryAfterSeconds;
    this.serverMessage = opts.message;
  }
}

export function isKubeApiError(err: unknown, status?: number): err is KubeApiError {
  return err instanceof KubeApiError && (status === undefined || err.status === status);
}
