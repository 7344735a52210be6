/**
 * Drains cordoned nodes together (a worker batch, or the one node of a control-plane swap) through
 * the Eviction API only: at most `concurrency` nodes at a time, never a delete, never a pod evicted
 * twice, and done only when every evicted controller-owned pod's replacement is Ready on a node
 * outside the drained set. It stops at a gate (FerryError 'gate', exit 3) before the first
 * eviction when a pod has no controller (unless the operator accepted that), when two budgets
 * select a pod, and at the deadline, naming what held it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { EvictOutcome, KubeAdminPort, PodView } from '../ports/run.js';
import { gateError } from '../ports/stop.js';
import { fromLabelSelector, matchesLabels } from '../util/label-selector.js';

export type DrainPort = Pick<KubeAdminPort, 'podsOnNode' | 'evict' | 'listPods' | 'listPdbs' | 'getPdb'>;

/** "ns/ReplicaSet/web-abc": the controller whose pods must come back. */
export type OwnerKey = string;

export interface EvictedPod {
  node: string;
  /** "ns/name" */
  pod: string;
  uid: string;
  controller: { kind: string; name: string } | null;
}

/** What the drain reports as it goes; the run journals each (per-node progress inside a batch). */
export type DrainEvent =
  /** Ready pods per controller before the first eviction: the count that must be back. */
  | { kind: 'baseline'; ready: Record<OwnerKey, number> }
  | { kind: 'bare-pods-accepted'; pods: string[] }
  | { kind: 'evicted'; evicted: EvictedPod }
  | { kind: 'blocked'; node: string; pod: string; pdb: string | undefined; message: string }
  | { kind: 'node-drained'; node: string; ms: number }
  | { kind: 'replacements-ready'; ms: number; owners: number }
  /**
   * A controller whose replacement pods are pinned (a kubernetes.io/hostname nodeSelector,
   * required node affinity naming nodes) to drained nodes only: they cannot come back elsewhere (the plan lists them as an outage), so the
   * drain does not wait for them.
   */
  | { kind: 'not-replaceable'; owner: OwnerKey; node: string };

/**
 * How a refused eviction (429) is retried:
 * - `watch`: the refusing budget is read and the eviction retried as soon as it allows a
 *   disruption (the disruption controller restores it within milliseconds of a replacement
 *   becoming Ready); without a budget to read, or after the fallback, retried anyway. A budget that
 *   stays at 0 is read less and less often (`pollMs` doubling up to `maxPollMs`) and the
 *   evictions retried less and less often (`fallbackMs` doubling up to `maxFallbackMs`), so a
 *   node blocked for the whole deadline costs about one request a second, not the seventeen a
 *   fixed 50 ms poll cost on a real API server; any eviction that goes through starts over fast;
 * - `fixed`: after `retryMs`, whatever the budget says (ferry before budget-aware retries; the benchmark's baseline).
 */
export type DrainPacing =
  | { kind: 'watch'; pollMs: number; fallbackMs: number; maxPollMs?: number; maxFallbackMs?: number }
  | { kind: 'fixed'; retryMs: number };

export const DEFAULT_PACING: DrainPacing = {
  kind: 'watch',
  pollMs: 50,
  fallbackMs: 1_000,
  maxPollMs: 1_000,
  maxFallbackMs: 8_000,
};
export { DEFAULT_DRAIN_CONCURRENCY } from '../plan/drain-batch-step.js';

export interface DrainNodesOptions {
  nodes: string[];
  concurrency: number;
  timeoutMs: number;
  signal: AbortSignal;
  /** The operator accepted evicting pods without a controller (`--evict-bare-pods`). */
  evictBarePods: boolean;
  /** What an earlier attempt of the same step did (the journal): never evicted again. */
  prior?: { evicted: EvictedPod[]; baseline: Record<OwnerKey, number> | undefined };
  record(e: DrainEvent): void;
  pacing?: DrainPacing;
  /** Pause while pods terminate, and between looks for replacements. Default 100 ms. */
  pollMs?: number;
}

export interface DrainNodesResult {
  nodes: { node: string; evicted: string[]; ms: number }[];
  /** From the last node drained to every replacement Ready. */
  replacementsMs: number;
}

const key = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/** Controllers that put a replacement back: a ReplicaSet (any name), a StatefulSet (the same name). */
function ownerKey(p: PodView): OwnerKey | undefined {
  const c = p.controller;
  if (!c || (c.kind !== 'ReplicaSet' && c.kind !== 'StatefulSet')) return undefined;
  return `${p.namespace}/${c.kind}/${c.name}`;
}

const evictable = (p: PodView) => !p.ignoredByDrain;

/**
 * A pod with no controller whose loss matters: running or pending. A finished one (Succeeded,
 * Failed) holds no running work, and kubectl drain removes it without --force; so does ferry,
 * through the Eviction API like every other pod.
 */
const bareAndLive = (p: PodView) => p.controller === null && !p.terminating && !p.finished;

export async function drainNodes(kube: DrainPort, o: DrainNodesOptions): Promise<DrainNodesResult> {
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  const pacing = o.pacing ?? DEFAULT_PACING;
  const pollMs = o.pollMs ?? 100;
  const drained = new Set(o.nodes);
  const evicted: EvictedPod[] = [...(o.prior?.evicted ?? [])];
  const evictedUids = new Set(evicted.map((e) => e.uid));

  // Look before the first eviction: a bare pod stops the batch with nothing half done.
  const before = (await Promise.all(o.nodes.map((n) => kube.podsOnNode(n)))).flat().filter(evictable);
  const bare = before.filter(bareAndLive).map(key);
  if (bare.length > 0 && !o.evictBarePods) {
    throw gateError(
      `${bare.length} pod(s) on ${o.nodes.join(', ')} have no controller: evicted, nothing brings them back (${bare.slice(0, 5).join(', ')}${bare.length > 5 ? ', …' : ''}); nothing was evicted`,
      'move or recreate them under a Deployment or StatefulSet, or accept losing them with ferry run --resume --evict-bare-pods (journaled)',
    );
  }
  if (bare.length > 0) o.record({ kind: 'bare-pods-accepted', pods: bare });
  let baseline = o.prior?.baseline;
  if (!baseline) {
    baseline = await readyByOwner(kube, before, () => true);
    o.record({ kind: 'baseline', ready: baseline });
  }

  const ctl = new AbortController();
  const onAbort = () => ctl.abort(o.signal.reason);
  o.signal.addEventListener('abort', onAbort, { once: true });
  const queue = [...o.nodes];
  const results: DrainNodesResult['nodes'] = [];
  const one = async (): Promise<void> => {
    for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
      const t0 = Date.now();
      const mine = await drainOne(n);
      const ms = Date.now() - t0;
      results.push({ node: n, evicted: mine, ms });
      o.record({ kind: 'node-drained', node: n, ms });
    }
  };

  const drainOne = async (node: string): Promise<string[]> => {
    const mine: string[] = [];
    const blocked = new Map<string, { pdb: string | undefined; message: string }>();
    // Consecutive passes in which nothing was evicted and a budget refused: the back-off's exponent.
    let refusedPasses = 0;
    const overdue = (pods: PodView[]) => {
      if (Date.now() >= deadline) throw deadlineStop(node, o.timeoutMs, pods, blocked);
    };
    for (;;) {
      ctl.signal.throwIfAborted();
      const pods = (await kube.podsOnNode(node)).filter(evictable);
      if (pods.length === 0) return mine;
      const waitOn = new Set<string>();
      let refused = false;
      let progressed = false;
      for (const p of pods) {
        // Terminating, or evicted by this step before (an earlier attempt, a kill): wait for it to go.
        if (p.terminating || (p.uid !== '' && evictedUids.has(p.uid))) continue;
        overdue(pods);
        ctl.signal.throwIfAborted();
        const r: EvictOutcome = await kube.evict(p.namespace, p.name);
        switch (r.kind) {
          case 'evicted': {
            const e: EvictedPod = { node, pod: key(p), uid: p.uid, controller: p.controller };
            evictedUids.add(p.uid);
            evicted.push(e);
            mine.push(e.pod);
            blocked.delete(e.pod);
            progressed = true;
            o.record({ kind: 'evicted', evicted: e });
            break;
          }
          case 'gone':
            break;
          case 'blocked':
            refused = true;
            if (r.pdb) waitOn.add(r.pdb);
            if (!blocked.has(key(p)))
              o.record({ kind: 'blocked', node, pod: key(p), pdb: r.pdb, message: r.message });
            blocked.set(key(p), { pdb: r.pdb, message: r.message });
            break;
          case 'several-budgets':
            throw await severalBudgets(kube, p, r.message);
          default:
            return r satisfies never;
        }
      }
      overdue(pods);
      const left = deadline - Date.now();
      refusedPasses = refused && !progressed ? refusedPasses + 1 : 0;
      if (!refused) await sleep(Math.min(pollMs, left), undefined, { signal: ctl.signal });
      else if (pacing.kind === 'fixed')
        await sleep(Math.min(pacing.retryMs, left), undefined, { signal: ctl.signal });
      else {
        const fallback = backedOff(pacing.fallbackMs, pacing.maxFallbackMs, refusedPasses - 1);
        await untilBudgetAllows(
          kube,
          [...waitOn],
          Math.min(fallback, left),
          pacing,
          refusedPasses - 1,
          ctl.signal,
        );
      }
    }
  };

  const workers = Array.from({ length: Math.max(1, Math.min(o.concurrency, o.nodes.length)) }, one);
  try {
    await allOrFirstError(workers, ctl);
  } finally {
    o.signal.removeEventListener('abort', onAbort);
  }

  const t1 = Date.now();
  const owners = await waitForReplacements(kube, {
    record: o.record,
    baseline,
    evicted,
    drained,
    deadline,
    timeoutMs: o.timeoutMs,
    pollMs,
    signal: o.signal,
  });
  const replacementsMs = Date.now() - t1;
  o.record({ kind: 'replacements-ready', ms: replacementsMs, owners });
  return { nodes: o.nodes.map((n) => results.find((r) => r.node === n)!), replacementsMs };
}

/** Every worker to its end; on the first failure the others are stopped and awaited, then it is thrown. */
async function allOrFirstError(workers: Promise<void>[], ctl: AbortController): Promise<void> {
  let first: unknown;
  await Promise.all(
    workers.map((w) =>
      w.catch((err: unknown) => {
        // The first real failure wins over the aborts it causes in the siblings.
        if (first === undefined) first = err;
        ctl.abort(err);
      }),
    ),
  );
  if (first !== undefined) throw first;
}

/** Ready, not terminating pods per replacing controller of `pods`, counted over their namespaces. */
async function readyByOwner(
  kube: DrainPort,
  pods: PodView[],
  where: (p: PodView) => boolean,
): Promise<Record<OwnerKey, number>> {
  const owners = new Set(pods.flatMap((p) => ownerKey(p) ?? []));
  const out: Record<OwnerKey, number> = {};
  for (const ns of new Set(pods.map((p) => p.namespace))) {
    for (const p of await kube.listPods(ns)) {
      const k = ownerKey(p);
      if (!k || !owners.has(k)) continue;
      out[k] ??= 0;
      if (p.ready && !p.terminating && where(p)) out[k] += 1;
    }
  }
  for (const k of owners) out[k] ??= 0;
  return out;
}

/**
 * Until every controller has as many Ready pods outside the drained nodes as it had Ready before
 * the first eviction, and every evicted StatefulSet pod is back (same name, new uid) and Ready.
 * The pods are listed again on every pass: a StatefulSet pod's name says nothing about which pod it is.
 */
async function waitForReplacements(
  kube: DrainPort,
  w: {
    record: (e: DrainEvent) => void;
    baseline: Record<OwnerKey, number>;
    evicted: EvictedPod[];
    drained: Set<string>;
    deadline: number;
    timeoutMs: number;
    pollMs: number;
    signal: AbortSignal;
  },
): Promise<number> {
  const owners = Object.keys(w.baseline);
  const namespaces = new Set([
    ...owners.map((k) => k.split('/')[0]!),
    ...w.evicted.map((e) => e.pod.split('/')[0]!),
  ]);
  const pinned = new Set<OwnerKey>();
  for (;;) {
    w.signal.throwIfAborted();
    const pods = (await Promise.all([...namespaces].map((ns) => kube.listPods(ns)))).flat();
    const elsewhere = pods.filter(
      (p) => p.ready && !p.terminating && p.node !== '' && !w.drained.has(p.node),
    );
    for (const p of pods) {
      const k = ownerKey(p);
      if (!k || pinned.has(k) || !owners.includes(k)) continue;
      // Replaceable as long as one node its rules allow stays (the drained nodes are cordoned).
      if (p.pinnedTo === undefined || !p.pinnedTo.every((n) => w.drained.has(n))) continue;
      pinned.add(k);
      w.record({ kind: 'not-replaceable', owner: k, node: p.pinnedTo.join(', ') || p.node });
    }
    const missing: string[] = [];
    for (const k of owners) {
      if (pinned.has(k)) continue;
      const have = elsewhere.filter((p) => ownerKey(p) === k).length;
      if (have < w.baseline[k]!) {
        // Say why when the scheduler says it cannot place a replacement (a selector no node that
        // stays matches, a taint it does not tolerate, no capacity).
        const stuck = pods.find((p) => ownerKey(p) === k && !p.terminating && p.unschedulable);
        missing.push(
          `${k.replace('/', ' ')}: ${have} of ${w.baseline[k]} Ready elsewhere${stuck ? ` (${key(stuck)} unschedulable: ${stuck.unschedulable})` : ''}`,
        );
      }
    }
    for (const e of w.evicted) {
      if (e.controller?.kind !== 'StatefulSet') continue;
      if (pinned.has(`${e.pod.split('/')[0]}/StatefulSet/${e.controller.name}`)) continue;
      const back = elsewhere.some((p) => key(p) === e.pod && p.uid !== e.uid);
      if (!back) missing.push(`${e.pod}: not back Ready on another node`);
    }
    if (missing.length === 0) return owners.length;
    if (Date.now() >= w.deadline) {
      throw gateError(
        `the evicted pods' replacements were not Ready within ${Math.round(w.timeoutMs / 1000)} s: ${missing.slice(0, 5).join('; ')}${missing.length > 5 ? '; …' : ''}`,
        'check why the replacements do not start (capacity on the nodes that stay, node selectors, volumes), then run ferry run --resume',
      );
    }
    await sleep(Math.min(w.pollMs, w.deadline - Date.now()), undefined, { signal: w.signal });
  }
}

/** `base` doubled `n` times, at most `max` (no cap without one). */
function backedOff(base: number, max: number | undefined, n: number): number {
  const v = base * 2 ** Math.max(0, Math.min(n, 30));
  return max === undefined ? v : Math.min(v, Math.max(base, max));
}

/**
 * Resolves when one of `pdbs` allows a disruption, after `maxMs`, or at once without a budget to
 * read. The budgets are read at `pollMs`, then less often while they stay at 0 (up to `maxPollMs`).
 */
async function untilBudgetAllows(
  kube: DrainPort,
  pdbs: string[],
  maxMs: number,
  pace: { pollMs: number; maxPollMs?: number },
  /** How many times the reads have already backed off for this node (the passes before). */
  backedOffBefore: number,
  signal: AbortSignal,
): Promise<void> {
  const until = Date.now() + maxMs;
  if (pdbs.length === 0) {
    await sleep(Math.max(0, maxMs), undefined, { signal });
    return;
  }
  for (let reads = 0; ; reads++) {
    const wait = backedOff(pace.pollMs, pace.maxPollMs, backedOffBefore + reads);
    await sleep(Math.max(0, Math.min(wait, until - Date.now())), undefined, { signal });
    if (Date.now() >= until) return;
    for (const ref of pdbs) {
      const [ns, name] = ref.split('/') as [string, string];
      const b = await kube.getPdb(ns, name);
      if (!b || (b.disruptionsAllowed ?? 0) > 0) return;
    }
  }
}

function deadlineStop(
  node: string,
  timeoutMs: number,
  pods: PodView[],
  blocked: Map<string, { pdb: string | undefined; message: string }>,
) {
  const remaining = pods.map((p) => `${key(p)}${p.terminating ? ' (terminating)' : ''}`);
  const budgets = [...new Set([...blocked.values()].flatMap((b) => (b.pdb ? [b.pdb] : [])))];
  const first = [...blocked.values()][0];
  return gateError(
    `drain of node ${node} did not finish within ${Math.round(timeoutMs / 1000)} s: ${remaining.length} pod(s) left (${remaining.slice(0, 5).join(', ')}${remaining.length > 5 ? ', …' : ''})${
      budgets.length ? `; blocked by PodDisruptionBudget ${budgets.join(', ')}` : ''
    }${first ? `: ${first.message}` : ''}`,
    budgets.length
      ? `make room in ${budgets.join(', ')} (scale the workload up, or wait until its pods are healthy elsewhere), then run ferry run --resume; ferry never deletes pods past a budget`
      : 'check why the pods do not terminate (finalizers, a kubelet that does not answer), then run ferry run --resume',
  );
}

/** The 500 "more than one PodDisruptionBudget": a stop naming the budgets, never a retry. */
async function severalBudgets(kube: DrainPort, p: PodView, message: string) {
  const all = await kube.listPdbs(p.namespace).catch(() => []);
  const selecting = all
    .filter((b) => {
      const reqs = fromLabelSelector(b.selector);
      return reqs !== null && matchesLabels(reqs, p.labels);
    })
    .map(key);
  const named = selecting.length > 0 ? selecting.join(' and ') : 'several (ferry could not list them)';
  return gateError(
    `eviction of ${key(p)} refused: it is selected by more than one PodDisruptionBudget (${named}), which the Eviction API does not support (${message})`,
    `change the selectors of ${named} so that one budget covers each pod (ferry audit reports this as workload.pdb-overlap), then run ferry run --resume`,
  );
}
