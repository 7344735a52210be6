/**
 * KubeReader implemented over a kubeconfig (client-node) and ferry's one requester (request.ts).
 */

import { isKubeApiError, type KubeReader, type ListOptions, type ServerVersion } from '../../ports/kube.js';
import { apiVersionOf, RESOURCE_TYPES, type ResourceKind, resourcePath } from '../../ports/kube-kinds.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type LoadedKubeconfig, loadKubeconfig } from './kubeconfig.js';
import { listAll } from './paginate.js';
import { createRequester, KubeNetworkError, type KubeRequester } from './request.js';

export interface KubeReaderOptions {
  /** A kubeconfig file, or one already loaded (a Cluster API kubeconfig Secret's, held in memory). */
  kubeconfig: string | LoadedKubeconfig;
  /** Connecting and the TLS handshake must finish within this. Default 5 s. */
  connectTimeoutMs?: number;
  /** A silent connection (no bytes either way) fails after this. Default 30 s. */
  idleTimeoutMs?: number;
  /** Whole request, headers to last byte. Default 120 s (a 500-pod page is well under a second). */
  requestTimeoutMs?: number;
  context?: string;
  /** Attempts per request for transient answers (429, 5xx, connection reset or refused). Default 5. */
  attempts?: number;
}

export function createKubeReader(opts: KubeReaderOptions): KubeReader {
  const loaded =
    typeof opts.kubeconfig === 'string' ? loadKubeconfig(opts.kubeconfig, opts.context) : opts.kubeconfig;
  const requester = createRequester(loaded, {
    connectTimeoutMs: opts.connectTimeoutMs ?? 5_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? 30_000,
    timeoutMs: opts.requestTimeoutMs ?? 120_000,
  });
  return readerOver(requester, {
    server: loaded.server,
    context: loaded.context,
    attempts: opts.attempts ?? 5,
  });
}

export function readerOver(
  requester: KubeRequester,
  meta: { server: string; context: string; attempts: number },
): KubeReader {
  const get = (
    path: string,
    query?: Record<string, string | number | undefined>,
    onRetry?: (message: string) => void,
  ) => withRetries(() => requester.request('GET', path, query ? { query } : {}), meta.attempts, onRetry);

  return {
    server: meta.server,
    context: meta.context,

    async version(): Promise<ServerVersion> {
      // No retries: this is the reachability probe and must fail fast.
      const v = (await requester.request('GET', '/version')) as Partial<ServerVersion>;
      if (typeof v?.gitVersion !== 'string') {
        throw new Error(
          `${requester.address} GET /version: no gitVersion in the answer; is this a Kubernetes API server?`,
        );
      }
      return v as ServerVersion;
    },

    async list(kind: ResourceKind, lo: ListOptions = {}): Promise<KubeObject[]> {
      const t = RESOURCE_TYPES[kind];
      const apiVersion = apiVersionOf(t);
      const path = resourcePath(kind, lo.namespace !== undefined ? { namespace: lo.namespace } : {});
      let page = 0;
      const result = await listAll(
        async (token, limit) => {
          page = token === undefined ? 1 : page + 1;
          const body = (await get(
            path,
            {
              limit,
              continue: token,
              fieldSelector: lo.fieldSelector,
              labelSelector: lo.labelSelector,
            },
            (message) => lo.onRetry?.({ restart: false, message: `page ${page}: ${message}` }),
          )) as { items?: KubeObject[] | null; metadata?: { continue?: string } };
          const items = (body.items ?? []).map((o) => withTypeMeta(o, apiVersion, t.kind));
          return { items, ...(body.metadata?.continue && { continueToken: body.metadata.continue }) };
        },
        {
          ...(lo.pageSize !== undefined && { pageSize: lo.pageSize }),
          ...(lo.map && { map: lo.map }),
          ...(lo.onPage && { onPage: lo.onPage }),
          ...(lo.onRetry && { onRetry: lo.onRetry }),
        },
      );
      return result.items;
    },

    async get(
      kind: ResourceKind,
      namespace: string | undefined,
      name: string,
    ): Promise<KubeObject | undefined> {
      const t = RESOURCE_TYPES[kind];
      try {
        const obj = (await get(
          resourcePath(kind, { ...(namespace !== undefined && { namespace }), name }),
        )) as KubeObject;
        return withTypeMeta(obj, apiVersionOf(t), t.kind);
      } catch (err) {
        if (isKubeApiError(err, 404)) return undefined;
        throw err;
      }
    },
  };
}

/** List items come without apiVersion/kind; everything downstream routes by kind. */
function withTypeMeta(obj: KubeObject, apiVersion: string, kind: string): KubeObject {
  if (!obj.apiVersion) obj.apiVersion = apiVersion;
  if (!obj.kind) obj.kind = kind;
  return obj;
}

const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
/** A connection lost or refused mid-collection: the server restarting, a load balancer failing over. */
const TRANSIENT_NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

async function withRetries<T>(
  fn: () => Promise<T>,
  attempts: number,
  onRetry?: (message: string) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const transient =
        (isKubeApiError(err) && TRANSIENT_STATUS.has(err.status)) ||
        (err instanceof KubeNetworkError && err.code !== undefined && TRANSIENT_NETWORK.has(err.code));
      if (!transient || attempt >= attempts) {
        if (transient && attempts > 1) (err as Error).message += ` (gave up after ${attempts} attempts)`;
        throw err;
      }
      const hinted = isKubeApiError(err) ? err.retryAfterSeconds : undefined;
      const delayMs = hinted !== undefined ? Math.min(hinted, 10) * 1000 : 250 * 2 ** (attempt - 1);
      const why = isKubeApiError(err)
        ? `HTTP ${err.status}${err.reason ? ` ${err.reason}` : ''}${hinted !== undefined ? ` (Retry-After ${hinted} s)` : ''}`
        : `connection ${(err as KubeNetworkError).code === 'ECONNREFUSED' ? 'refused' : 'lost'}`;
      onRetry?.(`${why}; asking again in ${delayMs / 1000} s (attempt ${attempt + 1} of ${attempts})`);
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
