/**
 * What the applications of a rehearsal lived through: for every Deployment and
 * StatefulSet of the lab, the fewest Ready pods it had at any sample during the roll, against
 * the minimum its PodDisruptionBudget promises. A dip below is a PDB violation, whatever the
 * eviction log says (a pod deleted rather than evicted, a node lost with its pods). Samples are
 * taken through the lab's API every `intervalMs`; the figures are pure functions of them.
 */
import type { KObj } from '../lab/apiserver/object.js';
import type { LabKubeClient } from '../lab/nodes/client.js';
import { at, type Fields, isPodReady, isTerminating } from '../lab/nodes/world.js';

export type WorkloadFloor = {
  kind: 'Deployment' | 'StatefulSet';
  /** namespace/name */
  name: string;
  /** spec.replicas at the sample of the minimum. */
  replicas: number;
  minReady: number;
  /** The PDB covering it and the Ready pods it requires (at the sample of the minimum). */
  pdb: { name: string; minimum: number } | undefined;
  /** The fewest Ready pods fell below the PDB's minimum. */
  violated: boolean;
  samples: number;
};

type Lists = { pods: KObj[]; deployments: KObj[]; statefulsets: KObj[]; pdbs: KObj[] };

function matchLabels(sel: unknown): Record<string, string> | undefined {
  const m = at(sel, 'matchLabels');
  return m && typeof m === 'object' && Object.keys(m).length > 0 ? (m as Record<string, string>) : undefined;
}

function selects(sel: Record<string, string>, labels: Record<string, string> | undefined): boolean {
  return Object.entries(sel).every(([k, v]) => labels?.[k] === v);
}

/** The Ready pods a PDB requires of `expected` (the workload's replicas), as the disruption controller computes it. */
export function pdbMinimum(pdb: KObj, expected: number): number {
  const s: Fields = pdb.spec ?? {};
  const scaled = (v: unknown, roundUp: boolean): number | undefined => {
    if (typeof v === 'number') return v;
    const m = typeof v === 'string' ? /^(\d+)%$/.exec(v) : null;
    if (!m) return undefined;
    const x = (Number(m[1]) * expected) / 100;
    return roundUp ? Math.ceil(x) : Math.floor(x);
  };
  if (s.minAvailable !== undefined) return scaled(s.minAvailable, true) ?? 0;
  // maxUnavailable percentages round up, as minAvailable ones do (intstr.GetScaledValueFromIntOrPercent).
  if (s.maxUnavailable !== undefined) return Math.max(0, expected - (scaled(s.maxUnavailable, true) ?? 0));
  return 0;
}

/** One sample: per workload, Ready (not terminating) pods, replicas and the PDB minimum. Pure. */
export function sampleWorkloads(
  l: Lists,
): Map<string, Omit<WorkloadFloor, 'minReady' | 'violated' | 'samples'> & { ready: number }> {
  const out = new Map<string, Omit<WorkloadFloor, 'minReady' | 'violated' | 'samples'> & { ready: number }>();
  const workloads = [
    ...l.deployments.map((o) => ['Deployment', o] as const),
    ...l.statefulsets.map((o) => ['StatefulSet', o] as const),
  ];
  for (const [kind, w] of workloads) {
    const ns = w.metadata.namespace ?? '';
    const sel = matchLabels(w.spec?.selector);
    if (!sel) continue;
    const replicas = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 1;
    const ready = l.pods.filter(
      (p) =>
        p.metadata.namespace === ns && selects(sel, p.metadata.labels) && !isTerminating(p) && isPodReady(p),
    ).length;
    const templateLabels = w.spec?.template?.metadata?.labels;
    const pdb = l.pdbs.find((b) => {
      const bs = matchLabels(b.spec?.selector);
      return b.metadata.namespace === ns && bs !== undefined && selects(bs, templateLabels);
    });
    const name = `${ns}/${w.metadata.name}`;
    out.set(`${kind} ${name}`, {
      kind,
      name,
      replicas,
      ready,
      pdb: pdb && { name: `${ns}/${pdb.metadata.name}`, minimum: pdbMinimum(pdb, replicas) },
    });
  }
  return out;
}

/** Folds samples into each workload's floor. Pure. */
export function floors(samples: ReturnType<typeof sampleWorkloads>[]): WorkloadFloor[] {
  const acc = new Map<string, WorkloadFloor>();
  for (const s of samples) {
    for (const [key, x] of s) {
      const prev = acc.get(key);
      const below = x.pdb !== undefined && x.ready < x.pdb.minimum;
      if (!prev) {
        acc.set(key, {
          kind: x.kind,
          name: x.name,
          replicas: x.replicas,
          minReady: x.ready,
          pdb: x.pdb,
          violated: below,
          samples: 1,
        });
        continue;
      }
      prev.samples++;
      prev.violated ||= below;
      if (x.ready < prev.minReady)
        Object.assign(prev, { minReady: x.ready, replicas: x.replicas, pdb: x.pdb });
    }
  }
  return [...acc.values()].sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind));
}

/**
 * Samples the lab's workloads until stopped: the pods every `intervalMs`, the workloads and PDBs
 * every `specEveryN` samples (they change rarely, and each list costs the lab API a read of every
 * object: sampling must not slow the lab it watches). A sample that cannot be taken is counted,
 * not guessed.
 */
export class WorkloadWatch {
  readonly #client: LabKubeClient;
  readonly #intervalMs: number;
  readonly #specEveryN: number;
  readonly #samples: ReturnType<typeof sampleWorkloads>[] = [];
  #missed = 0;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(client: LabKubeClient, opts: { intervalMs?: number; specEveryN?: number } = {}) {
    this.#client = client;
    this.#intervalMs = opts.intervalMs ?? 250;
    this.#specEveryN = opts.specEveryN ?? 8;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = (async () => {
      let spec: Omit<Lists, 'pods'> | undefined;
      for (let i = 0; this.#running; i++) {
        try {
          if (!spec || i % this.#specEveryN === 0) {
            const [deployments, statefulsets, pdbs] = await Promise.all([
              this.#client.list<KObj>('/apis/apps/v1/deployments'),
              this.#client.list<KObj>('/apis/apps/v1/statefulsets'),
              this.#client.list<KObj>('/apis/policy/v1/poddisruptionbudgets'),
            ]);
            spec = { deployments, statefulsets, pdbs };
          }
          const pods = await this.#client.list<KObj>('/api/v1/pods');
          this.#samples.push(sampleWorkloads({ pods, ...spec }));
        } catch {
          this.#missed++;
        }
        await new Promise((r) => setTimeout(r, this.#intervalMs));
      }
    })();
  }

  async stop(): Promise<{ floors: WorkloadFloor[]; samples: number; missed: number }> {
    this.#running = false;
    await this.#loop;
    return { floors: floors(this.#samples), samples: this.#samples.length, missed: this.#missed };
  }
}
