/**
 * Fault injection for the lab: the failures a migration must survive or stop on, named as an
 * operator would see them. Some are states that the lab's parts consult (a node that never gets
 * Ready, an etcd member that never catches up, a slow drain); others are acts on the lab's
 * processes (a crash, an API instance going down, evictions refused). `LabFaults` holds the
 * states; `injectFault` performs a fault against whatever implements `FaultTargets` (the
 * assembled LabCluster) and returns how to undo it.
 */
import type { NodeBehaviour } from './nodes/world.js';

export type LabFault =
  /** The node's kubelet runs but never reports Ready (its pod network never comes up). */
  | { kind: 'node-never-ready'; node: string }
  /** The control plane's etcd member is added as a learner but never starts, so never catches up. */
  | { kind: 'member-never-catches-up'; node: string }
  /** Pods on the node take their whole grace period to stop (or `graceSeconds`, when given). */
  | { kind: 'slow-drain'; node: string; graceSeconds?: number }
  /** Evictions of matching pods are refused with 429 whatever their budgets say. */
  | { kind: 'eviction-refused'; namespace?: string; podNamePrefix?: string; message?: string }
  /** The node's processes die at once: etcd member SIGKILLed, API instance gone, kubelet silent. */
  | { kind: 'process-crash'; node: string }
  /** The node's API server instance answers 500 to everything, /readyz included. */
  | { kind: 'api-down'; node: string }
  /**
   * A Talos machine provisioned while this is in force takes `seconds` to install and boot (in
   * place of the lab clock's boot time) before a control plane adds its etcd member as a learner
   * and registers its Node, or a worker's kubelet registers its Node.
   */
  | { kind: 'slow-boot'; node: string; seconds: number };

export type FaultKind = LabFault['kind'];

export function describeFault(f: LabFault): string {
  switch (f.kind) {
    case 'node-never-ready':
      return `node ${f.node} never becomes Ready`;
    case 'member-never-catches-up':
      return `etcd member of ${f.node} never catches up`;
    case 'slow-drain':
      return `pods on ${f.node} take ${f.graceSeconds === undefined ? 'their whole grace period' : `${f.graceSeconds} s`} to stop`;
    case 'eviction-refused':
      return `evictions refused${f.namespace ? ` in ${f.namespace}` : ''}${f.podNamePrefix ? ` for pods ${f.podNamePrefix}*` : ''}`;
    case 'process-crash':
      return `processes of ${f.node} crashed`;
    case 'api-down':
      return `API server instance of ${f.node} down`;
    case 'slow-boot':
      return `machine ${f.node} takes ${f.seconds} s to boot before it joins`;
  }
}

const sameFault = (a: LabFault, b: LabFault): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The fault states in force, and the per-node behaviour they add up to. Pure state. */
export class LabFaults {
  readonly #active: LabFault[] = [];
  /** Nodes whose kubelet is not running (crashed or decommissioned), set by the lab. */
  readonly #stoppedKubelets = new Set<string>();

  add(f: LabFault): void {
    if (!this.#active.some((x) => sameFault(x, f))) this.#active.push(f);
  }

  remove(f: LabFault): void {
    const i = this.#active.findIndex((x) => sameFault(x, f));
    if (i >= 0) this.#active.splice(i, 1);
  }

  active(): LabFault[] {
    return [...this.#active];
  }

  has(kind: FaultKind, node: string): boolean {
    return this.#active.some((f) => f.kind === kind && 'node' in f && f.node === node);
  }

  stopKubelet(node: string): void {
    this.#stoppedKubelets.add(node);
  }

  startKubelet(node: string): void {
    this.#stoppedKubelets.delete(node);
  }

  kubeletStopped(node: string): boolean {
    return this.#stoppedKubelets.has(node);
  }

  /** Seconds a Talos machine provisioned now takes to boot before it joins, when a slow-boot fault says. */
  bootSeconds(node: string): number | undefined {
    const f = this.#active.find(
      (x): x is Extract<LabFault, { kind: 'slow-boot' }> => x.kind === 'slow-boot' && x.node === node,
    );
    return f?.seconds;
  }

  /** What the nodes controller does differently for `node`. */
  behaviour(node: string): NodeBehaviour {
    const slow = this.#active.find(
      (f): f is Extract<LabFault, { kind: 'slow-drain' }> => f.kind === 'slow-drain' && f.node === node,
    );
    return {
      kubeletStopped: this.#stoppedKubelets.has(node) || this.has('process-crash', node),
      neverReady: this.has('node-never-ready', node),
      slowDrain: slow
        ? slow.graceSeconds === undefined
          ? {}
          : { graceSeconds: slow.graceSeconds }
        : undefined,
    };
  }

  /** The refusal message for an eviction of this pod, when an eviction-refused fault covers it. */
  evictionRefusal(pod: { namespace: string; name: string }): string | undefined {
    const f = this.#active.find(
      (x): x is Extract<LabFault, { kind: 'eviction-refused' }> =>
        x.kind === 'eviction-refused' &&
        (x.namespace === undefined || x.namespace === pod.namespace) &&
        (x.podNamePrefix === undefined || pod.name.startsWith(x.podNamePrefix)),
    );
    if (!f) return undefined;
    return f.message ?? `The disruption budget of ${pod.namespace}/${pod.name} refuses evictions (lab fault)`;
  }
}

/** What the effectful faults act on: implemented by the assembled lab. */
export interface FaultTargets {
  readonly faults: LabFaults;
  /** SIGKILLs the node's etcd member and takes its API instance down (its kubelet goes silent through `faults`). */
  crashNode(node: string): Promise<void>;
  /** Brings a crashed node's processes back (etcd member restarted on its data, API instance up). */
  recoverNode(node: string): Promise<void>;
  setApiDown(node: string, down: boolean): void;
}

export type FaultHandle = { fault: LabFault; description: string; clear(): Promise<void> };

/** Puts a fault in force; `clear()` undoes it (a crashed node is brought back). */
export async function injectFault(targets: FaultTargets, fault: LabFault): Promise<FaultHandle> {
  const { faults } = targets;
  faults.add(fault);
  let undo: () => Promise<void> = async () => {};
  switch (fault.kind) {
    case 'process-crash':
      await targets.crashNode(fault.node);
      undo = () => targets.recoverNode(fault.node);
      break;
    case 'api-down':
      targets.setApiDown(fault.node, true);
      undo = async () => targets.setApiDown(fault.node, false);
      break;
    default:
      // The other faults are states the controller, the provisioner and the API servers consult.
      break;
  }
  let cleared = false;
  return {
    fault,
    description: describeFault(fault),
    async clear() {
      if (cleared) return;
      cleared = true;
      faults.remove(fault);
      await undo();
    },
  };
}
