/**
 * The management cluster through the Kubernetes client (src/adapters/kube/client.ts): discovery
 * of the Cluster API kinds, listing, and the writes backup and restore make (pause, create,
 * status, delete). Objects are raw JSON as the server sent them.
 */
import { KubeClient } from '../adapters/kube/client.js';
import type { KubeRequester } from '../adapters/kube/request.js';
import { isClusterApiGroup } from './graph.js';
import type { KindInfo, KubeObject } from './model.js';

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
  readonly #client: KubeClient;

  constructor(
    readonly req: KubeRequester,
    private kinds: KindInfo[] = [],
  ) {
    this.#client = KubeClient.of(req);
  }

  /**
   * Custom resource kinds clusterctl move would discover: CRDs labelled `clusterctl.cluster.x-k8s.io`
   * (capi.md §5.1), and, since a CRD applied without clusterctl has no label, every CRD of a
   * `*.cluster.x-k8s.io` group.
   */
  async discoverKinds(): Promise<KindInfo[]> {
    const out: KindInfo[] = [];
    for (const crd of await this.#client.customResourceDefinitions()) {
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
    const items = await this.#client.list(this.collectionPath(apiVersion, kind));
    // List items need not carry their type; the archive must.
    return items.map((o) => ({ ...o, apiVersion, kind }));
  }

  async listKind(k: KindInfo): Promise<KubeObject[]> {
    return this.list(`${k.group}/${k.storageVersion}`, k.kind);
  }

  get(r: ObjectRef): Promise<KubeObject | undefined> {
    return this.#client.get(this.objectPath(r));
  }

  mergePatch(r: ObjectRef, body: unknown): Promise<KubeObject> {
    return this.#client.mergePatch(this.objectPath(r), body);
  }

  create(o: KubeObject): Promise<KubeObject> {
    return this.#client.create(this.collectionPath(o.apiVersion, o.kind, o.metadata.namespace), o);
  }

  putStatus(o: KubeObject): Promise<KubeObject> {
    return this.#client.replaceStatus(this.objectPath(refOf(o)), o);
  }

  async delete(r: ObjectRef): Promise<void> {
    await this.#client.delete(this.objectPath(r));
  }
}

export function refOf(o: KubeObject): ObjectRef {
  return { apiVersion: o.apiVersion, kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name };
}
