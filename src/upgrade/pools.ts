/**
 * How one MachineDeployment pool rolls (pure): its Machines' Nodes, the pods their drains evict
 * and the PodDisruptionBudgets over them, through the migration's batch planner. The Machine
 * controller drains the old Machines of a pool while new ones come up (maxSurge) and keeps every
 * old one until a new one is ready (maxUnavailable 0), so maxSurge is the largest number of
 * drains the budgets let run side by side: the smallest batch the planner could make.
 */
import { buildIndex } from '../audit/snapshot-index.js';
import { nodeRefName } from '../capi/view.js';
import { nodeFact } from '../facts/nodes.js';
import { batchSeconds } from '../plan/batches/estimate.js';
import { explainOutage } from '../plan/batches/explain.js';
import { clusterModel } from '../plan/batches/from-snapshot.js';
import { resolveMaxUnavailable } from '../plan/batches/limits.js';
import { planWorkerBatches } from '../plan/batches/planner.js';
import { type Timing, timingFor } from '../plan/batches/timing.js';
import type { KubeObject, Snapshot } from '../snapshot/model.js';
import type { Blocker, PoolRoll, Write } from './model.js';
import { DEPLOYMENT_NAME_LABEL_TEXT } from './names.js';

/** The migration's default share of a pool drained at once. */
const DEFAULT_SHARE = { kind: 'percent', percent: 25 } as const;

export const TIMING: Timing = timingFor('capi');

/** One Machine replaced without a drain to wait on: new Machine up, old one drained and gone. */
export const MACHINE_SECONDS =
  TIMING.gate + TIMING.provision + TIMING.nodeReady + TIMING.cordon + TIMING.podReady + TIMING.decommission;

export interface PoolAnswer {
  roll: PoolRoll;
  blockers: Blocker[];
  /** --surge-replicas: scale-ups before the pool's patch, restores after its rollout. */
  before: Write[];
  after: Write[];
  warnings: string[];
}

export function poolMachines(md: KubeObject, machines: readonly KubeObject[]): KubeObject[] {
  return machines.filter(
    (m) =>
      m.metadata.namespace === md.metadata.namespace &&
      m.metadata.labels?.[DEPLOYMENT_NAME_LABEL_TEXT] === md.metadata.name,
  );
}

export function planPool(
  md: KubeObject,
  machines: readonly KubeObject[],
  workload: Snapshot | null,
  opts: { surgeReplicas: boolean },
): PoolAnswer {
  const name = md.metadata.name;
  const replicas = typeof md.spec?.replicas === 'number' ? md.spec.replicas : machines.length;
  const warnings: string[] = [];
  if (!workload) {
    return {
      roll: {
        name,
        replicas,
        nodes: [],
        maxSurge: 1,
        maxUnavailable: 0,
        why: 'no workload cluster given (--snapshot or --kubeconfig): its budgets are not checked, one Machine at a time',
        outages: [],
        seconds: replicas * MACHINE_SECONDS,
      },
      blockers: [],
      before: [],
      after: [],
      warnings: [`pool ${name}: PodDisruptionBudgets not checked (no workload cluster given)`],
    };
  }
  const wanted = new Set(machines.flatMap((m) => nodeRefName(m) ?? []));
  const nodes = workload.resources.nodes.filter((n) => wanted.has(n.metadata.name));
  for (const w of wanted)
    if (!nodes.some((n) => n.metadata.name === w))
      warnings.push(`pool ${name}: Node ${w} (a Machine's nodeRef) is not in the workload cluster`);
  const facts = nodes.map(nodeFact);
  const index = buildIndex(workload);
  const model = clusterModel(workload, index, facts);
  const first = resolveMaxUnavailable(DEFAULT_SHARE, facts.length);
  const planWith = (n: number) =>
    planWorkerBatches(model, {
      strategy: 'surge',
      maxUnavailable: n,
      // The new Machines come up before the old ones drain: they take the evicted pods.
      surgeNodes: n,
      surgeReplicas: opts.surgeReplicas,
      timing: TIMING,
    });
  const probe = planWith(first);
  const sizes = probe.batches.map((b) => b.nodes.length);
  const maxSurge = Math.max(1, sizes.length ? Math.min(...sizes) : 1);
  const roll = maxSurge === first ? probe : planWith(maxSurge);
  const blockers: Blocker[] = roll.blocked.map((b) => ({
    kind: 'pdb-blocks-drain',
    pool: name,
    pdb: b.pdb,
    rule: b.rule,
    fix: b.fix,
  }));
  const before: Write[] = roll.surged.map((s) => ({
    kind: 'scale-workload',
    workload: `${s.workload.kind} ${s.workload.namespace}/${s.workload.name}`,
    replicas: s.to,
    why: `PodDisruptionBudget ${s.pdb} allows no disruption: one more replica lets one pod go (--surge-replicas)`,
  }));
  const after: Write[] = roll.surged.map((s) => ({
    kind: 'scale-workload',
    workload: `${s.workload.kind} ${s.workload.namespace}/${s.workload.name}`,
    replicas: s.from,
    why: `back to its replicas once pool ${name} rolled`,
  }));
  const seconds = roll.batches.reduce((sum, b) => sum + batchSeconds(b, TIMING), 0);
  return {
    roll: {
      name,
      replicas,
      nodes: facts.map((f) => f.name),
      maxSurge,
      maxUnavailable: 0,
      why:
        sizes.length === 0
          ? 'no Node of this pool in the workload cluster: one Machine at a time'
          : `the PodDisruptionBudgets and capacity let ${maxSurge} of its ${facts.length} node(s) drain side by side (the smallest batch the planner made of at most ${first}); maxUnavailable 0 keeps every old Machine until a new one is ready`,
      outages: roll.outages.map(explainOutage),
      seconds: Math.max(seconds, replicas === 0 ? 0 : MACHINE_SECONDS),
    },
    blockers,
    before,
    after,
    warnings,
  };
}
