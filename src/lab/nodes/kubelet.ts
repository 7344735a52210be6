/**
 * What a kubelet does for its node, as far as the API sees it: renews the node's Lease, posts the
 * Ready condition, starts the pods bound to it (Running and Ready after a delay) and finishes the
 * ones being deleted (a delete with grace 0 once their containers have stopped). Pure: World in,
 * Actions out; timers live in Memory.
 */
import { createHash } from 'node:crypto';
import { type KObj, metaOf } from '../apiserver/object.js';
import { runsForReal } from './canary.js';
import {
  type Action,
  type Address,
  apiPath,
  type Condition,
  condition,
  type Fields,
  isActive,
  isNodeReady,
  isPodReady,
  isTerminating,
  type Memory,
  type NodeBehaviour,
  nameOf,
  nodeNameOf,
  nodePath,
  podPath,
  podPhase,
  type Status,
  spec,
  status,
  type Timings,
  timestamp,
  uidOf,
  type World,
} from './world.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const LEASE_DURATION_SECONDS = 40;

/** metav1.MicroTime, as Lease renewTime carries it. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function leaseActions(node: KObj, world: World, mem: Memory, t: Timings): Action[] {
  const name = nameOf(node);
  const lease = world.leases.find((l) => nameOf(l) === name);
  const last = mem.leaseRenewed.get(name);
  if (lease && last !== undefined && world.now - last < t.leaseRenewMs) return [];
  mem.leaseRenewed.set(name, world.now);
  if (!lease) {
    return [
      {
        kind: 'create',
        path: apiPath('coordination.k8s.io/v1', 'leases', NODE_LEASE_NAMESPACE),
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: {
            name,
            namespace: NODE_LEASE_NAMESPACE,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: uidOf(node) }],
          },
          spec: {
            holderIdentity: name,
            leaseDurationSeconds: LEASE_DURATION_SECONDS,
            renewTime: microTime(world.now),
          },
        },
        why: `kubelet ${name} creates its Lease`,
      },
    ];
  }
  return [
    {
      kind: 'patch',
      path: apiPath('coordination.k8s.io/v1', 'leases', NODE_LEASE_NAMESPACE, name),
      patch: { spec: { holderIdentity: name, renewTime: microTime(world.now) } },
      why: `kubelet ${name} renews its Lease`,
    },
  ];
}

const NOT_READY_MESSAGE =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

/** The node's conditions with Ready (and the pressure conditions) as this kubelet reports them. */
export function nodeConditions(node: KObj, ready: boolean, now: number): Condition[] {
  const conds = status(node).conditions;
  const existing: Condition[] = Array.isArray(conds) ? conds : [];
  const at = timestamp(now);
  const mine = (type: string, st: 'True' | 'False', reason: string, message: string): Condition => {
    const prev = existing.find((c) => c?.type === type);
    return {
      type,
      status: st,
      reason,
      message,
      lastHeartbeatTime: at,
      lastTransitionTime: prev?.status === st && prev.lastTransitionTime ? prev.lastTransitionTime : at,
    };
  };
  const owned = [
    mine('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    mine('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    mine('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    ready
      ? mine('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')
      : mine('Ready', 'False', 'KubeletNotReady', NOT_READY_MESSAGE),
  ];
  const ownedTypes = new Set(owned.map((c) => c.type));
  return [...existing.filter((c) => !ownedTypes.has(c?.type)), ...owned];
}

function nodeStatusActions(node: KObj, world: World, mem: Memory, t: Timings, b: NodeBehaviour): Action[] {
  const name = nameOf(node);
  const seen = mem.nodeSeen.get(name) ?? world.now;
  mem.nodeSeen.set(name, seen);
  const ready = !b.neverReady && world.now - seen >= t.nodeReadyDelayMs;
  const cur = condition(node, 'Ready');
  const want = ready ? 'True' : 'False';
  const last = mem.statusPosted.get(name);
  if (cur?.status === want && last !== undefined && world.now - last < t.nodeStatusPeriodMs) return [];
  mem.statusPosted.set(name, world.now);
  return [
    {
      kind: 'patch',
      path: nodePath(name, 'status'),
      patch: { status: { conditions: nodeConditions(node, ready, world.now) } },
      why: `kubelet ${name} posts Ready=${want}`,
    },
  ];
}

function internalIp(node: KObj): string | undefined {
  const a = status(node).addresses;
  const addrs: Address[] = Array.isArray(a) ? a : [];
  return addrs.find((a) => a?.type === 'InternalIP')?.address;
}

/** The next free address of the node's IPv4 pod CIDR (the CNI's job; enough for a lab). */
function allocateIp(node: KObj, pod: KObj, mem: Memory): string | undefined {
  const uid = uidOf(pod);
  const known = mem.podIp.get(uid);
  if (known) return known;
  const cidr = spec(node).podCIDR;
  const m = typeof cidr === 'string' ? /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr) : null;
  if (!m) return undefined;
  const base = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const size = 2 ** (32 - Number(m[5]));
  const name = nameOf(node);
  const n = mem.nextIp.get(name) ?? 2;
  mem.nextIp.set(name, n + 1 >= size - 1 ? 2 : n + 1);
  const v = (base + (n % (size - 2))) >>> 0;
  const ip = [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
  mem.podIp.set(uid, ip);
  return ip;
}

function podConditions(pod: KObj, ready: boolean, now: number): Condition[] {
  const at = timestamp(now);
  const conds = status(pod).conditions;
  const prev: Condition[] = Array.isArray(conds) ? conds : [];
  const c = (type: string, st: boolean): Condition => {
    const s = st ? 'True' : 'False';
    const p = prev.find((x) => x?.type === type);
    return {
      type,
      status: s,
      lastProbeTime: null,
      lastTransitionTime: p?.status === s ? p.lastTransitionTime : at,
    };
  };
  return [
    c('PodReadyToStartContainers', true),
    c('Initialized', true),
    c('Ready', ready),
    c('ContainersReady', ready),
    c('PodScheduled', true),
  ];
}

function containerStatuses(pod: KObj, startedAt: string, ready: boolean): Fields[] {
  const cs = spec(pod).containers;
  const containers: Fields[] = Array.isArray(cs) ? cs : [];
  return containers.map((c) => ({
    name: c?.name,
    image: c?.image,
    imageID: '',
    containerID: `containerd://${createHash('sha256')
      .update(`${uidOf(pod)}/${String(c?.name)}`)
      .digest('hex')}`,
    ready,
    started: true,
    restartCount: 0,
    state: { running: { startedAt } },
  }));
}

function runningStatus(pod: KObj, node: KObj, mem: Memory, now: number, ready: boolean): Status {
  const hostIP = internalIp(node);
  const podIP = spec(pod).hostNetwork === true ? hostIP : allocateIp(node, pod, mem);
  const started = status(pod).startTime;
  const startedAt = typeof started === 'string' ? started : timestamp(now);
  return {
    phase: 'Running',
    conditions: podConditions(pod, ready, now),
    ...(hostIP && { hostIP, hostIPs: [{ ip: hostIP }] }),
    ...(podIP && { podIP, podIPs: [{ ip: podIP }] }),
    startTime: startedAt,
    containerStatuses: containerStatuses(pod, startedAt, ready),
  };
}

/** When the containers of a terminating pod have stopped. */
export function finishTime(pod: KObj, seenTerminatingAt: number, t: Timings, b: NodeBehaviour): number {
  const deadline = Date.parse(metaOf(pod).deletionTimestamp as string);
  const graceEnd = Number.isFinite(deadline) ? deadline : seenTerminatingAt;
  if (b.slowDrain) {
    return b.slowDrain.graceSeconds === undefined
      ? Math.max(graceEnd, seenTerminatingAt)
      : seenTerminatingAt + b.slowDrain.graceSeconds * 1000;
  }
  return Math.min(graceEnd, seenTerminatingAt + t.terminationDelayMs);
}

function podActions(node: KObj, world: World, mem: Memory, t: Timings, b: NodeBehaviour): Action[] {
  const name = nameOf(node);
  const actions: Action[] = [];
  // The kubelet only calls its pods ready while its node is (the node lifecycle controller
  // marks them not ready otherwise, and the two must not undo each other).
  const nodeReady = isNodeReady(node);
  const networkUp = !b.neverReady;
  for (const pod of world.pods) {
    if (nodeNameOf(pod) !== name) continue;
    const uid = uidOf(pod);
    const real = runsForReal(pod);
    const container = world.containers?.get(uid);
    if (isTerminating(pod)) {
      const seen = mem.podTerminating.get(uid) ?? world.now;
      mem.podTerminating.set(uid, seen);
      // A real container is finished when the runtime stopped it (preStop, SIGTERM, at worst
      // SIGKILL at the end of its grace), not after the lab's fixed termination delay.
      const stopped = real && container !== undefined ? container === 'stopped' : true;
      if (
        stopped &&
        world.now >= (real && container !== undefined && !b.slowDrain ? 0 : finishTime(pod, seen, t, b))
      ) {
        actions.push({
          kind: 'delete',
          path: podPath(pod),
          gracePeriodSeconds: 0,
          uid,
          why: `kubelet ${name}: containers of ${nameOf(pod)} stopped`,
        });
      }
      continue;
    }
    if (!isActive(pod)) continue;
    const bound = mem.podBound.get(uid) ?? world.now;
    mem.podBound.set(uid, bound);
    const phase = podPhase(pod);
    if (phase === 'Pending') {
      // Without a pod network only host-network pods can start (sandbox creation fails otherwise).
      if (world.now - bound < t.podStartDelayMs || !(networkUp || spec(pod).hostNetwork === true)) continue;
      actions.push({
        kind: 'patch',
        path: podPath(pod, 'status'),
        // A real container is Ready only once its readiness probe answered (a later pass).
        patch: {
          status: runningStatus(pod, node, mem, world.now, nodeReady && (!real || container === 'ready')),
        },
        why: `kubelet ${name} started ${nameOf(pod)}`,
      });
    } else if (phase === 'Running' && nodeReady && !isPodReady(pod) && (!real || container === 'ready')) {
      actions.push({
        kind: 'patch',
        path: podPath(pod, 'status'),
        patch: { status: runningStatus(pod, node, mem, world.now, true) },
        why: `kubelet ${name}: ${nameOf(pod)} ready again`,
      });
    }
  }
  return actions;
}

/** Everything the kubelet of `node` does in one pass; nothing when it is stopped. */
export function kubeletActions(
  node: KObj,
  world: World,
  mem: Memory,
  t: Timings,
  b: NodeBehaviour,
): Action[] {
  if (b.kubeletStopped) return [];
  return [
    ...leaseActions(node, world, mem, t),
    ...nodeStatusActions(node, world, mem, t, b),
    ...podActions(node, world, mem, t, b),
  ];
}

/** Forgets timers of pods and nodes that no longer exist, so memory does not grow without bound. */
export function pruneMemory(world: World, mem: Memory): void {
  const uids = new Set(world.pods.map(uidOf));
  for (const m of [mem.podBound, mem.podTerminating, mem.podIp]) {
    for (const k of m.keys()) if (!uids.has(k)) m.delete(k);
  }
  const nodes = new Set(world.nodes.map(nameOf));
  for (const m of [mem.nodeSeen, mem.leaseRenewed, mem.statusPosted, mem.nextIp]) {
    for (const k of m.keys()) if (!nodes.has(k)) m.delete(k);
  }
}
