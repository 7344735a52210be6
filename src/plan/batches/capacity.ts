/**
 * Where evicted pods go: a simulation of the schedulable workers' free capacity while batches
 * drain, so that a batch holds only nodes whose pods fit on the nodes that stay.
 *
 * Approximations (the scheduler is more subtle; these err on the side of smaller batches):
 * - first-fit decreasing: a node's pods are placed largest first, each on the first node that
 *   admits it (tolerations, nodeSelector, required node affinity, its volumes' node affinity) and
 *   has room for its cpu, memory and a pod slot; the scheduler's scoring is not modelled;
 * - nodes are tried in an order that keeps moved pods off nodes drained soon: surge workers,
 *   replacements, then the old workers in reverse batch order (the first with room in each class
 *   the pod admits, then the best of those);
 * - hard spreading (topology spread with DoNotSchedule, required pod anti-affinity) is counted per
 *   group of pods carrying the same rule, with a per-domain cap of ⌊pods ÷ domains⌋ + maxSkew
 *   (1 for anti-affinity) instead of the scheduler's live minimum over domains;
 * - a replacement has its old node's allocatable, labels and taints (the kit's pool patches) and
 *   its DaemonSet requests; control planes take no pod (phase 2 makes most of them Talos control
 *   planes, whose taint the kit decides);
 * - preferred rules, inter-pod affinity and resources other than cpu, memory and pods are ignored.
 *
 * Near-linear: nodes with the same labels and taints form a class; each class keeps its nodes'
 * free capacity in a max segment tree, so finding the first node with room is logarithmic in the
 * usual case, and a pod only visits the classes its scheduling rules admit (cached per rule set).
 */
import { admits } from './fit.js';
import type {
  ClusterModel,
  ModelNode,
  ModelPod,
  Resource,
  Scheduling,
  Shortage,
  SpreadRule,
  Vec,
} from './model.js';

const HOSTNAME = 'kubernetes.io/hostname';

/**
 * A node's labels as its replacement carries them: the same, but for the hostname (a new one,
 * which no pod's rules can name yet: rules naming old nodes make a pod pinned, from-snapshot.ts).
 */
export function shapeLabels(node: ModelNode): Record<string, string> {
  return { ...node.labels, [HOSTNAME]: '' };
}

/** Nodes with the same key take the same pods: labels (bar the hostname) and taints. */
export function shapeKey(node: ModelNode): string {
  const byKey = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);
  return JSON.stringify([
    Object.entries(shapeLabels(node)).sort(byKey),
    node.taints.map((t) => [t.key, t.value ?? '', t.effect]).sort(),
  ]);
}

export type PlaceResult = { ok: true; slot: number } | { ok: false; shortage: Shortage };

interface SlotShape {
  name: string;
  node: ModelNode;
  /** For a replacement or a surge worker: a name of its own for hostname domains. */
  hostname: string;
}

/** A max segment tree per dimension over a class's slots; inactive leaves hold -Infinity. */
class ClassTree {
  readonly size: number;
  readonly cpu: Float64Array;
  readonly memory: Float64Array;
  readonly pods: Float64Array;
  constructor(readonly slots: number[]) {
    let size = 1;
    while (size < slots.length) size *= 2;
    this.size = size;
    this.cpu = new Float64Array(2 * size).fill(Number.NEGATIVE_INFINITY);
    this.memory = new Float64Array(2 * size).fill(Number.NEGATIVE_INFINITY);
    this.pods = new Float64Array(2 * size).fill(Number.NEGATIVE_INFINITY);
  }
  set(pos: number, v: Vec | null): void {
    let i = this.size + pos;
    this.cpu[i] = v ? v.cpu : Number.NEGATIVE_INFINITY;
    this.memory[i] = v ? v.memory : Number.NEGATIVE_INFINITY;
    this.pods[i] = v ? v.pods : Number.NEGATIVE_INFINITY;
    for (i >>= 1; i >= 1; i >>= 1) {
      this.cpu[i] = Math.max(this.cpu[2 * i]!, this.cpu[2 * i + 1]!);
      this.memory[i] = Math.max(this.memory[2 * i]!, this.memory[2 * i + 1]!);
      this.pods[i] = Math.max(this.pods[2 * i]!, this.pods[2 * i + 1]!);
    }
  }
  /** The leftmost slot with at least `need` in the dimensions asked and `ok`, or -1. */
  find(need: Vec, ok: (slot: number) => boolean): number {
    const go = (i: number): number => {
      if (this.cpu[i]! < need.cpu || this.memory[i]! < need.memory || this.pods[i]! < need.pods) return -1;
      if (i >= this.size) {
        const slot = this.slots[i - this.size];
        return slot !== undefined && ok(slot) ? slot : -1;
      }
      const left = go(2 * i);
      return left >= 0 ? left : go(2 * i + 1);
    };
    return go(1);
  }
}

export class Capacity {
  /** Old workers 0…n-1, their replacements n…2n-1, surge workers 2n…. */
  readonly n: number;
  readonly slots: SlotShape[] = [];
  readonly free: Vec[] = [];
  readonly active: boolean[] = [];
  /** Pods (indexes into model.pods, or extra pods) on each slot, in arrival order. */
  readonly podsOn: number[][] = [];
  readonly podSlot: number[] = [];
  /** The batch a slot last received a pod in. */
  readonly received: number[] = [];
  readonly pods: ModelPod[];
  readonly #classOf: number[] = [];
  readonly #posOf: number[] = [];
  /** Preference over all classes: lower first. */
  readonly #rank: number[] = [];
  readonly #trees: ClassTree[] = [];
  readonly #classLabels: { labels: Record<string, string>; taints: ModelNode['taints'] }[] = [];
  readonly #fits = new Map<number, number[]>();
  readonly #schedulings: Scheduling[];
  readonly #spreadCount = new Map<string, Map<string, number>>();
  readonly #spreadCap = new Map<string, number>();
  #undo: (() => void)[] = [];

  constructor(model: ClusterModel, surge: { count: number; like: ModelNode | null }) {
    this.n = model.workers.length;
    this.pods = [...model.pods];
    this.#schedulings = model.schedulings;
    const shapes: SlotShape[] = [
      ...model.workers.map((w) => ({ name: w.name, node: w, hostname: w.name })),
      ...model.workers.map((w) => ({ name: `replacement of ${w.name}`, node: w, hostname: `~${w.name}` })),
    ];
    for (let i = 0; i < surge.count && surge.like; i++)
      shapes.push({ name: `surge worker ${i + 1}`, node: surge.like, hostname: `~surge-${i + 1}` });
    this.slots.push(...shapes);

    // Classes: labels but the hostname, and taints.
    const classKey = new Map<string, number>();
    for (const s of shapes) {
      const labels = shapeLabels(s.node);
      const key = shapeKey(s.node);
      let c = classKey.get(key);
      if (c === undefined) {
        c = this.#classLabels.length;
        classKey.set(key, c);
        this.#classLabels.push({ labels, taints: s.node.taints });
      }
      this.#classOf.push(c);
    }
    // Preference order inside a class: surge, replacements, then old workers drained last first.
    const members: number[][] = this.#classLabels.map(() => []);
    const order = [
      ...shapes.map((_, i) => i).filter((i) => i >= 2 * this.n),
      ...shapes.map((_, i) => i).filter((i) => i >= this.n && i < 2 * this.n),
      ...shapes
        .map((_, i) => i)
        .filter((i) => i < this.n)
        .reverse(),
    ];
    order.forEach((slot, rank) => {
      members[this.#classOf[slot]!]!.push(slot);
      this.#rank[slot] = rank;
    });
    members.forEach((list, c) => {
      this.#trees[c] = new ClassTree(list);
      list.forEach((slot, pos) => {
        this.#posOf[slot] = pos;
      });
    });

    for (const s of shapes) {
      this.free.push({
        cpu: s.node.allocatable.cpu - s.node.fixed.cpu,
        memory: s.node.allocatable.memory - s.node.fixed.memory,
        pods: s.node.allocatable.pods - s.node.fixed.pods,
      });
      this.active.push(false);
      this.podsOn.push([]);
      this.received.push(0);
    }
    const index = new Map(model.workers.map((w, i) => [w.name, i]));
    this.pods.forEach((p, id) => {
      const slot = index.get(p.node);
      if (slot === undefined) throw new Error(`pod ${p.namespace}/${p.name} is on ${p.node}, not a worker`);
      this.podSlot[id] = slot;
      this.podsOn[slot]!.push(id);
      this.#take(slot, p.requests, -1);
    });
    this.#initSpread(model);
    for (let i = 0; i < this.n; i++) if (!model.workers[i]!.unschedulable) this.#setActive(i, true);
    for (let i = 2 * this.n; i < shapes.length; i++) this.#setActive(i, true);
    this.#undo = [];
  }

  // ---- spreading ------------------------------------------------------------------------------

  #domain(slot: number, key: string): string | undefined {
    const s = this.slots[slot]!;
    return key === HOSTNAME ? s.hostname : s.node.labels[key];
  }

  #initSpread(model: ClusterModel): void {
    const sizes = new Map<string, number>();
    const domainsByKey = new Map<string, Set<string>>();
    for (const p of model.pods) {
      for (const r of p.spread) {
        sizes.set(r.group, (sizes.get(r.group) ?? 0) + 1);
        if (!domainsByKey.has(r.topologyKey)) {
          const d = new Set<string>();
          for (let s = 0; s < this.slots.length; s++) {
            const v = this.#domain(s, r.topologyKey);
            if (v !== undefined) d.add(v);
          }
          domainsByKey.set(r.topologyKey, d);
        }
        const domains = Math.max(1, domainsByKey.get(r.topologyKey)!.size);
        const size = sizes.get(r.group)!;
        this.#spreadCap.set(r.group, r.maxSkew === 0 ? 1 : Math.floor(size / domains) + r.maxSkew);
      }
    }
    this.pods.forEach((p, id) => {
      for (const r of p.spread) this.#count(r, this.podSlot[id]!, 1);
    });
  }

  #count(r: SpreadRule, slot: number, delta: number): void {
    const d = this.#domain(slot, r.topologyKey);
    if (d === undefined) return;
    let m = this.#spreadCount.get(r.group);
    if (!m) {
      m = new Map();
      this.#spreadCount.set(r.group, m);
    }
    m.set(d, (m.get(d) ?? 0) + delta);
  }

  #spreadOk(p: ModelPod, slot: number): boolean {
    for (const r of p.spread) {
      const d = this.#domain(slot, r.topologyKey);
      // DoNotSchedule: a node without the topology key is not a candidate.
      if (d === undefined) return false;
      if ((this.#spreadCount.get(r.group)?.get(d) ?? 0) >= (this.#spreadCap.get(r.group) ?? 1)) return false;
    }
    return true;
  }

  // ---- slots ----------------------------------------------------------------------------------

  #refresh(slot: number): void {
    this.#trees[this.#classOf[slot]!]!.set(this.#posOf[slot]!, this.active[slot] ? this.free[slot]! : null);
  }

  #setActive(slot: number, on: boolean): void {
    this.active[slot] = on;
    this.#refresh(slot);
  }

  /** Adds `sign` × requests to a slot's free capacity. */
  #take(slot: number, r: Vec, sign: 1 | -1): void {
    const f = this.free[slot]!;
    f.cpu += sign * r.cpu;
    f.memory += sign * r.memory;
    f.pods += sign * r.pods;
  }

  replacementOf(worker: number): number {
    return this.n + worker;
  }

  /** Journal point for rollback(). */
  mark(): number {
    return this.#undo.length;
  }

  rollback(to: number): void {
    while (this.#undo.length > to) this.#undo.pop()!();
  }

  /** Forget the journal: what happened stays. */
  commit(): void {
    this.#undo = [];
  }

  activate(slot: number): void {
    if (this.active[slot]) return;
    this.#setActive(slot, true);
    this.#undo.push(() => this.#setActive(slot, false));
  }

  deactivate(slot: number): void {
    if (!this.active[slot]) return;
    this.#setActive(slot, false);
    this.#undo.push(() => this.#setActive(slot, true));
  }

  /** Takes a pod off its slot (evicted): it holds nothing until placed again. */
  unplace(id: number): void {
    const slot = this.podSlot[id]!;
    const p = this.pods[id]!;
    const list = this.podsOn[slot]!;
    const at = list.lastIndexOf(id);
    list.splice(at, 1);
    this.#take(slot, p.requests, 1);
    for (const r of p.spread) this.#count(r, slot, -1);
    this.podSlot[id] = -1;
    this.#refresh(slot);
    this.#undo.push(() => {
      list.splice(at, 0, id);
      this.#take(slot, p.requests, -1);
      for (const r of p.spread) this.#count(r, slot, 1);
      this.podSlot[id] = slot;
      this.#refresh(slot);
    });
  }

  /** Puts a pod (taken off its slot) on `slot`, marking the slot as receiving in `batch`. */
  put(id: number, slot: number, batch: number): void {
    const p = this.pods[id]!;
    const before = this.received[slot]!;
    this.podsOn[slot]!.push(id);
    this.#take(slot, p.requests, -1);
    for (const r of p.spread) this.#count(r, slot, 1);
    this.podSlot[id] = slot;
    this.received[slot] = batch;
    this.#refresh(slot);
    this.#undo.push(() => {
      this.podsOn[slot]!.pop();
      this.#take(slot, p.requests, 1);
      for (const r of p.spread) this.#count(r, slot, -1);
      this.podSlot[id] = -1;
      this.received[slot] = before;
      this.#refresh(slot);
    });
  }

  /** Adds a pod that does not exist yet (a surge replica) to the model, unplaced. */
  addPod(p: ModelPod): number {
    this.pods.push(p);
    const id = this.pods.length - 1;
    this.podSlot[id] = -1;
    return id;
  }

  // ---- placement ------------------------------------------------------------------------------

  /** Classes whose labels and taints the rule set admits (whether or not a node of it has room). */
  classesFor(scheduling: number): number[] {
    let c = this.#fits.get(scheduling);
    if (!c) {
      const s = this.#schedulings[scheduling]!;
      c = this.#classLabels.flatMap((cl, i) => (admits(s, cl.labels, cl.taints) ? [i] : []));
      this.#fits.set(scheduling, c);
    }
    return c;
  }

  /** The first active node with room for the (unplaced) pod, or what it lacks. */
  find(id: number): PlaceResult {
    const p = this.pods[id]!;
    const ok = (slot: number) => this.#spreadOk(p, slot);
    const classes = this.classesFor(p.scheduling);
    // The first node with room in each admitted class; of those, the one drained last (or never).
    let best = -1;
    for (const c of classes) {
      const slot = this.#trees[c]!.find(p.requests, ok);
      if (slot >= 0 && (best < 0 || this.#rank[slot]! < this.#rank[best]!)) best = slot;
    }
    if (best >= 0) return { ok: true, slot: best };
    // Name what is short: a single dimension no admitted node has enough of, else spreading or the mix.
    const any = Number.NEGATIVE_INFINITY;
    const single: [Resource, Vec][] = [
      ['cpu', { cpu: p.requests.cpu, memory: any, pods: any }],
      ['memory', { cpu: any, memory: p.requests.memory, pods: any }],
      ['pods', { cpu: any, memory: any, pods: p.requests.pods }],
    ];
    for (const [resource, need] of single)
      if (classes.every((c) => this.#trees[c]!.find(need, () => true) < 0))
        return { ok: false, shortage: resource };
    const roomy = classes.some((c) => this.#trees[c]!.find(p.requests, () => true) >= 0);
    return { ok: false, shortage: roomy ? 'spread' : 'fragmentation' };
  }
}
