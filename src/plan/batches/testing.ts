/**
 * Models for the batch planner's tests and benchmark: small hand-made ones (worker, pod, pdb),
 * and a seeded generator of large clusters shaped like real ones (pools with node selectors,
 * Deployments of 3–8 replicas under mixed PDBs, hostname spreading, a StatefulSet on local
 * volumes, a few single replicas and bare pods). Deterministic: same options, same model.
 */
import type { ClusterModel, ModelNode, ModelPdb, ModelPod, Owner, Scheduling, Vec } from './model.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

export function worker(name: string, o: Partial<ModelNode> = {}): ModelNode {
  return {
    name,
    labels: { 'kubernetes.io/hostname': name },
    taints: [],
    allocatable: { cpu: 4000, memory: 16 * GiB, pods: 110 },
    fixed: { cpu: 0, memory: 0, pods: 0 },
    unschedulable: false,
    ...o,
  };
}

export const ANYWHERE: Scheduling = { tolerations: [], nodeSelector: {}, required: [] };

export function deployment(namespace: string, name: string, replicas: number): Owner {
  return { kind: 'Deployment', namespace, name, replicas };
}

export function pod(name: string, node: string, o: Partial<ModelPod> = {}): ModelPod {
  return {
    namespace: 'default',
    name,
    node,
    requests: { cpu: 100, memory: 128 * MiB, pods: 1 },
    owner: deployment('default', name.replace(/-\d+$/, ''), 3),
    pdbs: [],
    scheduling: 0,
    spread: [],
    pin: null,
    graceSeconds: 30,
    ...o,
  };
}

export function pdb(name: string, allowed: number, o: Partial<ModelPdb> = {}): ModelPdb {
  return {
    namespace: 'default',
    name,
    allowed,
    source: 'status',
    allowedWithExtraReplica: allowed,
    workload: null,
    rule: `maxUnavailable ${allowed}`,
    ...o,
  };
}

export function model(m: Partial<ClusterModel>): ClusterModel {
  return { workers: [], pods: [], pdbs: [], schedulings: [ANYWHERE], ...m };
}

/** A small linear congruential generator: reproducible without a dependency. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface SyntheticOptions {
  workers: number;
  podsPerWorker?: number;
  pools?: number;
  seed?: number;
}

/** A cluster of `workers` workers and about `podsPerWorker` evictable pods on each. */
export function syntheticModel(o: SyntheticOptions): ClusterModel {
  const rnd = random(o.seed ?? 12);
  const pools = Math.max(1, o.pools ?? 4);
  const perWorker = o.podsPerWorker ?? 30;
  const pad = String(o.workers).length;
  const workers: ModelNode[] = [];
  const byPool: number[][] = Array.from({ length: pools }, () => []);
  for (let i = 0; i < o.workers; i++) {
    const name = `w-${String(i + 1).padStart(pad, '0')}`;
    const p = i % pools;
    byPool[p]!.push(i);
    workers.push(
      worker(name, {
        labels: { 'kubernetes.io/hostname': name, pool: `p${p}`, zone: `z${i % 3}` },
        allocatable: { cpu: 16_000, memory: 64 * GiB, pods: 110 },
        fixed: { cpu: 300, memory: 512 * MiB, pods: 3 },
      }),
    );
  }
  const schedulings: Scheduling[] = [
    ANYWHERE,
    ...Array.from({ length: pools }, (_, p) => ({ ...ANYWHERE, nodeSelector: { pool: `p${p}` } })),
  ];
  const pods: ModelPod[] = [];
  const pdbs: ModelPdb[] = [];
  const load = new Array<number>(o.workers).fill(0);
  const target = o.workers * perWorker;
  const pick = (pool: number | null): number => {
    const list = pool === null ? null : byPool[pool]!;
    for (let tries = 0; ; tries++) {
      const i = list ? list[Math.floor(rnd() * list.length)]! : Math.floor(rnd() * o.workers);
      if (load[i]! < perWorker + 5 || tries > 20) return i;
    }
  };
  const requests = (): Vec => ({
    cpu: 50 + Math.floor(rnd() * 10) * 50,
    memory: (128 + Math.floor(rnd() * 8) * 128) * MiB,
    pods: 1,
  });
  for (let w = 0; pods.length < target; w++) {
    const ns = `ns-${w % 50}`;
    const kind = rnd();
    if (kind < 0.01) {
      // A bare pod.
      const i = pick(null);
      load[i]!++;
      pods.push({ ...pod(`debug-${w}`, workers[i]!.name), namespace: ns, owner: null, requests: requests() });
      continue;
    }
    const replicas = kind < 0.04 ? 1 : 3 + Math.floor(rnd() * 6);
    const name = `app-${w}`;
    const owner = deployment(ns, name, replicas);
    const pool = rnd() < 0.3 ? Math.floor(rnd() * pools) : null;
    const spread = rnd() < 0.2;
    const local = kind > 0.995;
    let pdbIndex: number | null = null;
    if (replicas > 1 && rnd() < 0.85) {
      const style = rnd();
      const allowed = style < 0.5 ? 1 : style < 0.8 ? 1 : Math.max(1, Math.floor(replicas / 4));
      pdbIndex = pdbs.length;
      pdbs.push(
        pdb(name, allowed, {
          namespace: ns,
          rule:
            style < 0.5
              ? 'maxUnavailable 1'
              : style < 0.8
                ? `minAvailable ${replicas - 1}`
                : 'maxUnavailable 25%',
          workload: owner,
          allowedWithExtraReplica: allowed,
        }),
      );
    }
    const req = requests();
    for (let r = 0; r < replicas; r++) {
      const i = pick(pool);
      load[i]!++;
      pods.push({
        ...pod(`${name}-${r}`, workers[i]!.name),
        namespace: ns,
        owner: local ? { ...owner, kind: 'StatefulSet' } : owner,
        requests: req,
        pdbs: pdbIndex === null ? [] : [pdbIndex],
        scheduling: pool === null ? 0 : pool + 1,
        spread: spread ? [{ group: `${ns}/${name}`, topologyKey: 'kubernetes.io/hostname', maxSkew: 1 }] : [],
        pin: local ? { kind: 'local-volume', volume: `local-${name}-${r}` } : null,
      });
    }
  }
  return { workers, pods, pdbs, schedulings };
}
