/**
 * PodDisruptionBudgets matched to pods and pod templates without scanning every PDB for every
 * pod: PDBs are indexed by one `key=value` their selector requires, so a pod only meets the PDBs
 * that can match it. Built once per audit and cached on the SnapshotIndex.
 */
import type { KubeObject } from '../../snapshot/model.js';
import { selects } from '../../util/label-selector.js';
import { type IndexedPdb, type LabelTree, type SnapshotIndex, treePush } from '../snapshot-index.js';

export interface PdbModel {
  /** PDBs whose selector matches these labels in this namespace. */
  pdbsFor(namespace: string, labels: Record<string, string> | undefined): IndexedPdb[];
  /** Pods each PDB selects (every PDB present, possibly with no pods). */
  podsOf(pdb: IndexedPdb): readonly KubeObject[];
  all: readonly IndexedPdb[];
}

const cache = new WeakMap<SnapshotIndex, PdbModel>();
/** The shared "no PDB" answer; frozen so that no caller can add to it. */
const NO_PDBS: readonly IndexedPdb[] = Object.freeze([]);

export function pdbModel(index: SnapshotIndex): PdbModel {
  const hit = cache.get(index);
  if (hit) return hit;
  // namespace → key → value → PDBs requiring that label: nested maps, so matching a pod builds no
  // strings (this runs for every pod of every namespace that has a PDB).
  const byLabel: LabelTree<IndexedPdb> = new Map();
  const unindexed = new Map<string, IndexedPdb[]>();
  const all: IndexedPdb[] = [];
  for (const list of index.pdbsByNamespace.values()) {
    for (const b of list) {
      all.push(b);
      if (b.selector === null) continue;
      const anchor = b.selector.find((r) => r.op === 'eq' || r.op === 'in');
      if (anchor?.op === 'eq') treePush(byLabel, b.namespace, anchor.key, anchor.value, b);
      else if (anchor?.op === 'in') {
        for (const v of new Set(anchor.values)) treePush(byLabel, b.namespace, anchor.key, v, b);
      } else {
        const l = unindexed.get(b.namespace);
        if (l) l.push(b);
        else unindexed.set(b.namespace, [b]);
      }
    }
  }
  // Called once per pod: allocates nothing unless a PDB matches.
  const pdbsFor = (namespace: string, labels: Record<string, string> | undefined): IndexedPdb[] => {
    let out: IndexedPdb[] | undefined;
    const loose = unindexed.get(namespace);
    if (loose) {
      for (const b of loose) {
        if (!selects(b.selector, labels)) continue;
        if (out) out.push(b);
        else out = [b];
      }
    }
    const byKey = byLabel.get(namespace);
    if (byKey && labels) {
      for (const k in labels) {
        const list = byKey.get(k)?.get(labels[k]!);
        if (!list) continue;
        for (const b of list) {
          if (!selects(b.selector, labels)) continue;
          if (out) out.push(b);
          else out = [b];
        }
      }
    }
    return out ?? (NO_PDBS as IndexedPdb[]);
  };

  const podsByPdb = new Map<IndexedPdb, KubeObject[]>();
  for (const b of all) podsByPdb.set(b, []);
  for (const [ns, pods] of index.podsByNamespace) {
    if (!index.pdbsByNamespace.has(ns)) continue;
    for (const p of pods) for (const b of pdbsFor(ns, p.metadata.labels)) podsByPdb.get(b)?.push(p);
  }
  const model: PdbModel = { pdbsFor, podsOf: (b) => podsByPdb.get(b) ?? [], all };
  cache.set(index, model);
  return model;
}

/** An int-or-percent PDB field scaled to a pod count, rounding up as the disruption controller does. */
export function scaled(value: unknown, total: number): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') {
    const pct = /^(\d+)%$/.exec(value.trim());
    if (pct) return Math.ceil((Number(pct[1]) * total) / 100);
    if (/^\d+$/.test(value.trim())) return Number(value.trim());
  }
  return undefined;
}

export function isReady(pod: KubeObject): boolean {
  const conds: unknown = pod.status?.conditions;
  if (!Array.isArray(conds)) return false;
  return conds.some((c: { type?: string; status?: string }) => c?.type === 'Ready' && c.status === 'True');
}

/** Why a PDB lets no pod be evicted; empty when it allows at least one. */
export interface PdbBlock {
  field: string;
  observed: string;
  why: string;
}

/**
 * blockers.md workload.pdb-blocking: status.disruptionsAllowed == 0, minAvailable ≥ expected pods,
 * maxUnavailable 0, or unhealthy pods under the IfHealthyBudget eviction policy. Uses the PDB's
 * status when the snapshot has it, the spec and the selected pods otherwise.
 */
export function pdbBlocks(pdb: KubeObject, selected: readonly KubeObject[]): PdbBlock[] {
  const spec = pdb.spec ?? {};
  const status = pdb.status ?? {};
  const expected: number = typeof status.expectedPods === 'number' ? status.expectedPods : selected.length;
  const out: PdbBlock[] = [];
  if (expected === 0) return out;
  if (typeof status.disruptionsAllowed === 'number' && status.disruptionsAllowed <= 0) {
    out.push({
      field: 'status.disruptionsAllowed',
      observed: String(status.disruptionsAllowed),
      why: `status.disruptionsAllowed is ${status.disruptionsAllowed}`,
    });
  }
  const maxUnavailable = scaled(spec.maxUnavailable, expected);
  if (spec.maxUnavailable !== undefined && maxUnavailable === 0) {
    out.push({
      field: 'spec.maxUnavailable',
      observed: String(spec.maxUnavailable),
      why: `maxUnavailable is ${spec.maxUnavailable}`,
    });
  }
  const minAvailable = scaled(spec.minAvailable, expected);
  if (minAvailable !== undefined && minAvailable >= expected) {
    out.push({
      field: 'spec.minAvailable',
      observed: String(spec.minAvailable),
      why: `minAvailable ${spec.minAvailable} ≥ ${expected} expected pod(s)`,
    });
  }
  if (out.length === 0 && spec.unhealthyPodEvictionPolicy !== 'AlwaysAllow') {
    // Without a status, count ready pods ourselves; IfHealthyBudget (the default) refuses evictions
    // while healthy pods are at or below what the budget requires.
    const healthy =
      typeof status.currentHealthy === 'number' ? status.currentHealthy : selected.filter(isReady).length;
    const desired =
      typeof status.desiredHealthy === 'number'
        ? status.desiredHealthy
        : minAvailable !== undefined
          ? minAvailable
          : maxUnavailable !== undefined
            ? expected - maxUnavailable
            : undefined;
    if (desired !== undefined && healthy <= desired && typeof status.disruptionsAllowed !== 'number') {
      out.push({
        field: 'status.currentHealthy',
        observed: String(healthy),
        why: `${healthy} healthy pod(s) ≤ ${desired} required (unhealthyPodEvictionPolicy ${spec.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget'})`,
      });
    }
  }
  return out;
}
