/**
 * The few management-cluster requests a capi run makes beyond adoption: read, pause, unpause and
 * scale the TalosControlPlane, scale a MachineDeployment, list a cluster's Machines, read the
 * Cluster and its kubeconfig Secret (why a Machine gets no Node). Paths come
 * from the kit's objects (their apiVersion), merge patches only: they need no OpenAPI and touch
 * only the fields named.
 */

import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  isPaused,
  kubeconfigSecretName,
  PAUSED_ANNOTATION,
} from '../../capi/view.js';
import type { CapiNames } from '../../kit/capi-names.js';
import type { ControlPlaneView } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import { KubeClient } from '../kube/client.js';
import type { KubeRequester } from '../kube/request.js';

export const DEPLOYMENT_NAME_LABEL = 'cluster.x-k8s.io/deployment-name';

export interface MgmtApiOptions {
  req: KubeRequester;
  names: CapiNames;
  /** apiVersions of the kit's objects; defaults are the ones `ferry generate` writes. */
  versions?: { cluster?: string; controlPlane?: string; machines?: string };
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

export class MgmtApi {
  readonly names: CapiNames;
  readonly #client: KubeClient;
  readonly #cluster: string;
  readonly #tcp: string;
  readonly #capi: string;

  constructor(o: MgmtApiOptions) {
    this.#client = KubeClient.of(o.req);
    this.names = o.names;
    const ns = encodeURIComponent(o.names.namespace);
    this.#cluster = `/apis/${o.versions?.cluster ?? 'cluster.x-k8s.io/v1beta2'}/namespaces/${ns}/clusters/${encodeURIComponent(o.names.cluster)}`;
    this.#tcp = `/apis/${o.versions?.controlPlane ?? 'controlplane.cluster.x-k8s.io/v1alpha3'}/namespaces/${ns}/taloscontrolplanes/${encodeURIComponent(o.names.controlPlane)}`;
    this.#capi = `/apis/${o.versions?.machines ?? 'cluster.x-k8s.io/v1beta2'}/namespaces/${ns}`;
  }

  /** A kit's objects name the versions. */
  static fromKit(req: KubeRequester, names: CapiNames, kit: KubeObject[]): MgmtApi {
    const v = (kind: string) => kit.find((o) => o.kind === kind)?.apiVersion;
    const cluster = v('Cluster');
    const controlPlane = v('TalosControlPlane');
    return new MgmtApi({
      req,
      names,
      versions: {
        ...(cluster && { cluster, machines: cluster }),
        ...(controlPlane && { controlPlane }),
      },
    });
  }

  #get(path: string): Promise<KubeObject | undefined> {
    return this.#client.get(path);
  }

  async #patch(path: string, body: unknown): Promise<void> {
    await this.#client.mergePatch(path, body);
  }

  async controlPlane(): Promise<ControlPlaneView | undefined> {
    const tcp = await this.#get(this.#tcp);
    if (!tcp) return undefined;
    const cluster = await this.#get(this.#cluster);
    return {
      namespace: this.names.namespace,
      name: this.names.controlPlane,
      paused: tcp.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined,
      // The Cluster is paused by its spec.paused or by the paused annotation on itself (IsPaused).
      clusterPaused: cluster !== undefined && isPaused(cluster, cluster),
      replicas: num(tcp.spec?.['replicas']),
      statusReplicas: num(tcp.status?.['replicas']),
      readyReplicas: num(tcp.status?.['readyReplicas']),
      ready: tcp.status?.['ready'] === true,
    };
  }

  /** The Cluster as the server holds it (its status says whether Cluster API watches Nodes). */
  clusterObject(): Promise<KubeObject | undefined> {
    return this.#get(this.#cluster);
  }

  /** The `<cluster>-kubeconfig` Secret Cluster API reaches the workload cluster through; its data is never shown. */
  kubeconfigSecret(): Promise<KubeObject | undefined> {
    return this.#get(
      `/api/v1/namespaces/${encodeURIComponent(this.names.namespace)}/secrets/${encodeURIComponent(kubeconfigSecretName(this.names.cluster))}`,
    );
  }

  /** The TalosControlPlane as the server holds it (uid, spec), for making its Machines. */
  controlPlaneObject(): Promise<KubeObject | undefined> {
    return this.#get(this.#tcp);
  }

  #path(apiVersion: string, kind: string, name?: string): string {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = encodeURIComponent(this.names.namespace);
    return `${base}/namespaces/${ns}/${kind.toLowerCase()}s${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  /**
   * The kinds the server serves under `apiVersion` (discovery: GET /apis/GROUP/VERSION); an
   * empty set when it serves no such group version (404).
   */
  async servedKinds(apiVersion: string): Promise<Set<string>> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = (await this.#get(path)) as { resources?: { name?: string; kind?: string }[] } | undefined;
    // Subresources (machines/status) name their parent's kind too: only top-level resources count.
    return new Set(
      (list?.resources ?? []).filter((r) => r.name && !r.name.includes('/')).flatMap((r) => r.kind ?? []),
    );
  }

  /** A namespaced object of the cluster's namespace; undefined when it does not exist. */
  getObject(apiVersion: string, kind: string, name: string): Promise<KubeObject | undefined> {
    return this.#get(this.#path(apiVersion, kind, name));
  }

  create(obj: KubeObject): Promise<KubeObject> {
    return this.#client.create(this.#path(obj.apiVersion, obj.kind), obj);
  }

  /** Deletes a namespaced object of the cluster's namespace; an absent one is no error. */
  async delete(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
    await this.#client.delete(this.#path(obj.apiVersion, obj.kind, obj.metadata.name));
  }

  pauseControlPlane(): Promise<void> {
    return this.#patch(this.#tcp, { metadata: { annotations: { [PAUSED_ANNOTATION]: 'true' } } });
  }

  unpauseControlPlane(): Promise<void> {
    return this.#patch(this.#tcp, { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
  }

  setControlPlaneReplicas(replicas: number): Promise<void> {
    return this.#patch(this.#tcp, { spec: { replicas } });
  }

  #md(name: string): string {
    return `${this.#capi}/machinedeployments/${encodeURIComponent(name)}`;
  }

  async machineDeploymentReplicas(name: string): Promise<number | undefined> {
    const md = await this.#get(this.#md(name));
    if (!md) return undefined;
    return num(md.spec?.['replicas']) ?? 0;
  }

  setMachineDeploymentReplicas(name: string, replicas: number): Promise<void> {
    return this.#patch(this.#md(name), { spec: { replicas } });
  }

  /** The cluster's control-plane Machines, or the Machines of one MachineDeployment. */
  async machines(of: { controlPlane: true } | { machineDeployment: string }): Promise<KubeObject[]> {
    const selector =
      'controlPlane' in of
        ? `${CLUSTER_NAME_LABEL}=${this.names.cluster},${CONTROL_PLANE_LABEL}`
        : `${CLUSTER_NAME_LABEL}=${this.names.cluster},${DEPLOYMENT_NAME_LABEL}=${of.machineDeployment}`;
    return this.#client.list(`${this.#capi}/machines`, { query: { labelSelector: selector } });
  }
}
