/**
 * An in-memory cluster behind drain-nodes.ts's DrainPort, on a virtual clock
 * (src/util/testing-virtual-clock.ts), for unit tests (src/run/drain-nodes.test.ts): requests take
 * virtual time, and changes to the cluster are scheduled at virtual instants.
 *
 * Test-only: nothing under src/ imports this file.
 */
import type { EvictOutcome, PdbView, PodView } from '../ports/run.js';
import { readLabelSelector, selects } from '../util/label-selector.js';
import type { VirtualClock } from '../util/testing-virtual-clock.js';
import type { DrainEvent, DrainPort } from './drain-nodes.js';

/** A running pod of ReplicaSet `web` on w1 in namespace shop, unless `over` says otherwise. */
export function pod(name: string, over: Partial<PodView> = {}): PodView {
  return {
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    terminating: false,
    ignoredByDrain: false,
    node: 'w1',
    ready: true,
    finished: false,
    controller: { kind: 'ReplicaSet', name: 'web' },
    labels: { app: 'web' },
    pinnedTo: undefined,
    ...over,
  };
}

/** Where the controller puts the pod that replaces an evicted one, and when it is Ready. */
export interface Replacement {
  /** '' leaves it unscheduled. */
  node: string;
  /** After it appears; undefined: never Ready. */
  readyMs?: number;
  unschedulable?: string;
  pinnedTo?: string[];
}

export interface Call {
  op: 'podsOnNode' | 'evict' | 'listPods' | 'listPdbs' | 'getPdb';
  /** The node, or namespace and name. */
  args: string[];
  /** Virtual ms since the clock's start. */
  at: number;
}

/** A port call more than this: a mutant loops; fail rather than run until the test times out. */
const MAX_CALLS = 20_000;

/**
 * Pods and budgets, changed by evictions and by the test (`clock.at`). An accepted eviction marks
 * the pod terminating and removes it after `graceMs` (per pod in `grace`); its controller's next
 * Replacement (see `replace`) then appears: a ReplicaSet's at once under a new name, a
 * StatefulSet's under the old name with a new uid once the old pod is gone. A budget at 0 (or
 * null) refuses; two budgets selecting a pod answer 'several-budgets', as the API server does.
 */
export class DrainCluster {
  readonly pods: PodView[] = [];
  readonly pdbs: PdbView[] = [];
  readonly calls: Call[] = [];
  /** Every event drainNodes recorded, in order; `record` is what a test passes to it. */
  readonly events: DrainEvent[] = [];
  /** Evictions the fake accepted, "ns/name", in order. */
  readonly evictions: string[] = [];
  /** Grace period of an evicted pod before it is gone; Infinity: it never goes. */
  graceMs = 0;
  readonly grace = new Map<string, number>();
  /** How long one eviction request takes. */
  evictMs = 0;
  /** Answers an eviction itself when it returns an outcome (nothing else happens then). */
  onEvict: ((p: PodView, attempt: number) => EvictOutcome | undefined) | undefined;
  /** Called after each recorded event (a test aborts from here at a precise point). */
  onRecord: ((e: DrainEvent) => void) | undefined;
  /** The most nodes with an eviction sent and no 'node-drained' yet, at any one time. */
  maxDraining = 0;
  readonly #draining = new Set<string>();
  readonly #replacements = new Map<string, Replacement[]>();
  readonly #attempts = new Map<string, number>();
  #made = 0;

  constructor(readonly clock: VirtualClock) {}

  add(...pods: PodView[]): this {
    this.pods.push(...pods);
    return this;
  }

  pdb(name: string, selector: unknown, disruptionsAllowed: number | null, namespace = 'shop'): PdbView {
    const b: PdbView = { namespace, name, selector, disruptionsAllowed };
    this.pdbs.push(b);
    return b;
  }

  /** The pods that replace evicted pods of controller `name`, one per eviction, in order. */
  replace(name: string, ...r: Replacement[]): this {
    this.#replacements.set(name, [...(this.#replacements.get(name) ?? []), ...r]);
    return this;
  }

  find(name: string, namespace = 'shop'): PodView | undefined {
    return this.pods.find((p) => p.name === name && p.namespace === namespace);
  }

  remove(name: string, namespace = 'shop'): void {
    const i = this.pods.findIndex((p) => p.name === name && p.namespace === namespace);
    if (i >= 0) this.pods.splice(i, 1);
  }

  record = (e: DrainEvent): void => {
    this.events.push(e);
    if (e.kind === 'node-drained') this.#draining.delete(e.node);
    this.onRecord?.(e);
  };

  /** The events of one kind, in order. */
  eventsOf<K extends DrainEvent['kind']>(kind: K): Extract<DrainEvent, { kind: K }>[] {
    return this.events.filter((e): e is Extract<DrainEvent, { kind: K }> => e.kind === kind);
  }

  callsOf(op: Call['op']): string[] {
    return this.calls.filter((c) => c.op === op).map((c) => c.args.join('/'));
  }

  #call(op: Call['op'], ...args: string[]): void {
    if (this.calls.length >= MAX_CALLS) throw new Error(`fake cluster: over ${MAX_CALLS} calls`);
    this.calls.push({ op, args, at: this.clock.elapsed() });
  }

  readonly port: DrainPort = {
    podsOnNode: async (node) => {
      this.#call('podsOnNode', node);
      return this.pods.filter((p) => p.node === node).map((p) => structuredClone(p));
    },
    listPods: async (namespace) => {
      this.#call('listPods', namespace);
      return this.pods.filter((p) => p.namespace === namespace).map((p) => structuredClone(p));
    },
    listPdbs: async (namespace) => {
      this.#call('listPdbs', namespace ?? '(all)');
      return this.pdbs
        .filter((b) => namespace === undefined || b.namespace === namespace)
        .map((b) => ({ ...b }));
    },
    getPdb: async (namespace, name) => {
      this.#call('getPdb', namespace, name);
      const b = this.pdbs.find((x) => x.namespace === namespace && x.name === name);
      return b && { ...b };
    },
    evict: async (namespace, name) => {
      this.#call('evict', namespace, name);
      const node = this.find(name, namespace)?.node;
      if (node) {
        this.#draining.add(node);
        this.maxDraining = Math.max(this.maxDraining, this.#draining.size);
      }
      if (this.evictMs > 0) await this.clock.delay(this.evictMs);
      const p = this.find(name, namespace);
      if (!p) return { kind: 'gone' };
      const attempt = (this.#attempts.get(`${namespace}/${name}`) ?? 0) + 1;
      this.#attempts.set(`${namespace}/${name}`, attempt);
      const scripted = this.onEvict?.(p, attempt);
      if (scripted) return scripted;
      const budgets = this.pdbs.filter(
        (b) => b.namespace === namespace && selects(readLabelSelector(b.selector), p.labels),
      );
      if (budgets.length > 1) {
        return {
          kind: 'several-budgets',
          message:
            'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        };
      }
      const b = budgets[0];
      if (b) {
        if ((b.disruptionsAllowed ?? 0) <= 0) {
          return {
            kind: 'blocked',
            pdb: `${b.namespace}/${b.name}`,
            message: "Cannot evict pod as it would violate the pod's disruption budget.",
          };
        }
        b.disruptionsAllowed! -= 1;
      }
      this.#accept(p);
      return { kind: 'evicted' };
    },
  };

  #accept(p: PodView): void {
    this.evictions.push(`${p.namespace}/${p.name}`);
    p.terminating = true;
    const grace = this.grace.get(p.name) ?? this.graceMs;
    const c = p.controller;
    const next = c ? this.#replacements.get(c.name)?.shift() : undefined;
    const gone = () => {
      const i = this.pods.indexOf(p);
      if (i >= 0) this.pods.splice(i, 1);
      if (next && c?.kind === 'StatefulSet') this.#appear(p, p.name, `${p.uid}-next`, next);
    };
    if (next && c?.kind === 'ReplicaSet') this.#appear(p, `${p.name}-r${++this.#made}`, '', next);
    if (grace === 0) gone();
    else if (Number.isFinite(grace)) this.clock.after(grace, gone);
  }

  #appear(old: PodView, name: string, uid: string, r: Replacement): void {
    const fresh: PodView = {
      ...structuredClone(old),
      name,
      uid: uid || `uid-${name}`,
      terminating: false,
      node: r.node,
      ready: false,
      pinnedTo: r.pinnedTo ?? old.pinnedTo,
      unschedulable: r.unschedulable,
    };
    this.pods.push(fresh);
    if (r.readyMs !== undefined)
      this.clock.after(r.readyMs, () => {
        fresh.ready = true;
      });
  }
}
