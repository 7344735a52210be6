/**
 * The typed Kubernetes client every part of ferry uses (the run, capi, mgmt), over the one
 * requester (request.ts): get (404 is "absent", not an error), paginated list, create, merge patch,
 * the status subresource, delete (an absent object is no error) and CRD discovery. Paths are the
 * caller's: each knows its kinds (a kit's apiVersions, discovered CRDs, the core kinds). Objects
 * are raw JSON as the server sent them.
 */

import { isKubeApiError } from '../../ports/kube.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { LoadedKubeconfig } from './kubeconfig.js';
import { type ListAllOptions, listAll } from './paginate.js';
import {
  createRequester,
  type KubeRequester,
  MERGE_PATCH,
  type RequesterOptions,
  type RequestOptions,
} from './request.js';

export { MERGE_PATCH };

export const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface ClientListOptions extends Omit<ListAllOptions, 'maxRestarts'> {
  /** labelSelector, fieldSelector…; limit and continue are the client's. */
  query?: Record<string, string | undefined>;
}

/** A KubeRequester too, so code that takes a requester can be given the client. */
export class KubeClient implements KubeRequester {
  constructor(readonly requester: KubeRequester) {}

  /** The client over `req`: `req` itself when it is one. */
  static of(req: KubeRequester): KubeClient {
    return req instanceof KubeClient ? req : new KubeClient(req);
  }

  get address(): string {
    return this.requester.address;
  }

  get server(): string {
    return this.requester.server;
  }

  request(method: string, path: string, opts?: RequestOptions): Promise<unknown> {
    return this.requester.request(method, path, opts);
  }

  /** The object at `path`, or undefined when the server answers 404. */
  async get<T = KubeObject>(path: string, query?: RequestOptions['query']): Promise<T | undefined> {
    try {
      return (await this.requester.request('GET', path, query ? { query } : {})) as T;
    } catch (err) {
      if (isKubeApiError(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * Every item of the collection at `path`, in pages (`limit`/`continue`; an expired continue
   * token starts the list over: paginate.ts). Items are as the server sent them: a list's items
   * need not carry apiVersion and kind.
   */
  async list(path: string, opts: ClientListOptions = {}): Promise<KubeObject[]> {
    const { query, ...paging } = opts;
    const { items } = await listAll(async (token, limit) => {
      const page = (await this.requester.request('GET', path, {
        query: { ...query, limit, continue: token },
      })) as { items?: KubeObject[] | null; metadata?: { continue?: string } };
      return {
        items: page.items ?? [],
        ...(page.metadata?.continue && { continueToken: page.metadata.continue }),
      };
    }, paging);
    return items;
  }

  async create<T = KubeObject>(collectionPath: string, obj: unknown): Promise<T> {
    return (await this.requester.request('POST', collectionPath, { body: obj })) as T;
  }

  async mergePatch<T = KubeObject>(path: string, patch: unknown): Promise<T> {
    return (await this.requester.request('PATCH', path, { body: patch, contentType: MERGE_PATCH })) as T;
  }

  /** A merge patch of the status subresource of the object at `path`. */
  mergePatchStatus<T = KubeObject>(path: string, patch: unknown): Promise<T> {
    return this.mergePatch<T>(`${path}/status`, patch);
  }

  /** Replaces the status subresource of the object at `path` with `obj`'s. */
  async replaceStatus<T = KubeObject>(path: string, obj: unknown): Promise<T> {
    return (await this.requester.request('PUT', `${path}/status`, { body: obj })) as T;
  }

  /** Deletes the object at `path`; false when it was not there (404), which is no error. */
  async delete(path: string): Promise<boolean> {
    try {
      await this.requester.request('DELETE', path);
      return true;
    } catch (err) {
      if (isKubeApiError(err, 404)) return false;
      throw err;
    }
  }

  /** Discovery of the custom kinds: every CustomResourceDefinition, as the server holds it. */
  customResourceDefinitions(opts: ClientListOptions = {}): Promise<KubeObject[]> {
    return this.list(CRD_PATH, opts);
  }
}

/** The client of the API server a kubeconfig names (keep-alive: request.ts). */
export function createKubeClient(loaded: LoadedKubeconfig, opts: RequesterOptions = {}): KubeClient {
  return new KubeClient(createRequester(loaded, opts));
}
