/**
 * `ferry fleet plan`: each cluster of a fleet read as `fleet audit` reads it and planned as
 * `ferry plan` plans it (the same refusals: unsuppressed blockers unless allowed, an external
 * etcd, inputs not observed, a worker roll it refuses), its plan.json written under
 * OUT/clusters/NAME/; then the waves (fleet/waves.ts).
 */
import { join } from 'node:path';
import { runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { FerryError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import type { TargetInput } from '../facts/target.js';
import type { FleetCluster } from '../fleet/config.js';
import { clusterSeconds } from '../fleet/estimate.js';
import { describeSource } from '../fleet/report.js';
import type { PlanEntry, PlanOutcome } from '../fleet/waves.js';
import { buildPlan, planBlockers } from '../plan/build.js';
import { workerRefusals } from '../plan/refusals.js';
import { renderPlan } from '../plan/render.js';
import { refuseExternalEtcd } from '../plan/topology.js';
import { refuseUnobserved } from '../snapshot/unobserved.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { inParallel } from '../util/parallel.js';
import { readCluster, reasonOf, shownPath } from './fleet-audit.js';

export interface FleetPlanOptions {
  clusters: readonly FleetCluster[];
  outDir: string;
  cwd: string;
  concurrency: number;
  target: TargetInput;
  allowBlockers: boolean;
  surgeReplicas: boolean;
  now: () => Date;
  progress: (line: string) => void;
}

export async function planFleet(opts: FleetPlanOptions): Promise<PlanEntry[]> {
  const done = new Map<string, PlanOutcome>();
  await inParallel([...opts.clusters], opts.concurrency, async (cluster) => {
    const outcome = await planOne(cluster, opts);
    done.set(cluster.name, outcome);
    opts.progress(
      `${cluster.name}: ${outcome.kind === 'planned' ? `planned, ${outcome.batches} worker batch(es)` : outcome.kind === 'refused' ? `cannot be planned: ${outcome.why[0]}` : `${outcome.kind}: ${outcome.reason}`}`,
    );
  });
  return opts.clusters.map((cluster) => ({ cluster, outcome: done.get(cluster.name)! }));
}

async function planOne(cluster: FleetCluster, opts: FleetPlanOptions): Promise<PlanOutcome> {
  const dir = join(opts.outDir, 'clusters', cluster.name);
  const read = await readCluster(cluster, dir, opts.progress);
  if (read.kind !== 'read') return read;
  const { snapshot } = read;
  const shown = describeSource(cluster.source);
  try {
    refuseUnobserved(snapshot, 'ferry fleet plan', shown);
    const facts = deriveFacts(snapshot, opts.target);
    refuseExternalEtcd(facts);
    const now = opts.now();
    const audit = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now });
    if (audit.errors.length > 0)
      return { kind: 'refused', why: audit.errors.map((e) => `rule ${e.ruleId} failed: ${e.message}`) };
    const blockers = planBlockers({ snapshot, facts, audit }).refused;
    if (blockers.length > 0 && !opts.allowBlockers)
      return {
        kind: 'refused',
        why: [
          `${blockers.length} unsuppressed blocker(s): ${[...new Set(blockers.map((b) => b.ruleId))].join(', ')} (fix them, or --allow-blockers)`,
        ],
      };
    const plan = buildPlan({
      snapshot,
      facts,
      audit,
      snapshotPath: shown,
      strategy: 'surge',
      kit: null,
      allowBlockers: opts.allowBlockers,
      now,
      options: { surgeReplicas: opts.surgeReplicas },
    });
    const refusals = workerRefusals(plan.workerRoll, { failOnOutage: false });
    if (refusals.length > 0) return { kind: 'refused', why: refusals.map((r) => `${r.title}: ${r.remedy}`) };
    const planFile = join(dir, 'plan.json');
    await writeFileAtomic(planFile, renderPlan(plan, 'json'));
    const controlPlanes = facts.nodes.controlPlane.value?.length ?? 0;
    return {
      kind: 'planned',
      planFile: shownPath(opts.cwd, planFile),
      seconds: clusterSeconds(plan, controlPlanes),
      controlPlanes,
      workers: plan.workerRoll.batches.reduce((n, b) => n + b.nodes.length, 0),
      batches: plan.workerRoll.batches.length,
    };
  } catch (err) {
    // ferry plan's own refusals (bad input about this cluster) make it unplannable, not the fleet.
    if (err instanceof FerryError && err.kind !== 'internal')
      return { kind: 'refused', why: [reasonOf(err)] };
    throw err;
  }
}
