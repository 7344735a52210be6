/**
 * The management cluster through the Kubernetes API (src/adapters/kube/request.ts): discovery of
 * the Cluster API kinds, listing, and the writes backup and restore make (pause, create, status,
 * delete). Objects are raw JSON as the server sent them.
 */
import { listAll } from '../adapters/kube/paginate.js';
import type { KubeRequester } from '../adapters/kube/request.js';
import { isKubeApiError } from '../ports/kube.js';
import { isClusterApiGroup } from './graph.js';
import type { KindInfo, KubeObject } from './model.js';

const MERGE = 'application/merge-patch+json';
const CLUSTERCTL_LABEL = 'clusterctl.cluster.x-k8s.io';
export const INVENTORY_CRD = 'providers.clusterctl.cluster.x-k8s.io';

interface CrdVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: unknown };
}

/** The core kinds a backup carries, beside the custom ones. */
const CORE: Record<string, string> = { Secret: 'secrets', ConfigMap: 'configmaps', Namespace: 'namespaces' };

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
}

export class MgmtKube {
  constructor(
    readonly req: KubeRequester,
    private kinds: KindInfo[] = [],
  ) {}

  /**
   * Custom resource kinds clusterctl move would discover: CRDs labelled `clusterctl.cluster.x-k8s.io`
   * (capi.md §5.1), and, since a CRD applied without clusterctl has no label, every CRD of a
   * `*.cluster.x-k8s.io` group.
   */
  async discoverKinds(): Promise<KindInfo[]> {
    const list = (await this.req.request(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    )) as {
      items: KubeObject[];
    };
    const out: KindInfo[] = [];
    for (const crd of list.items) {
      const group = crd.spec?.group as string;
      if (crd.metadata.labels?.[CLUSTERCTL_LABEL] === undefined && !isClusterApiGroup(`${group}/v`)) continue;
      const versions = (crd.spec?.versions ?? []) as CrdVersion[];
      const storage = versions.find((v) => v.storage);
      if (!storage) continue;
      out.push({
        crd: crd.metadata.name,
        group,
        kind: crd.spec.names.kind,
        plural: crd.spec.names.plural,
        scope: crd.spec.scope === 'Cluster' ? 'Cluster' : 'Namespaced',
        storageVersion: storage.name,
        served: versions.filter((v) => v.served !== false).map((v) => v.name),
        statusSubresource: storage.subresources?.status !== undefined,
      });
    }
    this.kinds = out.sort((a, b) => a.crd.localeCompare(b.crd));
    return this.kinds;
  }

  setKinds(kinds: KindInfo[]): void {
    this.kinds = kinds;
  }

  kindOf(apiVersion: string, kind: string): KindInfo | undefined {
    return this.kindIn(apiVersion.split('/')[0]!, kind);
  }

  kindIn(group: string, kind: string): KindInfo | undefined {
    return this.kinds.find((k) => k.group === group && k.kind === kind);
  }

  /** Collection path of a kind (all namespaces when `namespace` is undefined). */
  collectionPath(apiVersion: string, kind: string, namespace?: string): string {
    const core = CORE[kind];
    if (core && apiVersion === 'v1') {
      if (kind === 'Namespace') return '/api/v1/namespaces';
      return namespace ? `/api/v1/namespaces/${namespace}/${core}` : `/api/v1/${core}`;
    }
    const k = this.kindOf(apiVersion, kind);
    if (!k) throw new Error(`no served kind ${kind} in ${apiVersion}`);
    const base = `/apis/${apiVersion}`;
    return k.scope === 'Namespaced' && namespace
      ? `${base}/namespaces/${namespace}/${k.plural}`
      : `${base}/${k.plural}`;
  }

  objectPath(r: ObjectRef): string {
    return `${this.collectionPath(r.apiVersion, r.kind, r.namespace)}/${r.name}`;
  }

  async list(apiVersion: string, kind: string): Promise<KubeObject[]> {
    const path = this.collectionPath(apiVersion, kind);
    const { items } = await listAll(async (token, limit) => {
      const page = (await this.req.request('GET', path, { query: { limit, continue: token } })) as {
        items?: KubeObject[];
        metadata?: { continue?: string };
      };
      return {
        items: page.items ?? [],
        ...(page.metadata?.continue && { continueToken: page.metadata.continue }),
      };
    });
    // List items need not carry their type; the archive must.
    return items.map((o) => ({ ...o, apiVersion, kind }));
  }

  async listKind(k: KindInfo): Promise<KubeObject[]> {
    return this.list(`${k.group}/${k.storageVersion}`, k.kind);
  }

  async get(r: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return (await this.req.request('GET', this.objectPath(r))) as KubeObject;
    } catch (err) {
      if (isKubeApiError(err, 404)) return undefined;
      throw err;
    }
  }

  async mergePatch(r: ObjectRef, body: unknown): Promise<KubeObject> {
    return (await this.req.request('PATCH', this.objectPath(r), { body, contentType: MERGE })) as KubeObject;
  }

  async create(o: KubeObject): Promise<KubeObject> {
    const path = this.collectionPath(o.apiVersion, o.kind, o.metadata.namespace);
    return (await this.req.request('POST', path, { body: o })) as KubeObject;
  }

  async putStatus(o: KubeObject): Promise<KubeObject> {
    return (await this.req.request('PUT', `${this.objectPath(refOf(o))}/status`, { body: o })) as KubeObject;
  }

  async delete(r: ObjectRef): Promise<void> {
    try {
      await this.req.request('DELETE', this.objectPath(r));
    } catch (err) {
      if (!isKubeApiError(err, 404)) throw err;
    }
  }
}

export function refOf(o: KubeObject): ObjectRef {
  return { apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name };
}
