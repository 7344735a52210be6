/**
 * The lab provisioner: how a replacement node "boots" in the lab.
 *
 * A Talos control plane joins the way Talos does (knowledge/talos.md §4.8): its etcd member is
 * added as a learner from its own side, started with `--initial-cluster-state existing`, and
 * promotes itself once caught up, retrying; its kubelet registers the Node (through the cluster
 * endpoint, as KubePrism would) while etcd joins; its API server instance starts on its own
 * address, backed by its own member, once that member is a voter. A Talos worker registers a Node.
 * Both first boot for the lab clock's time (clock.ts), in the background: `provision` returns a
 * booting machine, as a real provisioner does. `decommission` powers a node off, taking the
 * clock's time: processes stopped, kubelet silent; the Node object and the etcd member stay, as
 * they would, for ferry to remove.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../errors.js';
import type { KObj } from '../apiserver/object.js';
import type { EtcdMinor } from '../etcd/binaries.js';
import type { EtcdLabCluster } from '../etcd/cluster.js';
import type { LabFaults } from '../faults.js';
import { LabApiError, type LabKubeClient } from '../nodes/client.js';
import type { Taint } from '../nodes/schedule.js';
import { apiPath } from '../nodes/world.js';
import type { AddressMap } from './addresses.js';
import { LAB_SPEED, type LabClock, machineSeconds } from './clock.js';
import { DEFAULT_TALOS_VERSION, talosMirrorPods, talosNode } from './talos.js';

export type NodeRole = 'control-plane' | 'worker';

export type LabNodeState =
  /** Installing and booting (the lab clock's boot time, or a slow-boot fault's): nothing of it in etcd or the API yet. */
  | 'booting'
  /** Booting: etcd joining (control plane) or Node being registered. */
  | 'joining'
  /** Its etcd member is a voter and its API server instance serves (control plane), or its Node is registered (worker). */
  | 'joined'
  /** A fault holds the join (member never catches up). */
  | 'stalled'
  | 'failed'
  | 'decommissioned';

export type LabNodeRecord = {
  name: string;
  role: NodeRole;
  flavor: 'kubeadm' | 'talos';
  /** The address the node stands in for (what the operator gave). */
  realAddress: string | undefined;
  labAddress: string;
  /** The lab etcd member of a control plane. */
  etcdMember: string | undefined;
  state: LabNodeState;
  detail?: string;
};

export type ProvisionSpec = {
  name: string;
  /** The node's real address; the lab gives it a loopback one and records the mapping. */
  address: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  /** The machine's size (default 4 CPUs, 8 GiB, 110 pods); a replacement's is its predecessor's. */
  capacity?: { cpu: string; memory: string; pods: string };
  talosVersion?: string;
  allowSchedulingOnControlPlanes?: boolean;
};

/** What the provisioner needs from the assembled lab. */
export interface ProvisionerHost {
  readonly etcd: EtcdLabCluster;
  readonly faults: LabFaults;
  readonly client: LabKubeClient;
  readonly addresses: AddressMap;
  readonly kubernetesVersion: string;
  /** Starts the node's API server instance on `ip`, backed by its local etcd member only. */
  startApiServer(node: string, ip: string): Promise<void>;
  stopApiServer(node: string): Promise<void>;
  /** Puts the node's API server instance in or out of the load balancer's rotation. */
  setLoadBalancerBackend(node: string, ip: string, inRotation: boolean): void;
  log(line: string): void;
}

export type ProvisionerOptions = {
  /** etcd version of Talos members. Default '3.5' (the newer one the lab has). */
  etcdVersion?: EtcdMinor;
  talosVersion?: string;
  /** Add a joined control plane to the load balancer (what ferry's LB hook would do). Default true. */
  addToLoadBalancer?: boolean;
  /** How long Talos keeps trying to promote its member before the join is reported failed. Default 10 min. */
  promoteTimeoutMs?: number;
  /** How long machines take to boot and to power off. Default LAB_SPEED (at once). */
  clock?: LabClock;
  /** Seeds each machine's jitter (clock.ts): one seed gives a machine name the same times. Default random. */
  seed?: string;
};

export class LabProvisioner {
  readonly #host: ProvisionerHost;
  readonly #opts: Required<ProvisionerOptions>;
  readonly #nodes = new Map<string, LabNodeRecord>();
  readonly #joins = new Map<string, Promise<void>>();
  readonly #powerOffs = new Map<string, Promise<void>>();

  constructor(host: ProvisionerHost, opts: ProvisionerOptions = {}) {
    this.#host = host;
    this.#opts = {
      etcdVersion: opts.etcdVersion ?? '3.5',
      talosVersion: opts.talosVersion ?? DEFAULT_TALOS_VERSION,
      addToLoadBalancer: opts.addToLoadBalancer ?? true,
      promoteTimeoutMs: opts.promoteTimeoutMs ?? 10 * 60_000,
      clock: opts.clock ?? LAB_SPEED,
      seed: opts.seed ?? randomUUID(),
    };
  }

  /** The lab's clock, as its machines run on it. */
  get clock(): LabClock {
    return { ...this.#opts.clock };
  }

  /**
   * How long the machine `name` takes to boot now: a slow-boot fault's seconds replace the clock's
   * time for that node (an override, not an addition), so a fault means the same on any clock.
   */
  #bootTime(name: string): { seconds: number; why: string } {
    const fault = this.#host.faults.bootSeconds(name);
    if (fault !== undefined) return { seconds: fault, why: 'slow-boot fault' };
    return { seconds: machineSeconds(this.#opts.clock, this.#opts.seed, 'boot', name), why: 'lab clock' };
  }

  /** Records a node the lab started itself (the snapshot's kubeadm nodes). */
  adopt(record: LabNodeRecord): void {
    this.#nodes.set(record.name, { ...record });
  }

  nodes(): LabNodeRecord[] {
    return [...this.#nodes.values()].map((r) => ({ ...r }));
  }

  node(name: string): LabNodeRecord | undefined {
    const r = this.#nodes.get(name);
    return r && { ...r };
  }

  #claim(spec: ProvisionSpec, role: NodeRole): void {
    const known = this.#nodes.get(spec.name);
    if (known && known.state !== 'decommissioned') {
      throw new FerryError(
        'usage',
        `lab node ${spec.name} already exists (${known.flavor} ${known.role}, ${known.state})`,
        {
          remediation: 'give the new node another name, or decommission the old one first',
        },
      );
    }
    if (role === 'control-plane' && this.#host.etcd.members().some((m) => m.name === spec.name)) {
      // Talos removes a member named like its hostname before joining (talos.md §4.8): that would
      // take a live member out. The lab's etcd cannot reuse a member name at all.
      throw new FerryError('usage', `an etcd member named ${spec.name} already exists in the lab`, {
        remediation: 'Talos hostnames must never equal a live etcd member name; choose another name',
      });
    }
  }

  async #registerNode(body: KObj): Promise<KObj> {
    const client = this.#host.client;
    try {
      return await client.create<KObj>(apiPath('v1', 'nodes', undefined), body);
    } catch (err) {
      if (!(err instanceof LabApiError && err.status === 409)) throw err;
      // A node of that name exists (reinstalled machine): the kubelet takes it over.
      return client.patch<KObj>(apiPath('v1', 'nodes', undefined, body.metadata.name), {
        metadata: { labels: body.metadata.labels, annotations: body.metadata.annotations },
        spec: body.spec,
      });
    }
  }

  /**
   * Boots a Talos control plane: its member is added as a learner at once and the rest of the join
   * runs in the background (see `waitJoined`). With `wait` (default) this resolves once joined.
   */
  async provisionControlPlane(
    spec: ProvisionSpec,
    opts: { wait?: boolean; timeoutMs?: number } = {},
  ): Promise<LabNodeRecord> {
    this.#claim(spec, 'control-plane');
    const etcd = this.#host.etcd;
    const boot = this.#bootTime(spec.name);
    const bootSeconds = boot.seconds;
    // Talos: MemberAddAsLearner from its own side, with the etcd admin certificate, once booted.
    const member =
      bootSeconds > 0
        ? await etcd.reserveMember({ name: spec.name, version: this.#opts.etcdVersion, learner: true })
        : await etcd.addMember({ name: spec.name, version: this.#opts.etcdVersion, learner: true });
    const record: LabNodeRecord = {
      name: spec.name,
      role: 'control-plane',
      flavor: 'talos',
      realAddress: spec.address,
      labAddress: member.ip,
      etcdMember: member.name,
      state: bootSeconds > 0 ? 'booting' : 'joining',
    };
    this.#nodes.set(spec.name, record);
    this.#host.addresses.record({
      name: spec.name,
      role: 'control-plane',
      real: spec.address,
      lab: member.ip,
    });
    if (bootSeconds === 0) this.#host.log(this.#addedLine(spec, member.ip));
    else
      this.#host.log(
        `talos control plane ${spec.name} (${spec.address} → ${member.ip}): booting for ${bootSeconds.toFixed(1)} s (${boot.why})`,
      );
    const join = (async () => {
      if (bootSeconds > 0) await this.#bootControlPlane(record, spec, bootSeconds);
      if (record.state !== 'decommissioned') await this.#joinControlPlane(record, spec);
    })().catch((err: unknown) => {
      if (record.state !== 'decommissioned') {
        record.state = 'failed';
        record.detail = (err as Error).message;
        this.#host.log(`talos control plane ${spec.name}: join failed: ${record.detail}`);
      }
    });
    this.#joins.set(spec.name, join);
    if (opts.wait !== false) await this.waitJoined(spec.name, opts.timeoutMs);
    return { ...record };
  }

  #addedLine(spec: ProvisionSpec, ip: string): string {
    return `talos control plane ${spec.name} (${spec.address} → ${ip}): etcd member added as learner`;
  }

  /** Waits out a machine's boot; false when it was decommissioned meanwhile. */
  async #booted(record: LabNodeRecord, seconds: number): Promise<boolean> {
    const until = Date.now() + seconds * 1000;
    while (record.state !== 'decommissioned' && Date.now() < until)
      await sleep(Math.min(200, until - Date.now()));
    return record.state !== 'decommissioned';
  }

  /** A control plane's boot: wait, then add the reserved member (or drop it, if decommissioned meanwhile). */
  async #bootControlPlane(record: LabNodeRecord, spec: ProvisionSpec, seconds: number): Promise<void> {
    const etcd = this.#host.etcd;
    if (!(await this.#booted(record, seconds))) {
      etcd.forgetReserved(spec.name);
      return;
    }
    await etcd.addReserved(spec.name);
    record.state = 'joining';
    this.#host.log(this.#addedLine(spec, record.labAddress));
  }

  async #joinControlPlane(record: LabNodeRecord, spec: ProvisionSpec): Promise<void> {
    const host = this.#host;
    const name = record.name;
    const live = () => record.state !== 'decommissioned';
    // The kubelet registers through the cluster endpoint while etcd is still joining.
    const node = await this.#registerNode(
      talosNode({
        name,
        role: 'control-plane',
        labAddress: record.labAddress,
        realAddress: spec.address,
        talosVersion: spec.talosVersion ?? this.#opts.talosVersion,
        kubeletVersion: host.kubernetesVersion,
        ...(spec.labels && { labels: spec.labels }),
        ...(spec.taints && { taints: spec.taints }),
        ...(spec.capacity && { capacity: spec.capacity }),
        ...(spec.allowSchedulingOnControlPlanes !== undefined && {
          allowSchedulingOnControlPlanes: spec.allowSchedulingOnControlPlanes,
        }),
      }),
    );
    if (host.faults.has('member-never-catches-up', name)) {
      // The learner never starts, so it never catches up: Talos would keep waiting.
      record.state = 'stalled';
      record.detail = 'etcd member added as learner, never caught up (fault)';
      host.log(`talos control plane ${name}: ${record.detail}`);
      while (live() && host.faults.has('member-never-catches-up', name)) await sleep(200);
      if (!live()) return;
      record.state = 'joining';
      delete record.detail;
    }
    await host.etcd.startMember(name);
    if (!live()) return;
    host.log(`talos control plane ${name}: etcd started with --initial-cluster-state existing`);
    // Talos promotes itself, retrying until caught up (promoteMember, 10 min).
    const deadline = Date.now() + this.#opts.promoteTimeoutMs;
    for (;;) {
      if (!live()) return;
      try {
        await host.etcd.promote(name);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
    host.log(`talos control plane ${name}: etcd member promoted to voter`);
    if (!live()) return;
    await host.startApiServer(name, record.labAddress);
    for (const pod of talosMirrorPods(node, host.kubernetesVersion)) {
      await host.client.create(apiPath('v1', 'pods', 'kube-system'), pod).catch((err: unknown) => {
        if (!(err instanceof LabApiError && err.status === 409)) throw err;
      });
    }
    if (!live()) return;
    if (this.#opts.addToLoadBalancer) host.setLoadBalancerBackend(name, record.labAddress, true);
    record.state = 'joined';
    host.log(`talos control plane ${name}: API server serving on ${record.labAddress}:6443`);
  }

  /** Resolves when the node has joined; throws when the join failed, stalls past `timeoutMs` or was cancelled. */
  async waitJoined(name: string, timeoutMs = 120_000): Promise<LabNodeRecord> {
    const record = this.#nodes.get(name);
    if (!record) throw new FerryError('usage', `no lab node named ${name}`);
    const join = this.#joins.get(name);
    const timer = sleep(timeoutMs, 'timeout' as const, { ref: false });
    if (join && (await Promise.race([join.then(() => 'done' as const), timer])) === 'timeout') {
      throw new FerryError(
        'gate',
        `lab node ${name} has not joined within ${Math.round(timeoutMs / 1000)} s (${record.state}${record.detail ? `: ${record.detail}` : ''})`,
        {
          remediation: 'check the node with `ferry lab status`; an injected fault may hold it',
        },
      );
    }
    if (record.state !== 'joined') {
      throw new FerryError(
        'internal',
        `lab node ${name} did not join: ${record.state}${record.detail ? `: ${record.detail}` : ''}`,
      );
    }
    return { ...record };
  }

  /**
   * Boots a Talos worker: its kubelet registers the Node; the nodes controller makes it Ready. With
   * a boot time this returns the booting machine and the Node registers in the background, so that
   * a batch's machines boot side by side (`waitJoined` waits for one); without, once registered.
   */
  async provisionWorker(spec: ProvisionSpec): Promise<LabNodeRecord> {
    this.#claim(spec, 'worker');
    const entry = this.#host.addresses.allocateWorker(spec.name, spec.address);
    const boot = this.#bootTime(spec.name);
    const record: LabNodeRecord = {
      name: spec.name,
      role: 'worker',
      flavor: 'talos',
      realAddress: spec.address,
      labAddress: entry.lab,
      etcdMember: undefined,
      state: boot.seconds > 0 ? 'booting' : 'joining',
    };
    this.#nodes.set(spec.name, record);
    if (boot.seconds === 0) {
      await this.#joinWorker(record, spec);
      return { ...record };
    }
    this.#host.log(
      `talos worker ${spec.name} (${spec.address} → ${entry.lab}): booting for ${boot.seconds.toFixed(1)} s (${boot.why})`,
    );
    const join = (async () => {
      if (!(await this.#booted(record, boot.seconds))) return;
      record.state = 'joining';
      await this.#joinWorker(record, spec);
    })().catch((err: unknown) => {
      if (record.state !== 'decommissioned') {
        record.state = 'failed';
        record.detail = (err as Error).message;
        this.#host.log(`talos worker ${spec.name}: join failed: ${record.detail}`);
      }
    });
    this.#joins.set(spec.name, join);
    return { ...record };
  }

  async #joinWorker(record: LabNodeRecord, spec: ProvisionSpec): Promise<void> {
    this.#host.faults.startKubelet(spec.name);
    await this.#registerNode(
      talosNode({
        name: spec.name,
        role: 'worker',
        labAddress: record.labAddress,
        realAddress: spec.address,
        talosVersion: spec.talosVersion ?? this.#opts.talosVersion,
        kubeletVersion: this.#host.kubernetesVersion,
        ...(spec.labels && { labels: spec.labels }),
        ...(spec.taints && { taints: spec.taints }),
        ...(spec.capacity && { capacity: spec.capacity }),
      }),
    );
    // Powered off while its kubelet registered: it stays off (decommission stopped the kubelet).
    if (record.state === 'decommissioned') return;
    record.state = 'joined';
    this.#host.log(`talos worker ${spec.name} (${spec.address} → ${record.labAddress}) registered`);
  }

  /**
   * Powers a node off: after the clock's decommission time (it answers meanwhile), out of the load
   * balancer, API server instance stopped, etcd member stopped (not removed), kubelet silent. A
   * join in progress is abandoned. A second call while it powers off waits for the same power-off.
   */
  async decommission(name: string): Promise<void> {
    const record = this.#nodes.get(name);
    if (!record)
      throw new FerryError('usage', `no lab node named ${name}`, {
        remediation: `nodes: ${[...this.#nodes.keys()].join(', ')}`,
      });
    if (record.state === 'decommissioned') return;
    const off = this.#powerOffs.get(name) ?? this.#powerOff(record);
    this.#powerOffs.set(name, off);
    try {
      await off;
    } finally {
      this.#powerOffs.delete(name);
    }
  }

  async #powerOff(record: LabNodeRecord): Promise<void> {
    const name = record.name;
    const seconds = machineSeconds(this.#opts.clock, this.#opts.seed, 'decommission', name);
    if (seconds > 0) {
      this.#host.log(`${record.flavor} ${record.role} ${name} powering off (${seconds.toFixed(1)} s)`);
      // Unref'd: a lab stopping meanwhile need not wait for a machine that is going anyway.
      await sleep(seconds * 1000, undefined, { ref: false });
    }
    record.state = 'decommissioned';
    delete record.detail;
    const host = this.#host;
    host.faults.stopKubelet(name);
    if (record.role === 'control-plane') {
      host.setLoadBalancerBackend(name, record.labAddress, false);
      await host.stopApiServer(name);
      const member = record.etcdMember
        ? host.etcd.members().find((m) => m.name === record.etcdMember)
        : undefined;
      if (member?.state === 'running') await host.etcd.stop(member.name);
    }
    await this.#joins.get(name);
    // A join that was starting the member while we looked: stop what it started.
    const after = record.etcdMember
      ? host.etcd.members().find((m) => m.name === record.etcdMember)
      : undefined;
    if (after?.state === 'running') await host.etcd.stop(after.name);
    await host.stopApiServer(name);
    host.log(`${record.flavor} ${record.role} ${name} decommissioned`);
  }
}
