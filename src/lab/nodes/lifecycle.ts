/**
 * The cluster-side controllers that react to nodes: the node lifecycle controller (a node whose
 * Lease stops being renewed becomes Unknown and unreachable, node conditions become taints, pods
 * on a node that is not Ready stop being Ready), the pod garbage collector (pods bound to a node
 * that no longer exists) and the scheduler (binds pending pods to nodes with room). Pure.
 */
import { type KObj, metaOf } from '../apiserver/object.js';
import { type NodeView, schedule, type Taint, taintsOf } from './schedule.js';
import {
  type Action,
  type Condition,
  condition,
  isActive,
  isPodReady,
  isTerminating,
  type Memory,
  nameOf,
  nodeNameOf,
  nodePath,
  nsOf,
  podPath,
  podPhase,
  spec,
  status,
  type Timings,
  timestamp,
  uidOf,
  type World,
} from './world.js';

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';
export const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** When the node's kubelet was last heard of: its Lease renewal, or when the controller first saw it. */
function lastHeard(node: KObj, world: World, mem: Memory): number {
  const lease = world.leases.find((l) => nameOf(l) === nameOf(node));
  const renew = Date.parse(spec(lease ?? { metadata: {} }).renewTime ?? '');
  if (Number.isFinite(renew)) return renew;
  return mem.nodeSeen.get(nameOf(node)) ?? world.now;
}

/** The taints the lifecycle controller wants for a node in this Ready state (others are kept). */
export function desiredTaints(node: KObj, ready: 'True' | 'False' | 'Unknown'): Taint[] {
  const managed = new Set([NOT_READY, UNREACHABLE, UNSCHEDULABLE]);
  const current = taintsOf(node);
  const keep = current.filter((t) => !managed.has(t.key));
  const want: Taint[] = [];
  if (ready === 'False')
    want.push({ key: NOT_READY, effect: 'NoSchedule' }, { key: NOT_READY, effect: 'NoExecute' });
  if (ready === 'Unknown')
    want.push({ key: UNREACHABLE, effect: 'NoSchedule' }, { key: UNREACHABLE, effect: 'NoExecute' });
  if (spec(node).unschedulable === true) want.push({ key: UNSCHEDULABLE, effect: 'NoSchedule' });
  // Keep a taint as it was (with its timeAdded) when it stays.
  const merged = want.map((w) => current.find((c) => c.key === w.key && c.effect === w.effect) ?? w);
  return [...keep, ...merged];
}

function sameTaints(a: Taint[], b: Taint[]): boolean {
  const key = (t: Taint) => `${t.key}=${t.value ?? ''}:${t.effect}`;
  return a.length === b.length && a.map(key).sort().join() === b.map(key).sort().join();
}

export function nodeLifecycleActions(world: World, mem: Memory, t: Timings): Action[] {
  const actions: Action[] = [];
  for (const node of world.nodes) {
    const name = nameOf(node);
    if (!mem.nodeSeen.has(name)) mem.nodeSeen.set(name, world.now);
    const cond = condition(node, 'Ready');
    let ready: 'True' | 'False' | 'Unknown' =
      cond?.status === 'True' ? 'True' : cond?.status === 'Unknown' ? 'Unknown' : 'False';
    const silentFor = world.now - lastHeard(node, world, mem);
    if (silentFor > t.nodeMonitorGracePeriodMs && ready !== 'Unknown') {
      ready = 'Unknown';
      const conds = status(node).conditions;
      const existing: Condition[] = Array.isArray(conds) ? conds : [];
      const at = timestamp(world.now);
      const unknown = (type: string): Condition => ({
        ...(existing.find((c) => c?.type === type) ?? { type }),
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        lastTransitionTime: at,
      });
      const types = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
      actions.push({
        kind: 'patch',
        path: nodePath(name, 'status'),
        patch: {
          status: {
            conditions: [...existing.filter((c) => !types.includes(c?.type)), ...types.map(unknown)],
          },
        },
        why: `node ${name}: no Lease renewal for ${Math.round(silentFor / 1000)} s`,
      });
    }
    const taints = desiredTaints(node, ready);
    if (!sameTaints(taints, taintsOf(node))) {
      const stamped = taints.map((tt) =>
        tt.effect === 'NoExecute' && !('timeAdded' in tt) ? { ...tt, timeAdded: timestamp(world.now) } : tt,
      );
      actions.push({
        kind: 'patch',
        path: nodePath(name),
        patch: { spec: { taints: stamped } },
        why: `node ${name} Ready=${ready}: taints`,
      });
    }
    if (ready !== 'True') {
      for (const pod of world.pods) {
        if (nodeNameOf(pod) !== name || !isPodReady(pod) || isTerminating(pod)) continue;
        const conds: Condition[] = status(pod).conditions ?? [];
        actions.push({
          kind: 'patch',
          path: podPath(pod, 'status'),
          patch: {
            status: {
              conditions: conds.map((c) =>
                c?.type === 'Ready' || c?.type === 'ContainersReady'
                  ? { ...c, status: 'False', lastTransitionTime: timestamp(world.now) }
                  : c,
              ),
            },
          },
          why: `node ${name} is not ready: ${nameOf(pod)} marked not ready`,
        });
      }
    }
  }
  return actions;
}

/** PodGC: pods bound to a node that does not exist are deleted at once. */
export function orphanedPodActions(world: World): Action[] {
  const nodes = new Set(world.nodes.map(nameOf));
  return world.pods
    .filter((p) => {
      const n = nodeNameOf(p);
      return n !== undefined && !nodes.has(n);
    })
    .map((p) => ({
      kind: 'delete' as const,
      path: podPath(p),
      gracePeriodSeconds: 0,
      uid: uidOf(p),
      why: `pod ${nsOf(p)}/${nameOf(p)} is bound to a node that no longer exists`,
    }));
}

function unschedulableCondition(pod: KObj, message: string, now: number): Action[] {
  const cur = condition(pod, 'PodScheduled');
  if (cur?.status === 'False' && cur.message === message) return [];
  return [
    {
      kind: 'patch',
      path: podPath(pod, 'status'),
      patch: {
        status: {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message,
              lastProbeTime: null,
              lastTransitionTime: timestamp(now),
            },
          ],
        },
      },
      why: `pod ${nsOf(pod)}/${nameOf(pod)} is unschedulable`,
    },
  ];
}

/** Binds pending pods, oldest first, accounting for the pods bound earlier in the same pass. */
export function schedulerActions(world: World): Action[] {
  const views: NodeView[] = world.nodes.map((node) => ({
    node,
    // Terminating pods still hold their resources until they are gone.
    pods: world.pods.filter(
      (p) => nodeNameOf(p) === nameOf(node) && podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed',
    ),
  }));
  const pending = world.pods
    .filter((p) => nodeNameOf(p) === undefined && isActive(p))
    .sort(
      (a, b) =>
        (metaOf(a).creationTimestamp ?? '').localeCompare(metaOf(b).creationTimestamp ?? '') ||
        nameOf(a).localeCompare(nameOf(b)),
    );
  const actions: Action[] = [];
  for (const pod of pending) {
    const placed = schedule(pod, views);
    if (placed.node === undefined) {
      actions.push(...unschedulableCondition(pod, placed.message, world.now));
      continue;
    }
    views.find((v) => nameOf(v.node) === placed.node)?.pods.push(pod);
    actions.push({
      kind: 'bind',
      namespace: nsOf(pod),
      name: nameOf(pod),
      node: placed.node,
      why: `schedule ${nsOf(pod)}/${nameOf(pod)}`,
    });
  }
  return actions;
}

function ipv4(text: string): number | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m) return undefined;
  return ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
}

function ipv4Text(v: number): string {
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

/**
 * Node IPAM (kube-controller-manager --allocate-node-cidrs): a node without a pod CIDR gets the
 * first free /24 (or the cluster CIDR's own size, when smaller) of the IPv4 cluster CIDR.
 */
export function nodeIpamActions(world: World, clusterCidr: string | undefined): Action[] {
  const m = clusterCidr ? /^([\d.]+)\/(\d+)$/.exec(clusterCidr) : null;
  const base = m ? ipv4(m[1]!) : undefined;
  if (!m || base === undefined) return [];
  const prefix = Number(m[2]);
  const size = Math.max(24, prefix);
  const count = 2 ** Math.min(16, size - prefix);
  const used = new Set(
    world.nodes.map((n) => spec(n).podCIDR).filter((c): c is string => typeof c === 'string'),
  );
  const actions: Action[] = [];
  let i = 0;
  for (const node of world.nodes) {
    if (typeof spec(node).podCIDR === 'string') continue;
    let cidr: string | undefined;
    for (; i < count; i++) {
      const candidate = `${ipv4Text((base + i * 2 ** (32 - size)) >>> 0)}/${size}`;
      if (!used.has(candidate)) {
        cidr = candidate;
        used.add(candidate);
        break;
      }
    }
    if (!cidr) break;
    actions.push({
      kind: 'patch',
      path: nodePath(nameOf(node)),
      patch: { spec: { podCIDR: cidr, podCIDRs: [cidr] } },
      why: `node ${nameOf(node)} gets pod CIDR ${cidr}`,
    });
  }
  return actions;
}
