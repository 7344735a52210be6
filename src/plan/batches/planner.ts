/**
 * The worker batch planner (pure: model in, batches out). Greedy, in the workers' order:
 * a batch starts with the first worker left and takes every following worker that
 * - holds no pod that moved in during this batch (it takes this batch's pods),
 * - keeps every PodDisruptionBudget within its allowed disruptions, counting its pods on all the
 *   batch's nodes (they drain together): their pods can all go at once,
 * - has pods that all fit on the nodes that stay schedulable (capacity.ts),
 * until the batch has --max-unavailable nodes. A batch's drain may go round by round: a PDB's pods
 * on its nodes may be up to `roundsPerBatch` times what it allows (the drain evicts them as the
 * budget lets, each round waiting for the evicted pods' replacements to be Ready), and more when
 * its first worker alone holds more: that worker always goes, and the others may use its rounds
 * (never more of them). choose.ts picks `roundsPerBatch`: a round costs a pod's Ready time, a
 * batch a provision and a decommission. The first worker also goes when some of its pods fit
 * nowhere: those become outages, listed, never hidden. A PDB that allows no disruption makes its
 * worker's batch a batch of one whose drain waits on it (plan refuses, unless --surge-replicas
 * scales the workload up by one first: its extra pod is placed, and counted, like any other).
 *
 * Each worker is looked at once per batch, a pod placed in about log(nodes): near-linear in the
 * workers and pods for batch counts that do not grow with the cluster (the PDBs' sizes and
 * --max-unavailable decide those).
 */
import type { Strategy } from '../model.js';
import { Capacity, shapeKey } from './capacity.js';
import type {
  BatchBound,
  BlockedPdb,
  ClusterModel,
  ModelNode,
  ModelPod,
  Outage,
  OutageReason,
  PlannedBatch,
  Shortage,
  SurgedWorkload,
  Vec,
} from './model.js';
import type { Timing } from './timing.js';

export interface PlannerOptions {
  strategy: Strategy;
  /** At most this many workers per batch (≥ 1). */
  maxUnavailable: number;
  /** Talos workers brought up before the first drain (--surge). */
  surgeNodes: number;
  /** Scale workloads whose PDB allows no disruption up by one around their drains (--surge-replicas). */
  surgeReplicas: boolean;
  /** Drain rounds a batch may take (≥ 1; default 1): see the top of this file. */
  roundsPerBatch?: number;
  timing: Timing;
}

export interface SurgePool {
  nodes: number;
  /** The largest pool (most workers with the same labels and taints): its members. */
  pool: string[];
  /** Its smallest allocatable and largest DaemonSet requests: what one surge worker is assumed to be. */
  shape: { allocatable: Vec; fixed: Vec } | null;
}

export interface PlannedRoll {
  batches: PlannedBatch[];
  outages: Outage[];
  blocked: BlockedPdb[];
  surged: SurgedWorkload[];
  surge: SurgePool;
  /** The drain rounds a batch was allowed (PlannerOptions.roundsPerBatch). */
  roundsPerBatch: number;
  /** For the lower bound: pods of each PDB on the workers and the disruptions it allows. */
  pdbLoad: { pdb: string; pods: number; allowed: number }[];
  /** Requests of the pods the batches moved, and the room they had (free capacity, plus what left). */
  moved: Vec;
  spare: Vec;
}

const pdbName = (b: { namespace: string; name: string }) => `${b.namespace}/${b.name}`;
const podName = (p: ModelPod) => `${p.namespace}/${p.name}`;
const ownerName = (o: { kind: string; namespace: string; name: string }) =>
  `${o.kind} ${o.namespace}/${o.name}`;
const SCALABLE = new Set(['Deployment', 'StatefulSet']);

/** The largest pool and what a surge worker shaped like it would be. */
export function largestPool(workers: readonly ModelNode[]): { pool: ModelNode[]; like: ModelNode | null } {
  const pools = new Map<string, ModelNode[]>();
  for (const w of workers) {
    const k = shapeKey(w);
    const l = pools.get(k);
    if (l) l.push(w);
    else pools.set(k, [w]);
  }
  let pool: ModelNode[] = [];
  for (const l of pools.values()) if (l.length > pool.length) pool = l;
  const first = pool[0];
  if (!first) return { pool, like: null };
  const min = (f: (n: ModelNode) => number) => Math.min(...pool.map(f));
  const max = (f: (n: ModelNode) => number) => Math.max(...pool.map(f));
  return {
    pool,
    like: {
      name: 'surge',
      labels: first.labels,
      taints: first.taints,
      allocatable: {
        cpu: min((n) => n.allocatable.cpu),
        memory: min((n) => n.allocatable.memory),
        pods: min((n) => n.allocatable.pods),
      },
      fixed: {
        cpu: max((n) => n.fixed.cpu),
        memory: max((n) => n.fixed.memory),
        pods: max((n) => n.fixed.pods),
      },
      unschedulable: false,
    },
  };
}

/** A pod's size for "largest first": cores plus GiB, as a scheduler sees both as scarce. */
function size(p: ModelPod): number {
  return p.requests.cpu / 1000 + p.requests.memory / 2 ** 30;
}

function add(a: Vec, b: Vec, sign = 1): void {
  a.cpu += sign * b.cpu;
  a.memory += sign * b.memory;
  a.pods += sign * b.pods;
}

export function planWorkerBatches(model: ClusterModel, opts: PlannerOptions): PlannedRoll {
  const n = model.workers.length;
  const t = opts.timing;
  const { pool, like } = largestPool(model.workers);
  const surgeCount = like ? opts.surgeNodes : 0;
  const cap = new Capacity(model, { count: surgeCount, like });
  const maxPerBatch = Math.max(1, opts.maxUnavailable);
  const roundsPerBatch = Math.max(1, Math.floor(opts.roundsPerBatch ?? 1));

  // -- budgets: what each PDB allows, and what --surge-replicas makes of those that allow nothing
  const allowed = model.pdbs.map((b) => b.allowed);
  const podsOfPdb: number[][] = model.pdbs.map(() => []);
  model.pods.forEach((p, id) => {
    for (const b of p.pdbs) podsOfPdb[b]!.push(id);
  });
  const blocked: BlockedPdb[] = [];
  const surged: (SurgedWorkload & { index: number })[] = [];
  model.pdbs.forEach((b, i) => {
    const mine = podsOfPdb[i]!;
    if (allowed[i]! > 0 || mine.length === 0) return;
    const nodes = [...new Set(mine.map((id) => model.pods[id]!.node))];
    const w = b.workload;
    const surgeable = w !== null && SCALABLE.has(w.kind) && b.allowedWithExtraReplica > 0 ? w : null;
    if (surgeable && opts.surgeReplicas) {
      const template = model.pods[mine[0]!]!;
      const extra = cap.addPod({
        ...template,
        name: `${w!.name} (extra replica)`,
        owner: surgeable,
        pin: null,
      });
      const r = cap.find(extra);
      if (r.ok) {
        cap.put(extra, r.slot, 0);
        allowed[i] = b.allowedWithExtraReplica;
        podsOfPdb[i]!.push(extra);
        const from = surgeable.replicas ?? 1;
        surged.push({
          index: i,
          workload: surgeable,
          pdb: pdbName(b),
          from,
          to: from + 1,
          firstBatch: 0,
          lastBatch: 0,
        });
        return;
      }
      blocked.push({
        pdb: pdbName(b),
        rule: b.rule,
        nodes,
        surgeable: ownerName(surgeable),
        fix: `no worker has room for one more replica of ${ownerName(surgeable)} (short of ${r.shortage}): add capacity (--surge N) or free some, or let ${pdbName(b)} allow one disruption`,
      });
      return;
    }
    blocked.push({
      pdb: pdbName(b),
      rule: b.rule,
      nodes,
      surgeable: surgeable ? ownerName(surgeable) : null,
      fix: surgeable
        ? `scale ${ownerName(surgeable)} up by one before the roll, or pass --surge-replicas: the plan scales it to ${(surgeable.replicas ?? 1) + 1} before its first node drains and back to ${surgeable.replicas ?? 1} after its last`
        : `let ${pdbName(b)} allow one disruption for the migration (${b.rule}${w ? `; scaling ${ownerName(w)} up would not change that` : ': it selects no single Deployment or StatefulSet ferry could scale'}), and restore it afterwards`,
    });
  });
  cap.commit();
  const blockedIdx = new Set(
    model.pdbs.flatMap((_, i) => (allowed[i] === 0 && podsOfPdb[i]!.length > 0 ? [i] : [])),
  );
  const surgedIdx = new Set(surged.map((s) => s.index));

  // -- what happens to a pod when its node drains
  type Fate = 'move' | OutageReason;
  const fateOf = (id: number): Fate => {
    const p = cap.pods[id]!;
    if (!p.owner) return 'bare-pod';
    if (p.pin) return p.pin.kind;
    if (cap.classesFor(p.scheduling).length === 0) return 'no-node-fits';
    return 'move';
  };
  const singleReplica = (p: ModelPod) =>
    p.owner !== null &&
    p.owner.replicas !== null &&
    p.owner.replicas <= 1 &&
    !p.pdbs.some((b) => surgedIdx.has(b) || blockedIdx.has(b));

  const outages: Outage[] = [];
  const outage = (p: ModelPod, reason: OutageReason, node: string, batch: number, detail: string): void => {
    const o = p.owner;
    const seconds =
      reason === 'single-replica'
        ? // A StatefulSet's pod comes back under its name only once the old one is gone.
          o?.kind === 'StatefulSet'
          ? p.graceSeconds + t.podReady
          : t.podReady
        : reason === 'no-room' && opts.strategy === 'replace'
          ? // Pending until the node's replacement is up at the end of the batch.
            t.decommission + t.provision + t.nodeReady + t.podReady
          : null;
    outages.push({
      kind: o ? o.kind : 'Pod',
      namespace: p.namespace,
      name: o ? o.name : p.name,
      reason,
      node,
      batch,
      seconds,
      detail,
    });
  };

  const moved = { cpu: 0, memory: 0, pods: 0 };
  const gone = { cpu: 0, memory: 0, pods: 0 };
  const movedOnce = new Uint8Array(cap.pods.length + 1);

  // -- per-batch PDB counters
  const count = new Int32Array(model.pdbs.length);
  const scratch = new Int32Array(model.pdbs.length);
  let touched: number[] = [];

  /** The worker's pods per PDB, as [pdb, pods] pairs. */
  const loadOf = (slot: number): number[] => {
    const out: number[] = [];
    for (const id of cap.podsOn[slot]!) {
      for (const b of cap.pods[id]!.pdbs) {
        if (scratch[b] === 0) out.push(b);
        scratch[b]!++;
      }
    }
    const pairs: number[] = [];
    for (const b of out) {
      pairs.push(b, scratch[b]!);
      scratch[b] = 0;
    }
    return pairs;
  };
  /** The first PDB the load would take over `rounds` × its allowed disruptions in this batch, or -1. */
  const over = (pairs: number[], rounds: number): number => {
    for (let i = 0; i < pairs.length; i += 2) {
      const b = pairs[i]!;
      if (count[b]! + pairs[i + 1]! > rounds * allowed[b]!) return b;
    }
    return -1;
  };
  const addLoad = (pairs: number[]): void => {
    for (let i = 0; i < pairs.length; i += 2) {
      const b = pairs[i]!;
      if (count[b] === 0) touched.push(b);
      count[b]! += pairs[i + 1]!;
    }
  };

  /**
   * Drains a worker in the simulation: its pods leave, movable ones are placed elsewhere. `forced`:
   * what fits nowhere becomes an outage; otherwise the first pod that fits nowhere fails it.
   */
  const drain = (
    worker: number,
    batch: number,
    forced: boolean,
    found: { pod: ModelPod; reason: OutageReason; detail: string }[],
  ): { pod: ModelPod; shortage: Shortage } | null => {
    cap.deactivate(worker);
    if (opts.strategy === 'surge') cap.activate(cap.replacementOf(worker));
    const ids = [...cap.podsOn[worker]!].sort((a, b) => size(cap.pods[b]!) - size(cap.pods[a]!));
    for (const id of ids) {
      const p = cap.pods[id]!;
      const fate = fateOf(id);
      cap.unplace(id);
      if (fate !== 'move') {
        found.push({ pod: p, reason: fate, detail: outageDetail(p, fate) });
        continue;
      }
      const r = cap.find(id);
      if (!r.ok) {
        if (!forced) return { pod: p, shortage: r.shortage };
        found.push({
          pod: p,
          reason: 'no-room',
          detail: `no node that stays has room for ${podName(p)} (short of ${r.shortage})`,
        });
        continue;
      }
      cap.put(id, r.slot, batch);
      if (singleReplica(p))
        found.push({
          pod: p,
          reason: 'single-replica',
          detail: `${p.owner!.kind} ${p.owner!.namespace}/${p.owner!.name} runs 1 replica${p.pdbs.length ? '' : ' without a PodDisruptionBudget'}: down until its pod is Ready on another node`,
        });
    }
    return null;
  };

  const drained = new Uint8Array(n);
  const batches: PlannedBatch[] = [];
  let first = 0;
  for (let k = 1; ; k++) {
    while (first < n && drained[first]) first++;
    if (first >= n) break;
    const nodes = [first];
    touched = [];
    const found: { pod: ModelPod; reason: OutageReason; detail: string; node: number }[] = [];
    const evicted: number[] = [...cap.podsOn[first]!];
    addLoad(loadOf(first));
    const blockedBy = touched.find((b) => blockedIdx.has(b));
    // The rounds a batch may take, or more if its first node alone needs them (a PDB with more pods
    // on it than it allows drains round by round): the other nodes may use them too.
    let budget = roundsPerBatch;
    for (const b of touched)
      if (allowed[b]! > 0) budget = Math.max(budget, Math.ceil(count[b]! / allowed[b]!));
    const own: { pod: ModelPod; reason: OutageReason; detail: string }[] = [];
    drain(first, k, true, own);
    for (const f of own) found.push({ ...f, node: first });
    cap.commit();

    const rejections = new Map<string, { bound: BatchBound; times: number }>();
    const reject = (key: string, bound: BatchBound) => {
      const r = rejections.get(key);
      if (r) r.times++;
      else rejections.set(key, { bound, times: 1 });
    };
    let full = false;
    if (blockedBy === undefined) {
      for (let y = first + 1; y < n; y++) {
        if (drained[y]) continue;
        if (nodes.length >= maxPerBatch) {
          full = true;
          break;
        }
        if (cap.received[y] === k) {
          reject('placement', { kind: 'placement' });
          continue;
        }
        const load = loadOf(y);
        const exceeded = over(load, budget);
        if (exceeded >= 0) {
          const b = model.pdbs[exceeded]!;
          reject(`pdb ${exceeded}`, { kind: 'pdb', pdb: pdbName(b), allowed: allowed[exceeded]! });
          continue;
        }
        const mark = cap.mark();
        const theirs: { pod: ModelPod; reason: OutageReason; detail: string }[] = [];
        const before = [...cap.podsOn[y]!];
        const fail = drain(y, k, false, theirs);
        if (fail) {
          cap.rollback(mark);
          reject(`capacity ${fail.shortage}`, {
            kind: 'capacity',
            shortage: fail.shortage,
            pod: podName(fail.pod),
          });
          continue;
        }
        cap.commit();
        addLoad(load);
        nodes.push(y);
        evicted.push(...before);
        for (const f of theirs) found.push({ ...f, node: y });
      }
    }

    // -- what the batch is, and why it is not bigger
    let bound: BatchBound;
    if (blockedBy !== undefined) bound = { kind: 'blocked', pdb: pdbName(model.pdbs[blockedBy]!) };
    else if (full) bound = { kind: 'max-unavailable', max: maxPerBatch };
    else {
      let best: { bound: BatchBound; times: number } | undefined;
      for (const r of rejections.values()) if (!best || r.times > best.times) best = r;
      bound = best?.bound ?? { kind: 'nodes-left' };
    }
    let rounds = 1;
    for (const b of touched)
      if (allowed[b]! > 0) rounds = Math.max(rounds, Math.ceil(count[b]! / allowed[b]!));
    let grace = 0;
    for (const id of evicted) {
      const p = cap.pods[id]!;
      grace = Math.max(grace, p.graceSeconds);
      if (!movedOnce[id] && cap.podSlot[id]! >= 0) {
        movedOnce[id] = 1;
        if (id < model.pods.length) add(moved, p.requests);
      }
      if (cap.podSlot[id] === -1 && id < model.pods.length) add(gone, p.requests);
    }
    const batch: PlannedBatch = {
      index: k,
      nodes: nodes.map((i) => model.workers[i]!.name),
      pods: evicted.length,
      rounds,
      graceSeconds: grace,
      bound,
      scaleUp: [],
      restore: [],
    };
    for (const s of surged) {
      if (count[s.index]! === 0) continue;
      if (s.firstBatch === 0) s.firstBatch = k;
      s.lastBatch = k;
    }
    for (const f of found) outage(f.pod, f.reason, model.workers[f.node]!.name, k, f.detail);
    batches.push(batch);
    for (const b of touched) count[b] = 0;
    for (const i of nodes) {
      drained[i] = 1;
      if (opts.strategy === 'replace') cap.activate(cap.replacementOf(i));
    }
    cap.commit();
  }
  for (const s of surged) {
    if (s.firstBatch === 0) continue;
    batches[s.firstBatch - 1]!.scaleUp.push(ownerName(s.workload));
    batches[s.lastBatch - 1]!.restore.push(ownerName(s.workload));
  }

  // Spare room: what is free on the workers and surge workers at the start, plus what left for good.
  const spare = { cpu: 0, memory: 0, pods: 0 };
  for (const w of model.workers) {
    add(spare, w.allocatable);
    add(spare, w.fixed, -1);
  }
  for (const p of model.pods) add(spare, p.requests, -1);
  for (let s = 0; s < surgeCount; s++) {
    add(spare, like!.allocatable);
    add(spare, like!.fixed, -1);
  }
  add(spare, gone);

  return {
    batches,
    outages,
    blocked,
    surged: surged.filter((s) => s.firstBatch > 0).map(({ index: _, ...s }) => s),
    surge: {
      nodes: surgeCount,
      pool: pool.map((w) => w.name),
      shape: like && surgeCount > 0 ? { allocatable: like.allocatable, fixed: like.fixed } : null,
    },
    roundsPerBatch,
    pdbLoad: model.pdbs.flatMap((b, i) => {
      // The pods there are now; an extra replica may never be evicted.
      const pods = podsOfPdb[i]!.filter((id) => id < model.pods.length).length;
      return pods > 0 && allowed[i]! > 0 ? [{ pdb: pdbName(b), pods, allowed: allowed[i]! }] : [];
    }),
    moved,
    spare,
  };
}

function outageDetail(p: ModelPod, reason: OutageReason): string {
  switch (reason) {
    case 'bare-pod':
      return `${podName(p)} has no controller: evicted, nothing recreates it`;
    case 'local-volume':
      return `${podName(p)} keeps its data on the node-local volume ${p.pin?.kind === 'local-volume' ? p.pin.volume : '?'}: it cannot start elsewhere`;
    case 'node-name':
      return `${podName(p)} is pinned to ${p.node} by name (${p.pin?.kind === 'node-name' ? p.pin.field : '?'}): it stays Pending once the node is gone`;
    case 'no-node-fits':
      return `no node that stays matches the node selector, affinity and tolerations of ${podName(p)}`;
    case 'no-room':
    case 'single-replica':
      return podName(p);
  }
}
