/**
 * The lab's Cluster API — a lab, not Cluster API: one loop standing in for the core Machine,
 * MachineSet and MachineDeployment controllers, CACPPT, CAPMOX/CAPV and a cloud controller
 * manager, just enough to rehearse an adoption and roll, and to reproduce the hazards that break
 * one (H1 etcd audit, H2 second bootstrap, H3 undrained CP scale-down, H4 undrained worker delete
 * while no control-plane Machine exists, H5 MachineSet preflight, H11 no providerID without a CCM).
 *
 * How to use (`ferry rehearse --provisioner capi`):
 *   const lab = await LabCluster.fromSnapshot(snapshot, { dir, subnet, capi: { ccm: true } });
 *   // The lab API server is both the management and the workload cluster, and now serves the
 *   // Cluster API CRDs: lab.kubeconfigPath is the --mgmt-kubeconfig as well (lab.info().capi).
 *   // Adopt, then scale the TalosControlPlane / MachineDeployments as ferry does: this loop makes
 *   // the Machines, MachineSets, infrastructure machines and lab nodes (Talos hostname = Machine
 *   // name), sets nodeRefs and statuses. lab.capi.events says what it did (hazards included).
 *   await lab.dispose(); // stops the loop with the lab
 * `ccm: false`: Nodes get no providerID, so new Machines stay Provisioned without one (H11).
 *
 * Each pass (default every 200 ms, errors logged and recorded, never thrown), for every Cluster not
 * paused: the TalosControlPlane step (unless paused: H3 scale-down, H2 bootstrap, H1 audit, scale
 * up by one Machine once every CP Machine has a Node, status), then the MachineDeployment steps
 * (MachineSet, H5 preflight, Machines up or down, status), then the Machine step (boot a Machine
 * someone else created — ferry, adding a control plane while the TalosControlPlane is paused —
 * nodeRef, providerID, phase; deletion with the H4 rule). The Cluster step marks the Cluster
 * ControlPlaneInitialized from its control plane's status.initialized, seeing a paused one's change
 * only when the Cluster itself changes; a nodeRef needs that and the `<cluster>-kubeconfig` Secret,
 * as core Cluster API's does (docs/knowledge/capi.md §4.9). CP before Machines: a Machine created in one pass
 * gets its nodeRef no earlier than the next, and the audit sees it one pass later still.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type KubeRequester, MERGE_PATCH } from '../../adapters/kube/request.js';
import {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  clusterControlPlaneInitialized,
  kubeconfigSecretName,
  kubeconfigSecretUnusable,
  PAUSED_ANNOTATION,
} from '../../capi/view.js';
import { isKubeApiError } from '../../ports/kube.js';
import type { EtcdAdminPort } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Taint } from '../nodes/schedule.js';
import { reconcileBootstrap, type TalosBootstrapPort } from './bootstrap.js';
import { reconcileEtcdAudit } from './etcd-audit.js';
import { preflightHold } from './machineset.js';
import { reconcileScaleDown } from './scale-down.js';
import { type NodeShape, patchesNodeShape } from './template-node.js';

export type MachineRole = 'control-plane' | 'worker';

/** What the lab does when Cluster API's infrastructure provider creates or deletes a VM. */
export interface LabMachinePort {
  /** Boots a Talos node whose hostname is `name`; resolves once it is booting (not joined). */
  provisionMachine(spec: {
    name: string;
    role: MachineRole;
    labels: Record<string, string>;
    taints: Taint[];
    allowSchedulingOnControlPlanes?: boolean;
  }): Promise<{ name: string; address: string }>;
  /** Powers the machine off (its infrastructure machine is deleted). Unknown names are ignored. */
  deprovisionMachine(name: string): Promise<void>;
}

/** The etcd the H1 audit lists and removes members of; closed after each audit. */
export type LabEtcdPort = Pick<EtcdAdminPort, 'observe' | 'removeMember' | 'close'>;

export type CapiLabEvent =
  | { kind: 'machine-created'; namespace: string; machine: string; role: MachineRole; address: string }
  | { kind: 'machine-failed'; namespace: string; machine: string; message: string }
  | { kind: 'node-ref'; namespace: string; machine: string; node: string; providerID: string }
  /** A Machine's Node is not linked: Cluster API cannot reach the workload cluster yet (why). */
  | { kind: 'node-link-blocked'; namespace: string; machine: string; why: string }
  /** The Cluster read its control plane's status.initialized: ControlPlaneInitialized. */
  | { kind: 'control-plane-initialized'; namespace: string; cluster: string }
  /** H5: the MachineSet preflight holds new Machines. */
  | { kind: 'held'; namespace: string; machineDeployment: string; why: string }
  /** H1: the etcd audit removed (or tried to remove) members no Machine owns. */
  | { kind: 'etcd-audit'; namespace: string; removed: string[]; failed: string[] }
  /** H2: Talos Bootstrap called on a control plane without etcd data: a second etcd cluster. */
  | { kind: 'bootstrapped'; namespace: string; address: string }
  /** H3: a control-plane scale-down deleted the Node outright. */
  | { kind: 'scale-down'; namespace: string; machine: string; node: string | null; pods: string[] }
  /** A Machine deleted; `drained: false` with `skipped` says why its Node was not drained (H4). */
  | {
      kind: 'machine-deleted';
      namespace: string;
      machine: string;
      node: string | null;
      drained: boolean;
      nodeDeleted: boolean;
      skipped?: string;
    }
  | { kind: 'error'; message: string };

export interface LabCapiOptions {
  /** The lab API server: management and workload cluster at once. */
  api: KubeRequester;
  machines: LabMachinePort;
  /** For the H1 audit; without it the audit is not run. */
  etcd?: () => LabEtcdPort;
  /** For the H2 bootstrap; without it no bootstrap is attempted. */
  talos?: TalosBootstrapPort;
  /** A cloud controller manager runs in the workload cluster (sets Node providerIDs). Default true. */
  ccm?: boolean;
  /** Pause between passes. Default 200 ms. */
  intervalMs?: number;
  /** Reconcile only this namespace (as a controller's --namespace). Default all. */
  namespace?: string;
  log?: (line: string) => void;
}

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const CAPI_VERSION = 'cluster.x-k8s.io/v1beta2';
const TCP_API = '/apis/controlplane.cluster.x-k8s.io/v1alpha3';
const BOOTSTRAP_VERSION = 'bootstrap.cluster.x-k8s.io/v1alpha3';
const MACHINE_FINALIZER = 'machine.cluster.x-k8s.io';
const DEPLOYMENT_LABEL = 'cluster.x-k8s.io/deployment-name';
const SET_LABEL = 'cluster.x-k8s.io/set-name';
const DELETE_MACHINE_ANNOTATION = 'cluster.x-k8s.io/delete-machine';
const MAX_EVENTS = 1000;

type List = { items: KubeObject[] };
type Ref = { apiGroup?: string; apiVersion?: string; kind: string; name: string };

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** CAPI's `{{ .random }}`: five lowercase alphanumerics. */
export function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

const nodeRefOf = (m: KubeObject) => (m.status?.['nodeRef'] as { name?: string } | undefined)?.name;
const deleting = (o: KubeObject) => o.metadata.deletionTimestamp !== undefined;
const pausedByAnnotation = (o: KubeObject) => o.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined;
const isControlPlane = (m: KubeObject) => m.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined;
const plural = (kind: string) => `${kind.toLowerCase()}s`;
const apiBase = (apiVersion: string) =>
  apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
const ownerRef = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  uid: o.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

export class LabCapiReconciler {
  readonly #o: LabCapiOptions;
  readonly #api: KubeRequester;
  readonly #events: CapiLabEvent[] = [];
  /** The last hold reported per MachineDeployment, so a hold is an event once, not every pass. */
  readonly #holds = new Map<string, string>();
  /** The last link block reported per Machine, so it is an event once. */
  readonly #blocks = new Map<string, string>();
  /** resourceVersions the Cluster step last saw, per Cluster: its events are changes to these. */
  readonly #seen = new Map<string, { cluster?: string; tcp?: string }>();
  /** Storage versions of CRD-backed kinds, by `plural.group`. */
  readonly #versions = new Map<string, string>();
  #chain: Promise<void> = Promise.resolve();
  #loop: Promise<void> | undefined;
  #abort: AbortController | undefined;
  #passes = 0;

  constructor(opts: LabCapiOptions) {
    this.#o = opts;
    this.#api = opts.api;
  }

  get ccm(): boolean {
    return this.#o.ccm !== false;
  }

  /** What the lab's Cluster API did, oldest first (the last 1000). */
  get events(): readonly CapiLabEvent[] {
    return this.#events;
  }

  /** Passes completed. */
  get passes(): number {
    return this.#passes;
  }

  get running(): boolean {
    return this.#loop !== undefined;
  }

  start(): void {
    if (this.#loop) return;
    const abort = new AbortController();
    this.#abort = abort;
    const interval = this.#o.intervalMs ?? 200;
    this.#loop = (async () => {
      while (!abort.signal.aborted) {
        await this.pass();
        await sleep(interval, undefined, { signal: abort.signal }).catch(() => undefined);
      }
    })();
  }

  /** Stops the loop; resolves once the pass under way has finished. */
  async stop(): Promise<void> {
    this.#abort?.abort();
    await this.#loop;
    this.#loop = undefined;
    this.#abort = undefined;
  }

  /** One pass over every Cluster; passes never overlap. Never throws: errors become events. */
  pass(): Promise<void> {
    const run = this.#chain.then(() => this.#pass());
    this.#chain = run;
    return run;
  }

  #record(e: CapiLabEvent): void {
    this.#events.push(e);
    if (this.#events.length > MAX_EVENTS) this.#events.shift();
    if (e.kind !== 'node-ref' && e.kind !== 'machine-created')
      this.#o.log?.(`lab capi: ${JSON.stringify(e)}`);
  }

  async #pass(): Promise<void> {
    try {
      const ns = this.#o.namespace;
      const clusters = (
        (await this.#api.request(
          'GET',
          ns ? `${CAPI}/namespaces/${ns}/clusters` : `${CAPI}/clusters`,
        )) as List
      ).items;
      for (const c of clusters) {
        if (c.spec?.['paused'] === true || pausedByAnnotation(c)) continue;
        try {
          await this.#cluster(c);
        } catch (err) {
          this.#record({
            kind: 'error',
            message: `Cluster ${c.metadata.namespace}/${c.metadata.name}: ${(err as Error).message}`,
          });
        }
      }
    } catch (err) {
      this.#record({ kind: 'error', message: `listing Clusters: ${(err as Error).message}` });
    }
    this.#passes++;
  }

  async #cluster(c: KubeObject): Promise<void> {
    const ns = c.metadata.namespace!;
    const name = c.metadata.name;
    const cpRef = c.spec?.['controlPlaneRef'] as Ref | undefined;
    if (cpRef?.kind === 'TalosControlPlane') {
      await this.#controlPlane(ns, name, cpRef.name);
      await this.#clusterStatus(c, cpRef.name);
    }
    const mds = (
      (await this.#api.request('GET', `${CAPI}/namespaces/${ns}/machinedeployments`)) as List
    ).items.filter((md) => md.spec?.['clusterName'] === name);
    for (const md of mds) {
      if (pausedByAnnotation(md) || md.spec?.['paused'] === true) continue;
      await this.#machineDeployment(ns, name, md);
    }
    await this.#machines(ns, name);
  }

  /**
   * The core Cluster controller's control-plane step: ControlPlaneInitialized from the control
   * plane's `status.initialized` (v1beta1 contract; sticky once true). It reconciles on a change to
   * the Cluster, or to an unpaused TalosControlPlane: its watch drops a paused object's events, so
   * a paused one's status is seen only when the Cluster changes (docs/knowledge/capi.md §4.9).
   */
  async #clusterStatus(c: KubeObject, tcpName: string): Promise<void> {
    const ns = c.metadata.namespace!;
    const key = `${ns}/${c.metadata.name}`;
    if (clusterControlPlaneInitialized(c)) return;
    const tcp = await this.#get(`${TCP_API}/namespaces/${ns}/taloscontrolplanes/${tcpName}`);
    const seen = this.#seen.get(key) ?? {};
    const tcpRv = tcp?.metadata.resourceVersion;
    const clusterChanged = seen.cluster !== c.metadata.resourceVersion;
    const tcpEvent = tcp !== undefined && !pausedByAnnotation(tcp) && seen.tcp !== tcpRv;
    if (!clusterChanged && !tcpEvent) return;
    this.#seen.set(key, { cluster: c.metadata.resourceVersion, ...(tcpRv !== undefined && { tcp: tcpRv }) });
    if (tcp?.status?.['initialized'] !== true) return;
    await this.#api.request('PATCH', `${CAPI}/namespaces/${ns}/clusters/${c.metadata.name}/status`, {
      contentType: MERGE_PATCH,
      body: {
        status: {
          initialization: { controlPlaneInitialized: true },
        },
      },
    });
    this.#record({ kind: 'control-plane-initialized', namespace: ns, cluster: c.metadata.name });
  }

  async #clusterMachines(ns: string, cluster: string, extra = ''): Promise<KubeObject[]> {
    return (
      (await this.#api.request('GET', `${CAPI}/namespaces/${ns}/machines`, {
        query: { labelSelector: `${CLUSTER_NAME_LABEL}=${cluster}${extra}` },
      })) as List
    ).items;
  }

  // ---- TalosControlPlane (CACPPT) -------------------------------------------------------------

  async #controlPlane(ns: string, cluster: string, tcpName: string): Promise<void> {
    const path = `${TCP_API}/namespaces/${ns}/taloscontrolplanes/${tcpName}`;
    const tcp = (await this.#api.request('GET', path)) as KubeObject;
    if (pausedByAnnotation(tcp)) return;
    const down = await reconcileScaleDown(this.#api, this.#api, ns, tcpName);
    if (down.kind === 'deleted')
      this.#record({
        kind: 'scale-down',
        namespace: ns,
        machine: down.machine,
        node: down.node,
        pods: down.pods,
      });
    if (this.#o.talos) {
      const b = await reconcileBootstrap(this.#api, this.#o.talos, ns, tcpName);
      if (b.kind === 'bootstrapped')
        this.#record({ kind: 'bootstrapped', namespace: ns, address: b.address });
    }
    if (this.#o.etcd) {
      const etcd = this.#o.etcd();
      try {
        const a = await reconcileEtcdAudit(this.#api, etcd, ns, tcpName);
        if (a.kind === 'audited' && a.removed.length + a.failed.length > 0)
          this.#record({ kind: 'etcd-audit', namespace: ns, removed: a.removed, failed: a.failed });
      } finally {
        etcd.close();
      }
    }
    const live = (await this.#clusterMachines(ns, cluster, `,${CONTROL_PLANE_LABEL}`)).filter(
      (m) => !deleting(m),
    );
    const replicas = Number(tcp.spec?.['replicas'] ?? 0);
    // CACPPT adds control planes one at a time, each once the one before has its Node.
    if (live.length < replicas && live.every((m) => nodeRefOf(m) !== undefined)) {
      const config = (
        tcp.spec?.['controlPlaneConfig'] as { controlplane?: Record<string, unknown> } | undefined
      )?.controlplane;
      const patches = (config?.['strategicPatches'] as string[] | undefined) ?? [];
      const created = await this.#createMachine({
        ns,
        cluster,
        role: 'control-plane',
        baseName: tcpName,
        owner: tcp,
        labels: { [CLUSTER_NAME_LABEL]: cluster, [CONTROL_PLANE_LABEL]: '' },
        version: tcp.spec?.['version'] as string | undefined,
        talosConfig: config ?? { generateType: 'controlplane' },
        template: tcp.spec?.['infrastructureTemplate'] as Ref,
        shape: patchesNodeShape(patches),
      });
      if (created) live.push(created);
    }
    const ready = live.filter((m) => nodeRefOf(m) !== undefined).length;
    // CACPPT writes the kubeconfig Secret when none exists, and reports initialized once it can
    // reach the workload cluster through it.
    const reachable = await this.#ensureKubeconfig(ns, cluster, tcp);
    await this.#api.request('PATCH', `${path}/status`, {
      contentType: MERGE_PATCH,
      body: {
        status: {
          replicas: live.length,
          readyReplicas: ready,
          unavailableReplicas: live.length - ready,
          ready: ready > 0,
          initialized: tcp.status?.['initialized'] === true || reachable,
          selector: `${CLUSTER_NAME_LABEL}=${cluster},${CONTROL_PLANE_LABEL}`,
          // CACPPT reports a version once it has Machines: MachineSet preflights read it (H5).
          ...(live.length > 0 &&
            typeof tcp.spec?.['version'] === 'string' && { version: tcp.spec['version'] }),
        },
      },
    });
  }

  /**
   * CACPPT's reconcileKubeconfig: an existing `<cluster>-kubeconfig` is kept; a missing one is
   * written from `<cluster>-ca` (owned by the TalosControlPlane). True when one is there. The lab's
   * kubeconfig names the endpoint and carries no credential: the lab is its own workload cluster.
   */
  async #ensureKubeconfig(ns: string, cluster: string, tcp: KubeObject): Promise<boolean> {
    if (await this.#get(`/api/v1/namespaces/${ns}/secrets/${kubeconfigSecretName(cluster)}`)) return true;
    if (!(await this.#get(`/api/v1/namespaces/${ns}/secrets/${cluster}-ca`))) return false;
    const c = await this.#get(`${CAPI}/namespaces/${ns}/clusters/${cluster}`);
    const ep = c?.spec?.['controlPlaneEndpoint'] as { host?: string; port?: number } | undefined;
    const server = `https://${ep?.host ?? '127.0.0.1'}:${ep?.port ?? 6443}`;
    const kubeconfig = `apiVersion: v1\nkind: Config\nclusters:\n- name: ${cluster}\n  cluster:\n    server: ${server}\n`;
    await this.#api.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'cluster.x-k8s.io/secret',
        metadata: {
          name: kubeconfigSecretName(cluster),
          namespace: ns,
          labels: { [CLUSTER_NAME_LABEL]: cluster },
          ownerReferences: [ownerRef(tcp)],
        },
        data: { value: Buffer.from(kubeconfig).toString('base64') },
      },
    });
    return true;
  }

  // ---- MachineDeployment and MachineSet (core) ------------------------------------------------

  async #machineDeployment(ns: string, cluster: string, md: KubeObject): Promise<void> {
    const mdName = md.metadata.name;
    const replicas = Number(md.spec?.['replicas'] ?? 0);
    const template = md.spec?.['template'] as {
      metadata?: { labels?: Record<string, string> };
      spec: Record<string, unknown>;
    };
    const sets = (
      (await this.#api.request('GET', `${CAPI}/namespaces/${ns}/machinesets`, {
        query: { labelSelector: `${DEPLOYMENT_LABEL}=${mdName}` },
      })) as List
    ).items.filter((s) => s.metadata.ownerReferences?.some((r) => r.uid === md.metadata.uid));
    let ms = sets[0];
    if (!ms) {
      const msName = `${mdName}-${randomSuffix()}`;
      ms = (await this.#api.request('POST', `${CAPI}/namespaces/${ns}/machinesets`, {
        body: {
          apiVersion: CAPI_VERSION,
          kind: 'MachineSet',
          metadata: {
            name: msName,
            namespace: ns,
            labels: {
              ...(template.metadata?.labels ?? {}),
              [CLUSTER_NAME_LABEL]: cluster,
              [DEPLOYMENT_LABEL]: mdName,
            },
            ...(md.metadata.annotations && { annotations: { ...md.metadata.annotations } }),
            ownerReferences: [ownerRef(md)],
          },
          spec: {
            clusterName: cluster,
            replicas,
            selector: md.spec?.['selector'],
            template: structuredClone(template),
          },
        },
      })) as KubeObject;
    } else if (Number(ms.spec?.['replicas'] ?? 0) !== replicas) {
      ms = (await this.#api.request('PATCH', `${CAPI}/namespaces/${ns}/machinesets/${ms.metadata.name}`, {
        contentType: MERGE_PATCH,
        body: { spec: { replicas } },
      })) as KubeObject;
    }
    const msName = ms.metadata.name;
    const live = (await this.#clusterMachines(ns, cluster, `,${SET_LABEL}=${msName}`)).filter(
      (m) => !deleting(m),
    );
    const key = `${ns}/${mdName}`;
    if (live.length < replicas) {
      const hold = await preflightHold(this.#api, ns, md);
      if (hold) {
        if (this.#holds.get(key) !== hold)
          this.#record({ kind: 'held', namespace: ns, machineDeployment: mdName, why: hold });
        this.#holds.set(key, hold);
      } else {
        this.#holds.delete(key);
        const { shape, talosConfig } = await this.#workerShape(ns, template);
        const infra = template.spec['infrastructureRef'] as Ref;
        for (let i = live.length; i < replicas; i++) {
          const m = await this.#createMachine({
            ns,
            cluster,
            role: 'worker',
            baseName: msName,
            owner: ms,
            labels: {
              ...(template.metadata?.labels ?? {}),
              [CLUSTER_NAME_LABEL]: cluster,
              [DEPLOYMENT_LABEL]: mdName,
              [SET_LABEL]: msName,
            },
            version: template.spec['version'] as string | undefined,
            talosConfig,
            template: infra,
            shape,
          });
          if (m) live.push(m);
        }
      }
    } else if (live.length > replicas) {
      // Machines marked for deletion go first, then the newest (CAPI's Newest order; Random by default).
      const victims = [...live]
        .sort((a, b) => {
          const ma = a.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined ? 0 : 1;
          const mb = b.metadata.annotations?.[DELETE_MACHINE_ANNOTATION] !== undefined ? 0 : 1;
          return (
            ma - mb || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '')
          );
        })
        .slice(0, live.length - replicas);
      for (const v of victims) {
        await this.#api.request('DELETE', `${CAPI}/namespaces/${ns}/machines/${v.metadata.name}`);
        live.splice(live.indexOf(v), 1);
      }
    }
    const ready = live.filter((m) => nodeRefOf(m) !== undefined).length;
    const status = {
      replicas: live.length,
      readyReplicas: ready,
      availableReplicas: ready,
      upToDateReplicas: live.length,
      selector: Object.entries(
        (md.spec?.['selector'] as { matchLabels?: Record<string, string> })?.matchLabels ?? {},
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    };
    await this.#api.request('PATCH', `${CAPI}/namespaces/${ns}/machinesets/${msName}/status`, {
      contentType: MERGE_PATCH,
      body: { status },
    });
    const phase = live.length < replicas ? 'ScalingUp' : live.length > replicas ? 'ScalingDown' : 'Running';
    await this.#api.request('PATCH', `${CAPI}/namespaces/${ns}/machinedeployments/${mdName}/status`, {
      contentType: MERGE_PATCH,
      body: { status: { ...status, phase } },
    });
  }

  /**
   * A worker's Node labels and taints, and its TalosConfig: from the MachineDeployment's
   * TalosConfigTemplate when it can be read, else the template's Machine labels.
   */
  async #workerShape(
    ns: string,
    template: { metadata?: { labels?: Record<string, string> }; spec: Record<string, unknown> },
  ): Promise<{ shape: NodeShape; talosConfig: Record<string, unknown> }> {
    const ref = (template.spec['bootstrap'] as { configRef?: Ref } | undefined)?.configRef;
    if (ref?.kind === 'TalosConfigTemplate') {
      try {
        const tct = (await this.#api.request(
          'GET',
          `/apis/${BOOTSTRAP_VERSION}/namespaces/${ns}/talosconfigtemplates/${ref.name}`,
        )) as KubeObject;
        const spec = (tct.spec?.['template'] as { spec?: Record<string, unknown> } | undefined)?.spec ?? {};
        return {
          shape: patchesNodeShape((spec['strategicPatches'] as string[] | undefined) ?? []),
          talosConfig: structuredClone(spec),
        };
      } catch (err) {
        if (!isKubeApiError(err, 404)) throw err;
      }
    }
    return {
      shape: { labels: { ...(template.metadata?.labels ?? {}) }, taints: [] },
      talosConfig: { generateType: 'worker' },
    };
  }

  // ---- Machine creation (CACPPT / MachineSet + infrastructure provider) -----------------------

  /** The served storage version of a CRD-backed kind (refs in v1beta2 name the group only). */
  async #apiVersion(group: string, kind: string): Promise<string> {
    const key = `${plural(kind)}.${group}`;
    const known = this.#versions.get(key);
    if (known) return known;
    const crd = (await this.#api.request(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${key}`,
    )) as { spec: { versions: { name: string; storage?: boolean }[] } };
    const v = crd.spec.versions.find((x) => x.storage)?.name ?? crd.spec.versions[0]!.name;
    const apiVersion = `${group}/${v}`;
    this.#versions.set(key, apiVersion);
    return apiVersion;
  }

  async #createMachine(m: {
    ns: string;
    cluster: string;
    role: MachineRole;
    baseName: string;
    owner: KubeObject;
    labels: Record<string, string>;
    version: string | undefined;
    talosConfig: Record<string, unknown>;
    template: Ref;
    shape: NodeShape;
  }): Promise<KubeObject | undefined> {
    const { ns, cluster } = m;
    const name = `${m.baseName}-${randomSuffix()}`;
    const tplVersion =
      m.template.apiVersion ?? (await this.#apiVersion(m.template.apiGroup ?? '', m.template.kind));
    const tpl = (await this.#api.request(
      'GET',
      `${apiBase(tplVersion)}/namespaces/${ns}/${plural(m.template.kind)}/${m.template.name}`,
    )) as KubeObject;
    const infraKind = m.template.kind.replace(/Template$/, '');
    const infraGroup = tplVersion.split('/')[0]!;
    const machine = (await this.#api.request('POST', `${CAPI}/namespaces/${ns}/machines`, {
      body: {
        apiVersion: CAPI_VERSION,
        kind: 'Machine',
        metadata: {
          name,
          namespace: ns,
          labels: m.labels,
          finalizers: [MACHINE_FINALIZER],
          ownerReferences: [ownerRef(m.owner)],
        },
        spec: {
          clusterName: cluster,
          ...(m.version && { version: m.version }),
          bootstrap: { configRef: { apiGroup: BOOTSTRAP_VERSION.split('/')[0], kind: 'TalosConfig', name } },
          // The infrastructure machine has the Machine's name: Talos takes it as its hostname (H1).
          infrastructureRef: { apiGroup: infraGroup, kind: infraKind, name },
        },
      },
    })) as KubeObject;
    const meta = {
      name,
      namespace: ns,
      labels: { [CLUSTER_NAME_LABEL]: cluster },
      ownerReferences: [ownerRef(machine)],
    };
    await this.#api.request('POST', `${apiBase(tplVersion)}/namespaces/${ns}/${plural(infraKind)}`, {
      body: {
        apiVersion: tplVersion,
        kind: infraKind,
        metadata: meta,
        spec: structuredClone((tpl.spec?.['template'] as { spec?: unknown } | undefined)?.spec ?? {}),
      },
    });
    await this.#api.request('POST', `/apis/${BOOTSTRAP_VERSION}/namespaces/${ns}/talosconfigs`, {
      // Byte-identical to the TalosControlPlane's (or template's) config: CACPPT rolls on any diff (H7).
      body: {
        apiVersion: BOOTSTRAP_VERSION,
        kind: 'TalosConfig',
        metadata: meta,
        spec: structuredClone(m.talosConfig),
      },
    });
    return this.#boot(ns, machine, m.role, m.shape, { version: tplVersion, kind: infraKind });
  }

  /**
   * The infrastructure provider's part: boot the lab node for a Machine that has none (hostname =
   * the Machine's name), mark its infrastructure machine ready and the Machine Provisioned — for
   * every Machine, whoever created it (ferry makes control-plane Machines itself while the
   * TalosControlPlane is paused; only a paused Cluster stops these controllers).
   */
  async #boot(
    ns: string,
    machine: KubeObject,
    role: MachineRole,
    shape: NodeShape,
    infra: { version: string; kind: string },
  ): Promise<KubeObject | undefined> {
    const name = machine.metadata.name;
    const mpath = `${CAPI}/namespaces/${ns}/machines/${name}`;
    try {
      const booted = await this.#o.machines.provisionMachine({
        name,
        role,
        labels: shape.labels,
        taints: shape.taints,
        ...(shape.allowSchedulingOnControlPlanes !== undefined && {
          allowSchedulingOnControlPlanes: shape.allowSchedulingOnControlPlanes,
        }),
      });
      await this.#api.request(
        'PATCH',
        `${apiBase(infra.version)}/namespaces/${ns}/${plural(infra.kind)}/${name}/status`,
        {
          contentType: MERGE_PATCH,
          body: {
            status: {
              ...infraProvisioned(infra.version),
              addresses: [{ type: 'InternalIP', address: booted.address }],
            },
          },
        },
      );
      const updated = (await this.#api.request('PATCH', `${mpath}/status`, {
        contentType: MERGE_PATCH,
        body: {
          status: {
            phase: 'Provisioned',
            initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
            addresses: [
              { type: 'InternalIP', address: booted.address },
              { type: 'Hostname', address: name },
            ],
          },
        },
      })) as KubeObject;
      this.#record({ kind: 'machine-created', namespace: ns, machine: name, role, address: booted.address });
      return updated;
    } catch (err) {
      const message = (err as Error).message;
      await this.#api.request('PATCH', `${mpath}/status`, {
        contentType: MERGE_PATCH,
        body: { status: { phase: 'Failed' } },
      });
      this.#record({ kind: 'machine-failed', namespace: ns, machine: name, message });
      return undefined;
    }
  }

  /**
   * A Machine someone else created (no phase yet): boot it once its infrastructure machine and
   * TalosConfig exist (the node's labels and taints from the TalosConfig's patches).
   */
  async #bootForeign(ns: string, m: KubeObject): Promise<void> {
    const infra = m.spec?.['infrastructureRef'] as Ref | undefined;
    const config = (m.spec?.['bootstrap'] as { configRef?: Ref } | undefined)?.configRef;
    if (!infra || config?.kind !== 'TalosConfig') return;
    const version = await this.#apiVersion(infra.apiGroup ?? '', infra.kind);
    const infraObj = await this.#get(
      `${apiBase(version)}/namespaces/${ns}/${plural(infra.kind)}/${infra.name}`,
    );
    const tc = await this.#get(`/apis/${BOOTSTRAP_VERSION}/namespaces/${ns}/talosconfigs/${config.name}`);
    if (!infraObj || !tc) return; // not all there yet: the next pass
    const shape = patchesNodeShape((tc.spec?.['strategicPatches'] as string[] | undefined) ?? []);
    await this.#boot(ns, m, isControlPlane(m) ? 'control-plane' : 'worker', shape, {
      version,
      kind: infra.kind,
    });
  }

  // ---- Machines (core Machine controller + the lab's CCM) -------------------------------------

  async #machines(ns: string, cluster: string): Promise<void> {
    const all = await this.#clusterMachines(ns, cluster);
    for (const m of all) {
      if (pausedByAnnotation(m)) continue;
      if (deleting(m)) await this.#deleteMachine(ns, m, all);
      else if (m.status?.['phase'] === undefined) await this.#bootForeign(ns, m);
      else if (nodeRefOf(m) === undefined && m.status?.['phase'] === 'Provisioned')
        await this.#linkNode(ns, m);
    }
  }

  async #get(path: string): Promise<KubeObject | undefined> {
    try {
      return (await this.#api.request('GET', path)) as KubeObject;
    } catch (err) {
      if (isKubeApiError(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * The Node registered under the Machine's name gets the infrastructure's providerID from the
   * lab's CCM; CAPI then finds the Node by that id and sets the nodeRef. Without a CCM nothing sets
   * the Node's providerID, and the Machine stays Provisioned (H11).
   */
  async #linkNode(ns: string, m: KubeObject): Promise<void> {
    const name = m.metadata.name;
    const why = await this.#workloadUnreachable(ns, String(m.spec?.['clusterName'] ?? ''));
    if (why) {
      if (this.#blocks.get(`${ns}/${name}`) !== why)
        this.#record({ kind: 'node-link-blocked', namespace: ns, machine: name, why });
      this.#blocks.set(`${ns}/${name}`, why);
      return;
    }
    this.#blocks.delete(`${ns}/${name}`);
    const node = await this.#get(`/api/v1/nodes/${encodeURIComponent(name)}`);
    if (!node || !this.ccm) return;
    const infra = m.spec?.['infrastructureRef'] as Ref;
    const scheme = infra.kind.replace(/Machine$/, '').toLowerCase();
    // The VM's BIOS UUID in CAPMOX / CAPV; the lab uses the Machine's uid.
    const providerID = `${scheme}://${m.metadata.uid}`;
    if (node.spec?.['providerID'] === undefined)
      await this.#api.request('PATCH', `/api/v1/nodes/${encodeURIComponent(name)}`, {
        contentType: MERGE_PATCH,
        body: { spec: { providerID } },
      });
    const infraVersion = await this.#apiVersion(infra.apiGroup ?? '', infra.kind);
    await this.#api.request(
      'PATCH',
      `${apiBase(infraVersion)}/namespaces/${ns}/${plural(infra.kind)}/${name}`,
      {
        contentType: MERGE_PATCH,
        body: { spec: { providerID } },
      },
    );
    const mpath = `${CAPI}/namespaces/${ns}/machines/${name}`;
    await this.#api.request('PATCH', mpath, { contentType: MERGE_PATCH, body: { spec: { providerID } } });
    await this.#api.request('PATCH', `${mpath}/status`, {
      contentType: MERGE_PATCH,
      body: { status: { nodeRef: { name }, phase: 'Running' } },
    });
    this.#record({ kind: 'node-ref', namespace: ns, machine: name, node: name, providerID });
  }

  /**
   * Why core Cluster API cannot see the Machine's Node, as its log says it: no usable
   * `<cluster>-kubeconfig` Secret (type cluster.x-k8s.io/secret, key value), or the Cluster not
   * ControlPlaneInitialized (no Node watch). Undefined when neither.
   */
  async #workloadUnreachable(ns: string, cluster: string): Promise<string | undefined> {
    const name = kubeconfigSecretName(cluster);
    const secret = await this.#get(`/api/v1/namespaces/${ns}/secrets/${name}`);
    if (!secret) return `Secret "${name}" not found: connection to the workload cluster is down`;
    const unusable = kubeconfigSecretUnusable(secret);
    if (unusable) return `Secret "${name}": ${unusable}: connection to the workload cluster is down`;
    const c = await this.#get(`${CAPI}/namespaces/${ns}/clusters/${cluster}`);
    if (!clusterControlPlaneInitialized(c))
      return `Cluster ${cluster} is not ControlPlaneInitialized: no Node watch (its control plane's status.initialized is not true, or the Cluster has not reconciled since)`;
    return undefined;
  }

  /**
   * CAPI's reconcileDelete (capi.md §4.6): with no active control-plane Machine it skips the drain
   * and the Node deletion (H4); otherwise it cordons and evicts (budgets respected, retried next
   * pass), then powers the machine off and deletes the Node. The infrastructure machine and the
   * TalosConfig go with it; the finalizer last.
   */
  async #deleteMachine(ns: string, m: KubeObject, all: KubeObject[]): Promise<void> {
    const name = m.metadata.name;
    const nodeName = nodeRefOf(m) ?? null;
    const activeCp = all.filter((x) => isControlPlane(x) && !deleting(x)).length;
    let skipped: string | undefined;
    let drained = false;
    let node: KubeObject | undefined;
    if (nodeName === null) skipped = 'the Machine has no nodeRef';
    else if (activeCp === 0)
      skipped = 'no active control-plane Machine: the drain and the Node deletion are skipped';
    else {
      node = await this.#get(`/api/v1/nodes/${encodeURIComponent(nodeName)}`);
      if (!node) skipped = `could not find Node ${nodeName}, skipping the drain`;
      else if (!(await this.#drain(nodeName))) return;
      else drained = true;
    }
    await this.#o.machines.deprovisionMachine(name);
    const infra = m.spec?.['infrastructureRef'] as Ref | undefined;
    if (infra) {
      const v = await this.#apiVersion(infra.apiGroup ?? '', infra.kind);
      await this.#deleteIfThere(`${apiBase(v)}/namespaces/${ns}/${plural(infra.kind)}/${infra.name}`);
    }
    await this.#deleteIfThere(`/apis/${BOOTSTRAP_VERSION}/namespaces/${ns}/talosconfigs/${name}`);
    let nodeDeleted = false;
    if (drained && nodeName) {
      await this.#deleteIfThere(`/api/v1/nodes/${encodeURIComponent(nodeName)}`);
      nodeDeleted = true;
    }
    await this.#api.request('PATCH', `${CAPI}/namespaces/${ns}/machines/${name}`, {
      contentType: MERGE_PATCH,
      body: {
        metadata: {
          finalizers: ((m.metadata['finalizers'] as string[] | undefined) ?? []).filter(
            (f) => f !== MACHINE_FINALIZER,
          ),
        },
      },
    });
    this.#record({
      kind: 'machine-deleted',
      namespace: ns,
      machine: name,
      node: nodeName,
      drained,
      nodeDeleted,
      ...(skipped && { skipped }),
    });
  }

  async #deleteIfThere(path: string): Promise<void> {
    try {
      await this.#api.request('DELETE', path);
    } catch (err) {
      if (!isKubeApiError(err, 404)) throw err;
    }
  }

  /**
   * Cordon and evict every pod but DaemonSet and mirror pods; true once none of those is left on
   * the node. A budget's refusal (429) leaves the pod for the next pass.
   */
  async #drain(node: string): Promise<boolean> {
    await this.#api.request('PATCH', `/api/v1/nodes/${encodeURIComponent(node)}`, {
      contentType: MERGE_PATCH,
      body: { spec: { unschedulable: true } },
    });
    const pods = (
      (await this.#api.request('GET', '/api/v1/pods', {
        query: { fieldSelector: `spec.nodeName=${node}` },
      })) as List
    ).items.filter(
      (p) =>
        !p.metadata.ownerReferences?.some((r) => r.kind === 'DaemonSet') &&
        p.metadata.annotations?.['kubernetes.io/config.mirror'] === undefined,
    );
    for (const p of pods.filter((x) => !deleting(x))) {
      const pns = p.metadata.namespace!;
      try {
        await this.#api.request('POST', `/api/v1/namespaces/${pns}/pods/${p.metadata.name}/eviction`, {
          body: {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name: p.metadata.name, namespace: pns },
          },
        });
      } catch (err) {
        if (!isKubeApiError(err, 429) && !isKubeApiError(err, 404)) throw err;
      }
    }
    return pods.length === 0;
  }
}

/**
 * How an infrastructure machine says it is provisioned, by its API's contract: `status.ready`
 * before the v1beta2 contract (CAPMOX v1alpha1), `status.initialization.provisioned` from it
 * (CAPMOX v1alpha2, CAPV v1beta2; their CRDs in schemas/capi have no `ready` there).
 */
function infraProvisioned(apiVersion: string): Record<string, unknown> {
  return /\/v1alpha1$|\/v1beta1$/.test(apiVersion)
    ? { ready: true }
    : { initialization: { provisioned: true } };
}
