/**
 * The fleet's migration in waves: canary clusters first (label `canary: "true"`), then the
 * clusters of each value of the wave label in order (numbers as numbers; unlabelled last), at
 * most `maxParallel` clusters migrating at once. A wave's estimate is the sum over its rounds of
 * the longest cluster in each round. Clusters that cannot be planned are listed with why and are
 * in no wave: a fleet plan never schedules a cluster ferry plan refuses. Pure.
 */
import type { FleetCluster } from './config.js';

export type PlanOutcome =
  | {
      kind: 'planned';
      planFile: string;
      /** The plan's own estimate: worker roll plus control planes (see `clusterSeconds`). */
      seconds: number;
      controlPlanes: number;
      workers: number;
      batches: number;
    }
  /** ferry plan would refuse it (blockers, an external etcd, what was not observed, a worker refusal). */
  | { kind: 'refused'; why: string[] }
  | { kind: 'unreachable' | 'unreadable'; reason: string };

export interface PlanEntry {
  cluster: FleetCluster;
  outcome: PlanOutcome;
}

export const CANARY_LABEL = 'canary';

export interface Wave {
  /** "canary", or the wave label's value, or "(unlabelled)". */
  name: string;
  /** Clusters that migrate side by side, round after round. */
  rounds: string[][];
  seconds: number;
}

export interface FleetPlan {
  kind: 'FerryFleetPlan';
  version: 1;
  generatedAt: string;
  fleet: string;
  maxParallel: number;
  waveLabel: string;
  waves: Wave[];
  clusters: { name: string; labels: Record<string, string>; outcome: PlanOutcome }[];
  /** All waves one after the other. */
  seconds: number;
  notPlanned: number;
}

const UNLABELLED = '(unlabelled)';

export function assembleFleetPlan(input: {
  fleet: string;
  entries: readonly PlanEntry[];
  maxParallel: number;
  waveLabel: string;
  now: Date;
}): FleetPlan {
  const planned = input.entries.filter(
    (e): e is PlanEntry & { outcome: Extract<PlanOutcome, { kind: 'planned' }> } =>
      e.outcome.kind === 'planned',
  );
  const groups = new Map<string, typeof planned>();
  for (const e of planned) {
    const key =
      e.cluster.labels[CANARY_LABEL] === 'true'
        ? 'canary'
        : (e.cluster.labels[input.waveLabel] ?? UNLABELLED);
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const order = [...groups.keys()].sort((a, b) => {
    const rank = (k: string) => (k === 'canary' ? 0 : k === UNLABELLED ? 2 : 1);
    return rank(a) - rank(b) || a.localeCompare(b, 'en', { numeric: true });
  });
  const waves: Wave[] = order.map((name) => {
    const members = [...groups.get(name)!].sort((a, b) => a.cluster.name.localeCompare(b.cluster.name));
    const rounds: (typeof members)[] = [];
    for (let i = 0; i < members.length; i += input.maxParallel)
      rounds.push(members.slice(i, i + input.maxParallel));
    return {
      name,
      rounds: rounds.map((r) => r.map((e) => e.cluster.name)),
      seconds: rounds.reduce((sum, r) => sum + Math.max(...r.map((e) => e.outcome.seconds)), 0),
    };
  });
  return {
    kind: 'FerryFleetPlan',
    version: 1,
    generatedAt: input.now.toISOString(),
    fleet: input.fleet,
    maxParallel: input.maxParallel,
    waveLabel: input.waveLabel,
    waves,
    clusters: input.entries.map((e) => ({
      name: e.cluster.name,
      labels: e.cluster.labels,
      outcome: e.outcome,
    })),
    seconds: waves.reduce((s, w) => s + w.seconds, 0),
    notPlanned: input.entries.length - planned.length,
  };
}

function minutes(s: number): string {
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function renderFleetPlan(p: FleetPlan, format: 'table' | 'md' | 'json'): string {
  if (format === 'json') return `${JSON.stringify(p, null, 2)}\n`;
  const md = format === 'md';
  const out: string[] = [
    md ? `# Fleet plan: ${p.fleet}` : `Fleet plan ${p.fleet}`,
    '',
    `${p.waves.reduce((n, w) => n + w.rounds.flat().length, 0)} cluster(s) in ${p.waves.length} wave(s), at most ${p.maxParallel} at once, about ${minutes(p.seconds)} in all; ${p.notPlanned} cannot be planned.`,
    '',
  ];
  for (const w of p.waves) {
    out.push(
      md
        ? `## Wave ${w.name} (about ${minutes(w.seconds)})`
        : `Wave ${w.name} (about ${minutes(w.seconds)}):`,
    );
    w.rounds.forEach((r, i) => {
      const est = r.map((name) => {
        const o = p.clusters.find((c) => c.name === name)!.outcome;
        return o.kind === 'planned' ? `${name} (${minutes(o.seconds)})` : name;
      });
      out.push(`${md ? '- ' : '  '}round ${i + 1}: ${est.join(', ')}`);
    });
    out.push('');
  }
  const refused = p.clusters.filter((c) => c.outcome.kind !== 'planned');
  if (refused.length > 0) {
    out.push(md ? '## Cannot be planned' : 'Cannot be planned:');
    for (const c of refused) {
      const o = c.outcome;
      const why =
        o.kind === 'refused' ? o.why.join('; ') : o.kind === 'planned' ? '' : `${o.kind}: ${o.reason}`;
      out.push(`${md ? '- ' : '  '}${c.name}: ${why}`);
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
