/**
 * Test support: the MgmtApi calls the capi provisioner and cp-create make, over objects held in
 * memory, with a log of the writes and knobs that make a call fail. Where a controller would act
 * (a Machine for raised replicas, a nodeRef once booted), a test's `onList` hook does it. The
 * lab-backed suites (*.real.test.ts) run the same code against a served CRD set.
 */
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, PAUSED_ANNOTATION } from '../../capi/view.js';
import type { CapiNames } from '../../kit/capi-names.js';
import type { ControlPlaneView } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import { DEPLOYMENT_NAME_LABEL, type MgmtApi } from './mgmt-api.js';

export class MemoryMgmt {
  readonly names: CapiNames = {
    namespace: 'lab',
    cluster: 'lab',
    controlPlane: 'lab-control-plane',
    machineDeployments: [],
  };
  /** Every call but reads of Machines and objects, in order: "create Machine", "replicas 1", … */
  readonly calls: string[] = [];
  failCreate?: (o: KubeObject) => boolean;
  failDelete?: (o: KubeObject) => boolean;
  failReplicas?: (n: number) => boolean;
  /** Runs before each list of Machines is answered: a controller's work. */
  onList?: (api: MemoryMgmt) => void;
  unserved = new Set<string>();
  clusterPaused = false;
  /** The Cluster object and its kubeconfig Secret; an Error makes the read fail. */
  cluster: KubeObject | Error | undefined;
  kubeconfig: KubeObject | Error | undefined;
  mdReplicas = new Map<string, number>();

  constructor(
    public tcp: KubeObject | undefined,
    public objects: KubeObject[],
  ) {}

  async controlPlaneObject() {
    return this.tcp && structuredClone(this.tcp);
  }
  async controlPlane(): Promise<ControlPlaneView | undefined> {
    if (!this.tcp) return undefined;
    const replicas = this.tcp.spec?.['replicas'];
    return {
      namespace: this.names.namespace,
      name: this.names.controlPlane,
      paused: this.tcp.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined,
      clusterPaused: this.clusterPaused,
      replicas: typeof replicas === 'number' ? replicas : undefined,
      statusReplicas: undefined,
      readyReplicas: undefined,
    } as ControlPlaneView;
  }
  async clusterObject() {
    if (this.cluster instanceof Error) throw this.cluster;
    return this.cluster;
  }
  async kubeconfigSecret() {
    if (this.kubeconfig instanceof Error) throw this.kubeconfig;
    return this.kubeconfig;
  }
  async getObject(apiVersion: string, kind: string, name: string) {
    return this.objects.find(
      (o) => o.apiVersion === apiVersion && o.kind === kind && o.metadata.name === name,
    );
  }
  async servedKinds(apiVersion: string) {
    this.calls.push(`served ${apiVersion}`);
    return new Set(['Machine', 'TalosConfig', 'ProxmoxMachine'].filter((k) => !this.unserved.has(k)));
  }
  async setControlPlaneReplicas(n: number) {
    this.calls.push(`replicas ${n}`);
    if (this.failReplicas?.(n)) throw new Error('conflict');
    if (this.tcp?.spec) this.tcp.spec['replicas'] = n;
  }
  async machineDeploymentReplicas(md: string) {
    return this.mdReplicas.get(md);
  }
  async setMachineDeploymentReplicas(md: string, n: number) {
    this.calls.push(`md ${md} replicas ${n}`);
    this.mdReplicas.set(md, n);
  }
  async machines(of: { controlPlane: true } | { machineDeployment: string }) {
    this.onList?.(this);
    return this.objects.filter((o) => {
      const l = o.metadata.labels ?? {};
      if (o.kind !== 'Machine' || l[CLUSTER_NAME_LABEL] !== this.names.cluster) return false;
      return 'controlPlane' in of
        ? l[CONTROL_PLANE_LABEL] !== undefined
        : l[DEPLOYMENT_NAME_LABEL] === of.machineDeployment;
    });
  }
  async create(o: KubeObject) {
    this.calls.push(`create ${o.kind}`);
    if (this.failCreate?.(o)) throw new Error(`admission webhook denied ${o.kind}`);
    this.objects.push(o);
  }
  async delete(o: KubeObject) {
    this.calls.push(`delete ${o.kind}`);
    if (this.failDelete?.(o)) throw new Error('forbidden');
    this.objects = this.objects.filter((x) => x !== o);
  }
  /** What was written, the discovery reads left out. */
  writes(): string[] {
    return this.calls.filter((c) => !c.startsWith('served'));
  }
  asApi(): MgmtApi {
    // The members the provisioner and cp-create use, not MgmtApi's private fields.
    return this as unknown as MgmtApi;
  }
}

/** A Machine as Cluster API would list it. */
export function machine(
  name: string,
  labels: Record<string, string>,
  status: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'lab', labels: { [CLUSTER_NAME_LABEL]: 'lab', ...labels } },
    spec,
    status,
  };
}
