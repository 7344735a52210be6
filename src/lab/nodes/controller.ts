/**
 * The lab nodes controller: one loop that plays every kubelet and the controllers of
 * kube-controller-manager and kube-scheduler that the lab needs, as a client of the Kubernetes
 * API (never reaching into a server's store). Each pass lists what it needs, decides (pure
 * functions in this directory) and writes; errors are logged and the next pass tries again, so
 * an API instance going down or a conflict only delays things, as with the real components.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KObj } from '../apiserver/object.js';
import { ACT_CONCURRENCY, actConcurrently } from './act.js';
import { isTransient, type LabKubeClient } from './client.js';
import { endpointSliceActions } from './endpoints.js';
import { kubeletActions, NODE_LEASE_NAMESPACE, pruneMemory } from './kubelet.js';
import { nodeIpamActions, nodeLifecycleActions, orphanedPodActions, schedulerActions } from './lifecycle.js';
import type { LabPodRuntime } from './runtime.js';
import { reconcileWorkloads } from './workloads.js';
import {
  type Action,
  apiPath,
  type BehaviourOf,
  DEFAULT_TIMINGS,
  type Memory,
  NORMAL,
  nameOf,
  newMemory,
  type Timings,
  type World,
} from './world.js';

export type ControllerOptions = {
  client: LabKubeClient;
  /** Pause between passes. Default 150 ms. */
  intervalMs?: number;
  timings?: Partial<Timings>;
  /** Per-node behaviour (faults, stopped kubelets); default: every node normal. */
  behaviour?: BehaviourOf;
  /** The cluster's IPv4 pod CIDR: nodes without a pod CIDR get a /24 of it (node IPAM). */
  clusterCidr?: string;
  /** Failed passes and refused writes; with `logActions`, also every action taken. Default: nothing. */
  log?: (line: string) => void;
  logActions?: boolean;
  /** Runs the pods the lab runs for real (canary listeners); without it every pod is a record. */
  runtime?: LabPodRuntime;
};

export type PassResult = { actions: number; failed: number; error?: string };

const LISTS = {
  nodes: apiPath('v1', 'nodes', undefined),
  pods: apiPath('v1', 'pods', undefined),
  deployments: apiPath('apps/v1', 'deployments', undefined),
  replicasets: apiPath('apps/v1', 'replicasets', undefined),
  statefulsets: apiPath('apps/v1', 'statefulsets', undefined),
  daemonsets: apiPath('apps/v1', 'daemonsets', undefined),
  leases: apiPath('coordination.k8s.io/v1', 'leases', NODE_LEASE_NAMESPACE),
  services: apiPath('v1', 'services', undefined),
  endpointslices: apiPath('discovery.k8s.io/v1', 'endpointslices', undefined),
} as const;

export class LabNodesController {
  readonly #client: LabKubeClient;
  readonly #intervalMs: number;
  readonly #timings: Timings;
  readonly #behaviour: BehaviourOf;
  readonly #log: (line: string) => void;
  readonly #clusterCidr: string | undefined;
  readonly #logActions: boolean;
  readonly #runtime: LabPodRuntime | undefined;
  readonly #memory: Memory = newMemory();
  #running = false;
  #loop: Promise<void> | undefined;
  #passes = 0;
  #lastError: string | undefined;

  constructor(opts: ControllerOptions) {
    this.#client = opts.client;
    this.#intervalMs = opts.intervalMs ?? 150;
    this.#timings = { ...DEFAULT_TIMINGS, ...opts.timings };
    this.#behaviour = opts.behaviour ?? (() => NORMAL);
    this.#log = opts.log ?? (() => {});
    this.#clusterCidr = opts.clusterCidr;
    this.#logActions = opts.logActions ?? false;
    this.#runtime = opts.runtime;
  }

  get passes(): number {
    return this.#passes;
  }

  /** The error of the last failed pass, if the last pass failed. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops after the pass in progress. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
    this.#loop = undefined;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      await this.pass();
      if (this.#running) await sleep(this.#intervalMs);
    }
  }

  async #observe(): Promise<World> {
    const now = Date.now();
    const [
      nodes,
      pods,
      deployments,
      replicasets,
      statefulsets,
      daemonsets,
      leases,
      services,
      endpointslices,
    ] = await Promise.all(Object.values(LISTS).map((p) => this.#client.list<KObj>(p)));
    return {
      now,
      nodes: nodes!,
      pods: pods!,
      deployments: deployments!,
      replicasets: replicasets!,
      statefulsets: statefulsets!,
      daemonsets: daemonsets!,
      leases: leases!,
      services: services!,
      endpointslices: endpointslices!,
    };
  }

  /** Everything the controllers want done in this World; each object's actions in the order done (act.ts). */
  decide(world: World): Action[] {
    pruneMemory(world, this.#memory);
    return [
      ...world.nodes.flatMap((n) =>
        kubeletActions(n, world, this.#memory, this.#timings, this.#behaviour(nameOf(n))),
      ),
      ...nodeLifecycleActions(world, this.#memory, this.#timings),
      ...nodeIpamActions(world, this.#clusterCidr),
      ...orphanedPodActions(world),
      ...reconcileWorkloads(world),
      ...endpointSliceActions(world),
      ...schedulerActions(world),
    ];
  }

  /** One pass: observe, decide, act. Never throws. */
  async pass(): Promise<PassResult> {
    this.#passes++;
    let world: World;
    try {
      world = await this.#observe();
    } catch (err) {
      const error = `listing failed: ${(err as Error).message}`;
      // Once per outage, not once per pass.
      if (this.#lastError === undefined) this.#log(`nodes controller: ${error}`);
      this.#lastError = error;
      return { actions: 0, failed: 0, error };
    }
    if (this.#runtime) {
      this.#runtime.sync(world);
      world.containers = this.#runtime.states();
    }
    const actions = this.decide(world);
    let failed = 0;
    const act = async (a: Action) => {
      // A stop does not wait for the rest of a long pass (writes may be timing out).
      if (!this.#running && this.#loop !== undefined) return;
      try {
        await this.#execute(a);
        if (this.#logActions) this.#log(a.why);
      } catch (err) {
        failed++;
        if (!isTransient(err)) this.#log(`nodes controller: ${a.why}: ${(err as Error).message}`);
      }
    };
    await actConcurrently(actions, ACT_CONCURRENCY, act);
    if (this.#lastError !== undefined) this.#log('nodes controller: API reachable again');
    this.#lastError = undefined;
    return { actions: actions.length, failed };
  }

  async #execute(a: Action): Promise<void> {
    switch (a.kind) {
      case 'create':
        await this.#client.create(a.path, a.body);
        return;
      case 'patch':
        await this.#client.patch(a.path, a.patch, a.patchType ?? 'merge');
        return;
      case 'delete':
        await this.#client.delete(a.path, {
          ...(a.gracePeriodSeconds !== undefined && { gracePeriodSeconds: a.gracePeriodSeconds }),
          ...(a.uid !== undefined && { uid: a.uid }),
        });
        return;
      case 'bind':
        await this.#client.create(apiPath('v1', 'pods', a.namespace, a.name, 'binding'), {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: a.name, namespace: a.namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: a.node },
        });
        return;
    }
  }
}
