/**
 * LabCluster: a whole lab assembled from a snapshot. Real etcd members for the control planes
 * (kubeadm members on the lab's older etcd, standing in for the version the snapshot names), one
 * LabApiServer per control plane on the node's own loopback address backed by its own member, the
 * load balancer on the endpoint's loopback address, the snapshot's nodes, namespaces, workloads,
 * PDBs, ConfigMaps and services loaded through the API, the nodes controller playing kubelets and
 * controllers, and the provisioner for replacement nodes. Every real address of the snapshot is
 * mapped to a loopback one and recorded; the lab never connects to a real address.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EtcdAdmin } from '../adapters/etcd/admin.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { FerryError, inputError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import { type Issued, loadIssued } from '../pki/forge.js';
import type { Snapshot } from '../snapshot/model.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import {
  EtcdStore,
  EvictionLog,
  issueClientCert,
  issueServingCert,
  LabApiServer,
  writeKubeconfig,
} from './apiserver/index.js';
import type { KObj } from './apiserver/object.js';
import { installLabCapiCrds } from './capi/crds.js';
import {
  type LabCapiOptions,
  LabCapiReconciler,
  type LabMachinePort,
  type MachineRole,
} from './capi/reconciler.js';
import { type EtcdMinor, locateEtcd } from './etcd/binaries.js';
import { readCredentials } from './etcd/client.js';
import { EtcdLabCluster } from './etcd/cluster.js';
import { clientUrl } from './etcd/flags.js';
import { describeLabData, labDataStorageFor } from './etcd/lifecycle.js';
import { type FaultHandle, type FaultTargets, injectFault, type LabFault, LabFaults } from './faults.js';
import { LabLoadBalancer } from './lb/index.js';
import { ServiceFront } from './lb/service-front.js';
import {
  CANARY_NAME,
  CANARY_NAMESPACE,
  type CanarySpec,
  canaryObjects,
  DEFAULT_CANARY,
} from './nodes/canary.js';
import { LabApiError, LabKubeClient } from './nodes/client.js';
import { LabNodesController } from './nodes/controller.js';
import { LabPodRuntime } from './nodes/runtime.js';
import type { Taint } from './nodes/schedule.js';
import { apiPath, isNodeReady, type Timings } from './nodes/world.js';
import { type AddressEntry, AddressMap } from './provisioner/addresses.js';
import type { LabClock } from './provisioner/clock.js';
import { copiedPods, importItems, labNode, labPod, NOT_LOADED } from './provisioner/import.js';
import { type LabNodeRecord, LabProvisioner, type ProvisionerHost } from './provisioner/provisioner.js';

export const API_PORT = 6443;

export type LabClusterOptions = {
  /** Directory for the lab's files: etcd data and PKI, the admin kubeconfig. */
  dir: string;
  /** Third octet of every lab address (127.0.<subnet>.x). */
  subnet: number;
  /** etcd of the snapshot's (kubeadm) members. Default '3.4': the older one the lab has. */
  kubeadmEtcdVersion?: EtcdMinor;
  /** etcd of Talos members the provisioner adds. Default '3.5'. */
  talosEtcdVersion?: EtcdMinor;
  talosVersion?: string;
  /**
   * The provisioner puts a joined Talos control plane into the load balancer itself. Default true;
   * false leaves that to ferry's LB hook (`lb.addBackend`), as with an external load balancer.
   */
  addJoinedToLoadBalancer?: boolean;
  timings?: Partial<Timings>;
  /**
   * How long the provisioner's machines take to boot and to power off (provisioner/clock.ts).
   * Default: at once (LAB_SPEED).
   */
  clock?: LabClock;
  /** Seeds each machine's jitter: the same seed gives a machine name the same times. Default random. */
  clockSeed?: string;
  /** Pause between passes of the nodes controller. Default 150 ms. */
  controllerIntervalMs?: number;
  /**
   * Leave the etcd members' files (data, PKI, logs) under `dir` when the lab is disposed; the
   * processes stop all the same. Their data then lives in `dir`, not on a tmpfs. Default false.
   */
  keepData?: boolean;
  /** Where the snapshot came from, recorded on loaded objects. */
  source?: string;
  /**
   * The lab's own canary workload (nodes/canary.ts) and its Service front. Default: 3 replicas,
   * preStop 3 s, grace 10 s, propagation delay 100 ms. `false`: none (labs that test something else).
   */
  canary?: (Partial<CanarySpec> & { propagationDelayMs?: number }) | false;
  /**
   * The lab's Cluster API (capi/reconciler.ts): serve the Cluster API CRDs and run the reconciler
   * against the lab's own API server, which is then the management cluster too. Undefined: off.
   */
  capi?: LabCapiSettings;
  log?: (line: string) => void;
};

/** How the lab's Cluster API runs; see LabCapiOptions. */
export type LabCapiSettings = Pick<LabCapiOptions, 'ccm' | 'intervalMs' | 'namespace'>;

export type EtcdClientSettings = {
  endpoints: string[];
  caFile: string;
  certFile: string;
  keyFile: string;
};

/** A serializable description of a running lab (what `ferry lab up` prints and `status` reads). */
export type LabInfo = {
  subnet: number;
  kubeconfig: string;
  clusterName: string;
  kubernetesVersion: string;
  endpoint: { url: string; real: string | undefined };
  etcd: EtcdClientSettings & {
    /** The etcd binary standing in for the version the snapshot names, e.g. "3.4.23 for 3.5.16". */
    standIn: { lab: string; snapshot: string | undefined; note: string };
    /** Where the members keep their data, as a sentence (see labDataStorage). */
    storage: string;
  };
  apiServers: { node: string; url: string }[];
  addresses: AddressEntry[];
  nodes: LabNodeRecord[];
  /** What the snapshot had that the lab did not load, and why. */
  notLoaded: string[];
  /** Objects that could not be loaded. */
  warnings: string[];
  /** The lab's canary Service, fronted on a loopback address (absent with `canary: false`). */
  canary?: { service: string; url: string; replicas: number; propagationDelayMs: number };
  /** The lab's Cluster API, when on: the management kubeconfig is the lab's own. */
  capi?: { mgmtKubeconfig: string; ccm: boolean };
  /** How long its machines take to boot and to power off (absent in the state of older labs). */
  clock?: LabClock;
};

type Instance = { server: LabApiServer; store: EtcdStore };

type InfoBase = Omit<LabInfo, 'apiServers' | 'addresses' | 'nodes' | 'etcd' | 'clock'> &
  Pick<LabInfo['etcd'], 'standIn' | 'storage'>;

export class LabCluster implements ProvisionerHost, FaultTargets, LabMachinePort {
  readonly dir: string;
  readonly etcd: EtcdLabCluster;
  readonly lb: LabLoadBalancer;
  readonly faults = new LabFaults();
  readonly addresses: AddressMap;
  readonly client: LabKubeClient;
  readonly controller: LabNodesController;
  /** Runs the canary pods as real HTTP listeners. */
  readonly runtime = new LabPodRuntime();
  /** The canary Service's front, once started. */
  canaryFront: ServiceFront | undefined;
  readonly provisioner: LabProvisioner;
  readonly evictionLog = new EvictionLog();
  readonly kubeconfigPath: string;
  readonly kubernetesVersion: string;
  readonly clusterName: string;
  /** The lab's Cluster API reconciler, once started (`capi` option or startCapi). */
  capi: LabCapiReconciler | undefined;
  readonly #apiServers = new Map<string, Instance>();
  readonly #ca: Issued;
  readonly #etcdCreds: Awaited<ReturnType<typeof readCredentials>>;
  readonly #endpointHost: string | undefined;
  readonly #log: (line: string) => void;
  readonly #info: InfoBase;
  #disposed = false;

  private constructor(parts: {
    dir: string;
    etcd: EtcdLabCluster;
    lb: LabLoadBalancer;
    addresses: AddressMap;
    client: LabKubeClient;
    ca: Issued;
    etcdCreds: Awaited<ReturnType<typeof readCredentials>>;
    kubeconfigPath: string;
    kubernetesVersion: string;
    clusterName: string;
    endpointHost: string | undefined;
    clusterCidr: string | undefined;
    opts: LabClusterOptions;
    info: InfoBase;
  }) {
    this.dir = parts.dir;
    this.etcd = parts.etcd;
    this.lb = parts.lb;
    this.addresses = parts.addresses;
    this.client = parts.client;
    this.#ca = parts.ca;
    this.#etcdCreds = parts.etcdCreds;
    this.kubeconfigPath = parts.kubeconfigPath;
    this.kubernetesVersion = parts.kubernetesVersion;
    this.clusterName = parts.clusterName;
    this.#endpointHost = parts.endpointHost;
    this.#log = parts.opts.log ?? (() => {});
    this.#info = parts.info;
    this.controller = new LabNodesController({
      client: parts.client,
      intervalMs: parts.opts.controllerIntervalMs ?? 150,
      ...(parts.opts.timings && { timings: parts.opts.timings }),
      behaviour: (n) => this.faults.behaviour(n),
      ...(parts.clusterCidr && { clusterCidr: parts.clusterCidr }),
      log: this.#log,
      runtime: this.runtime,
    });
    this.provisioner = new LabProvisioner(this, {
      etcdVersion: parts.opts.talosEtcdVersion ?? '3.5',
      ...(parts.opts.talosVersion && { talosVersion: parts.opts.talosVersion }),
      ...(parts.opts.addJoinedToLoadBalancer !== undefined && {
        addToLoadBalancer: parts.opts.addJoinedToLoadBalancer,
      }),
      ...(parts.opts.clock && { clock: parts.opts.clock }),
      ...(parts.opts.clockSeed !== undefined && { seed: parts.opts.clockSeed }),
    });
  }

  /** Assembles a lab from a snapshot and starts its nodes controller. Cleans up after itself on failure. */
  static async fromSnapshot(snapshot: Snapshot, opts: LabClusterOptions): Promise<LabCluster> {
    const log = opts.log ?? (() => {});
    const facts = deriveFacts(snapshot);
    const cps = facts.nodes.controlPlane.value ?? [];
    if (cps.length === 0) {
      throw inputError(
        'the snapshot names no control-plane node',
        { object: 'Node', field: 'metadata.labels[node-role.kubernetes.io/control-plane]' },
        'give a snapshot with the cluster Nodes (resources/nodes.json) or the etcd member list (etcd/member-list.json)',
      );
    }
    const workers = facts.nodes.workers.value ?? [];
    const kubeadmMinor = opts.kubeadmEtcdVersion ?? '3.4';
    const bins = await locateEtcd(kubeadmMinor);
    const snapshotEtcd = facts.etcd.version.value;
    const standIn = {
      lab: bins.version,
      snapshot: snapshotEtcd,
      note: `the lab runs the snapshot's etcd members on etcd ${bins.version}${snapshotEtcd ? ` standing in for ${snapshotEtcd}` : ''}: the closest it has that lets Talos members (etcd ${opts.talosEtcdVersion ?? '3.5'}) join as a newer version`,
    };
    log(standIn.note);
    const data = labDataStorageFor({ keep: opts.keepData === true });
    const storage = describeLabData(data);
    log(storage);
    await mkdir(opts.dir, { recursive: true, mode: 0o700 });
    const etcd = await EtcdLabCluster.start({
      subnet: opts.subnet,
      members: cps.map((c) => ({ name: c.name, version: kubeadmMinor })),
      root: join(opts.dir, 'etcd'),
      dataRoot: data.root ?? null,
      keepDir: opts.keepData === true,
    });
    log(
      `etcd: ${etcd
        .members()
        .map((m) => `${m.name} ${m.ip}`)
        .join(', ')}`,
    );
    const parts: Partial<{ lb: LabLoadBalancer; client: LabKubeClient }> = {};
    let lab: LabCluster | undefined;
    try {
      const addresses = new AddressMap(opts.subnet);
      for (const cp of cps) {
        addresses.record({
          name: cp.name,
          role: 'control-plane',
          real: cp.internalIP ?? undefined,
          lab: etcd.member(cp.name).ip,
        });
      }
      const ep = facts.cluster.controlPlaneEndpoint.value;
      addresses.record({
        name: 'endpoint',
        role: 'endpoint',
        real: ep ? `${ep.host}:${ep.port}` : undefined,
        lab: addresses.endpoint,
      });
      const [caPem, caKeyPem] = await Promise.all([
        readFile(join(etcd.pkiDir, 'ca.crt'), 'utf8'),
        readFile(join(etcd.pkiDir, 'ca.key'), 'utf8'),
      ]);
      const ca = await loadIssued(caPem, caKeyPem);
      const admin = await issueClientCert(ca, 'kubernetes-admin', ['system:masters']);
      const lb = await LabLoadBalancer.start({ host: addresses.endpoint, port: API_PORT, health: { caPem } });
      parts.lb = lb;
      const kubeconfigPath = join(opts.dir, 'kubeconfig');
      const clusterName = facts.cluster.name.value ?? 'lab';
      await writeKubeconfig(kubeconfigPath, {
        server: lb.url,
        caPem,
        certPem: admin.certPem,
        keyPem: admin.keyPem,
        clusterName: `${clusterName}-lab`,
        userName: 'kubernetes-admin',
      });
      const client = new LabKubeClient(
        { server: lb.url, ca: caPem, cert: admin.certPem, key: admin.keyPem },
        { timeoutMs: 10_000 },
      );
      parts.client = client;
      const podSubnet = (facts.network.podSubnets.value ?? []).find((c) =>
        /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(c),
      );
      lab = new LabCluster({
        dir: opts.dir,
        etcd,
        lb,
        addresses,
        client,
        ca,
        etcdCreds: await readCredentials(etcd.clientTls()),
        kubeconfigPath,
        kubernetesVersion: facts.cluster.kubernetesVersion.value ?? 'v1.32.4',
        clusterName,
        endpointHost: ep?.host,
        clusterCidr: podSubnet,
        opts,
        info: {
          subnet: opts.subnet,
          kubeconfig: kubeconfigPath,
          clusterName,
          kubernetesVersion: facts.cluster.kubernetesVersion.value ?? 'v1.32.4',
          endpoint: { url: lb.url, real: ep?.url },
          notLoaded: [],
          warnings: [],
          standIn,
          storage,
        },
      });
      await lab.#writeEtcdClientFiles();
      for (const cp of cps) {
        const ip = etcd.member(cp.name).ip;
        await lab.startApiServer(cp.name, ip);
        lab.setLoadBalancerBackend(cp.name, ip, true);
      }
      await lb.waitFor((b) => b.some((x) => x.state === 'up'), 15_000);
      await lab.#load(
        snapshot,
        cps.map((c) => c.name),
        workers.map((w) => ({ name: w.name, real: w.internalIP ?? undefined })),
        opts.source ?? snapshot.manifest.source.kind,
      );
      if (opts.canary !== false) await lab.#startCanary({ ...DEFAULT_CANARY, ...opts.canary });
      lab.controller.start();
      if (opts.capi) await lab.startCapi(opts.capi);
      return lab;
    } catch (err) {
      if (lab) await lab.dispose();
      else {
        parts.client?.close();
        await parts.lb?.stop();
        await etcd.dispose();
      }
      throw err;
    }
  }

  async #create(
    path: string,
    body: KObj,
    what: string,
    opts: { ignoreExisting?: boolean } = {},
  ): Promise<KObj | undefined> {
    try {
      return await this.client.create<KObj>(path, body);
    } catch (err) {
      if (opts.ignoreExisting && err instanceof LabApiError && err.status === 409) return undefined;
      this.#info.warnings.push(`${what}: ${(err as Error).message}`);
      return undefined;
    }
  }

  async #load(
    snapshot: Snapshot,
    cps: string[],
    workers: { name: string; real: string | undefined }[],
    source: string,
  ): Promise<void> {
    const nodeUids = new Map<string, string>();
    const byName = new Map(snapshot.resources.nodes.map((n) => [n.metadata.name, n]));
    for (const name of cps) {
      const ip = this.addresses.byName(name)!.lab;
      const n = byName.get(name);
      const body: KObj = n
        ? labNode(n, ip, source)
        : {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: {
              name,
              labels: { 'kubernetes.io/hostname': name, 'node-role.kubernetes.io/control-plane': '' },
            },
            spec: {},
            status: { addresses: [{ type: 'InternalIP', address: ip }] },
          };
      const created = await this.#create(apiPath('v1', 'nodes', undefined), body, `Node ${name}`);
      if (created?.metadata.uid) nodeUids.set(name, created.metadata.uid);
      this.provisioner.adopt({
        name,
        role: 'control-plane',
        flavor: 'kubeadm',
        realAddress: this.addresses.byName(name)!.real,
        labAddress: ip,
        etcdMember: name,
        state: 'joined',
      });
    }
    for (const w of workers) {
      const n = byName.get(w.name);
      if (!n) continue;
      const entry = this.addresses.allocateWorker(w.name, w.real);
      const created = await this.#create(
        apiPath('v1', 'nodes', undefined),
        labNode(n, entry.lab, source),
        `Node ${w.name}`,
      );
      if (created?.metadata.uid) nodeUids.set(w.name, created.metadata.uid);
      this.provisioner.adopt({
        name: w.name,
        role: 'worker',
        flavor: 'kubeadm',
        realAddress: w.real,
        labAddress: entry.lab,
        etcdMember: undefined,
        state: 'joined',
      });
    }
    // Nodes that were not Ready in the snapshot stay so in the lab.
    for (const n of snapshot.resources.nodes) {
      const ready = (n.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready')?.status;
      const name = n.metadata.name;
      if (!nodeUids.has(name) || ready === undefined || ready === 'True') continue;
      if (ready === 'Unknown') this.faults.stopKubelet(name);
      else this.faults.add({ kind: 'node-never-ready', node: name });
      this.#info.warnings.push(
        `node ${name} was ${ready === 'Unknown' ? 'unreachable (Ready=Unknown)' : 'NotReady'} in the snapshot: the lab keeps it so (${ready === 'Unknown' ? 'kubelet stopped' : 'fault node-never-ready'})`,
      );
    }
    for (const item of importItems(snapshot, source)) {
      await this.#create(item.path, item.body, item.what, {
        ignoreExisting: item.path.endsWith('/namespaces'),
      });
    }
    for (const p of copiedPods(snapshot)) {
      const body = labPod(p, nodeUids, source);
      if (body)
        await this.#create(
          apiPath('v1', 'pods', p.metadata.namespace),
          body,
          `Pod ${p.metadata.namespace}/${p.metadata.name}`,
        );
    }
    const r = snapshot.resources;
    this.#info.notLoaded = Object.entries(NOT_LOADED)
      .map(([key, why]) => {
        const n = (r[key as keyof typeof r] as unknown[] | undefined)?.length ?? 0;
        return n > 0 ? `${n} ${key}: ${why}` : undefined;
      })
      .filter((x): x is string => x !== undefined);
    const recreated = r.pods.length - copiedPods(snapshot).length;
    if (recreated > 0)
      this.#info.notLoaded.unshift(`${recreated} pods of controllers: recreated by the lab nodes controller`);
  }

  /** The canary's objects through the API, and its Service front on the endpoint's address. */
  async #startCanary(c: CanarySpec & { propagationDelayMs?: number }): Promise<void> {
    for (const o of canaryObjects(c)) {
      await this.#create(o.path, o.body, `lab canary ${o.body.kind}`, {
        ignoreExisting: o.body.kind === 'Namespace',
      });
    }
    const propagationDelayMs = c.propagationDelayMs ?? 100;
    this.canaryFront = await ServiceFront.start({
      client: this.client,
      namespace: CANARY_NAMESPACE,
      service: CANARY_NAME,
      host: this.addresses.endpoint,
      resolve: (uid) => this.runtime.addressOf(uid),
      propagationDelayMs,
    });
    this.#info.canary = {
      service: `${CANARY_NAMESPACE}/${CANARY_NAME}`,
      url: this.canaryFront.url,
      replicas: c.replicas,
      propagationDelayMs,
    };
    this.#log(
      `canary: Deployment ${CANARY_NAMESPACE}/${CANARY_NAME} (${c.replicas} HTTP listeners, PDB maxUnavailable 1) behind ${this.canaryFront.url}`,
    );
  }

  /**
   * The etcd client settings as files next to the kubeconfig: JSON, and an env file for etcdctl
   * (`set -a; . DIR/etcdctl.env`). They name the member endpoints at start; members added later
   * by the provisioner are in `info()`.
   */
  async #writeEtcdClientFiles(): Promise<void> {
    const e = this.etcdClientSettings();
    await writeFileAtomic(join(this.dir, 'etcd-client.json'), `${JSON.stringify(e, null, 2)}\n`, {
      mode: 0o600,
    });
    const env = [
      'ETCDCTL_API=3',
      `ETCDCTL_ENDPOINTS=${e.endpoints.join(',')}`,
      `ETCDCTL_CACERT=${e.caFile}`,
      `ETCDCTL_CERT=${e.certFile}`,
      `ETCDCTL_KEY=${e.keyFile}`,
    ];
    await writeFileAtomic(join(this.dir, 'etcdctl.env'), `${env.join('\n')}\n`, { mode: 0o600 });
  }

  // ---- Cluster API -----------------------------------------------------------------------------

  /**
   * A reconciler of the lab's Cluster API against this lab's API server, not started: its Machines
   * become lab nodes, its H1 audit talks to the lab's etcd, its H2 bootstrap looks for a running
   * member. For tests that drive passes themselves; `startCapi` for the running loop.
   */
  async capiReconciler(settings: LabCapiSettings = {}): Promise<LabCapiReconciler> {
    const api = createRequester(loadKubeconfig(this.kubeconfigPath));
    await installLabCapiCrds(api);
    return new LabCapiReconciler({
      ...settings,
      api,
      machines: this,
      etcd: () => new EtcdAdmin({ endpoints: this.etcd.endpoints(), tls: this.etcd.clientTls() }),
      talos: {
        // A Talos control plane has etcd data once its member runs (it joined, or bootstrapped).
        hasEtcdData: async (address) =>
          this.etcd.members().some((m) => m.ip === address && m.state === 'running'),
        bootstrap: async (address) => {
          this.#log(
            `lab capi: Talos Bootstrap on ${address}: a second etcd cluster (the TalosControlPlane was not bootstrapped)`,
          );
        },
      },
      log: this.#log,
    });
  }

  /** Serves the Cluster API CRDs and starts the reconciler; `dispose` stops it. */
  async startCapi(settings: LabCapiSettings = {}): Promise<LabCapiReconciler> {
    if (this.capi) throw new FerryError('usage', "the lab's Cluster API already runs");
    const r = await this.capiReconciler(settings);
    r.start();
    this.capi = r;
    this.#info.capi = { mgmtKubeconfig: this.kubeconfigPath, ccm: r.ccm };
    this.#log(
      `capi: the lab's Cluster API runs (a lab, not Cluster API); management kubeconfig ${this.kubeconfigPath}${r.ccm ? '' : ', no cloud controller manager'}`,
    );
    return r;
  }

  async provisionMachine(spec: {
    name: string;
    role: MachineRole;
    labels: Record<string, string>;
    taints: Taint[];
    allowSchedulingOnControlPlanes?: boolean;
  }): Promise<{ name: string; address: string }> {
    // The machine's host name is all there is of a "real" address: the VM is the lab's.
    const p = {
      name: spec.name,
      address: spec.name,
      labels: spec.labels,
      taints: spec.taints,
      ...(spec.allowSchedulingOnControlPlanes !== undefined && {
        allowSchedulingOnControlPlanes: spec.allowSchedulingOnControlPlanes,
      }),
    };
    const r =
      spec.role === 'control-plane'
        ? await this.provisioner.provisionControlPlane(p, { wait: false })
        : await this.provisioner.provisionWorker(p);
    return { name: r.name, address: r.labAddress };
  }

  async deprovisionMachine(name: string): Promise<void> {
    if (this.provisioner.node(name)) await this.provisioner.decommission(name);
  }

  // ---- ProvisionerHost ---------------------------------------------------------------------------

  log(line: string): void {
    this.#log(line);
  }

  async startApiServer(node: string, ip: string): Promise<void> {
    if (this.#apiServers.has(node))
      throw new FerryError('internal', `the API server instance of ${node} already runs`);
    const serving = await issueServingCert(this.#ca, {
      ipAddresses: [ip, this.addresses.endpoint],
      dnsNames: [node, ...(this.#endpointHost ? [this.#endpointHost] : [])],
    });
    // A stacked kube-apiserver: --etcd-servers is its local member only.
    const store = new EtcdStore({ endpoint: clientUrl(ip), credentials: this.#etcdCreds });
    try {
      const server = await LabApiServer.start({
        name: node,
        host: ip,
        port: API_PORT,
        store,
        tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: this.#ca.certPem },
        kubernetesVersion: this.kubernetesVersion,
        evictionLog: this.evictionLog,
      });
      server.setEvictionFault((pod) => this.faults.evictionRefusal(pod));
      this.#apiServers.set(node, { server, store });
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  async stopApiServer(node: string): Promise<void> {
    const inst = this.#apiServers.get(node);
    if (!inst) return;
    this.#apiServers.delete(node);
    await inst.server.stop();
    await inst.store.close();
  }

  setLoadBalancerBackend(_node: string, ip: string, inRotation: boolean): void {
    const address = `${ip}:${API_PORT}`;
    if (inRotation) this.lb.addBackend(address);
    else this.lb.removeBackend(address);
  }

  // ---- FaultTargets ------------------------------------------------------------------------------

  apiServer(node: string): LabApiServer | undefined {
    return this.#apiServers.get(node)?.server;
  }

  setApiDown(node: string, down: boolean): void {
    const s = this.apiServer(node);
    if (!s) throw new FerryError('usage', `no API server instance runs on ${node}`);
    s.setDown(down);
  }

  async crashNode(node: string): Promise<void> {
    const member = this.etcd.members().find((m) => m.name === this.provisioner.node(node)?.etcdMember);
    if (member) await this.etcd.crash(member.name);
    this.apiServer(node)?.setDown(true, 'refuse');
  }

  async recoverNode(node: string): Promise<void> {
    const member = this.etcd.members().find((m) => m.name === this.provisioner.node(node)?.etcdMember);
    if (member && (member.state === 'crashed' || member.state === 'stopped'))
      await this.etcd.restart(member.name);
    this.apiServer(node)?.setDown(false);
  }

  inject(fault: LabFault): Promise<FaultHandle> {
    return injectFault(this, fault);
  }

  /** Stops (SIGTERM) the etcd member of a control plane: its API instance then fails /readyz. */
  async stopEtcdMember(node: string): Promise<void> {
    const member = this.provisioner.node(node)?.etcdMember;
    if (!member) throw new FerryError('usage', `${node} is not a lab control plane`);
    await this.etcd.stop(member);
  }

  // ---- observation -------------------------------------------------------------------------------

  etcdClientSettings(): EtcdClientSettings {
    return { endpoints: this.etcd.endpoints(), ...this.etcd.clientTls() };
  }

  info(): LabInfo {
    const { standIn, storage, ...rest } = this.#info;
    return {
      ...rest,
      etcd: { ...this.etcdClientSettings(), standIn, storage },
      apiServers: [...this.#apiServers.entries()].map(([node, i]) => ({ node, url: i.server.url })),
      addresses: this.addresses.entries(),
      nodes: this.provisioner.nodes(),
      clock: this.provisioner.clock,
    };
  }

  /**
   * Waits until every node is Ready and every Deployment, StatefulSet and DaemonSet has all its
   * pods ready; returns what is still not settled when `timeoutMs` runs out.
   */
  async waitSettled(timeoutMs = 45_000): Promise<{ settled: boolean; pending: string[] }> {
    const deadline = Date.now() + timeoutMs;
    let pending: string[] = ['nothing observed yet'];
    while (Date.now() < deadline) {
      try {
        pending = await this.#unsettled();
        if (pending.length === 0) return { settled: true, pending };
      } catch (err) {
        pending = [`API: ${(err as Error).message}`];
      }
      await sleep(250);
    }
    return { settled: false, pending };
  }

  async #unsettled(): Promise<string[]> {
    const c = this.client;
    const [nodes, deployments, statefulsets, daemonsets] = await Promise.all([
      c.list<KObj>('/api/v1/nodes'),
      c.list<KObj>('/apis/apps/v1/deployments'),
      c.list<KObj>('/apis/apps/v1/statefulsets'),
      c.list<KObj>('/apis/apps/v1/daemonsets'),
    ]);
    const out: string[] = [];
    const live = new Set(
      this.provisioner
        .nodes()
        .filter((n) => n.state !== 'decommissioned')
        .map((n) => n.name),
    );
    for (const n of nodes)
      if (live.has(n.metadata.name!) && !isNodeReady(n)) out.push(`node ${n.metadata.name} not Ready`);
    const id = (o: KObj) => `${o.metadata.namespace}/${o.metadata.name}`;
    const replicated = [
      ...deployments.map((d) => ['Deployment', d] as const),
      ...statefulsets.map((s) => ['StatefulSet', s] as const),
    ];
    for (const [kind, d] of replicated) {
      const want = d.spec?.replicas ?? 1;
      const ready = d.status?.readyReplicas ?? 0;
      if (ready < want) out.push(`${kind} ${id(d)}: ${ready}/${want} ready`);
    }
    for (const ds of daemonsets) {
      const want = ds.status?.desiredNumberScheduled;
      const ready = ds.status?.numberReady ?? 0;
      if (want === undefined || ready < want) out.push(`DaemonSet ${id(ds)}: ${ready}/${want ?? '?'} ready`);
    }
    return out;
  }

  /** Stops everything the lab started: controller, servers, load balancer, etcd members. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.capi?.stop().catch(() => undefined);
    await this.controller.stop().catch(() => undefined);
    await this.canaryFront?.stop().catch(() => undefined);
    this.runtime.close();
    this.client.close();
    await this.lb.stop().catch(() => undefined);
    for (const node of [...this.#apiServers.keys()]) await this.stopApiServer(node).catch(() => undefined);
    await this.etcd.dispose();
  }
}
