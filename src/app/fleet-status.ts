/** `ferry fleet status`: each cluster's journal, beside the plan `ferry fleet plan` wrote, read without taking its lock. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FleetCluster } from '../fleet/config.js';
import { type RunEnd, type RunState, runState } from '../fleet/status.js';
import { readPlan } from '../plan/load.js';
import { FINISHED, Journal, journalPathFor } from '../run/journal.js';
import { reasonOf, shownPath } from './fleet-audit.js';

export async function fleetStatus(
  clusters: readonly FleetCluster[],
  plansDir: string,
  cwd: string,
): Promise<{ name: string; labels: Record<string, string>; state: RunState }[]> {
  const out = [];
  for (const c of clusters) {
    if (c.source.kind === 'unlisted') {
      const reason = `the Clusters of management cluster ${c.source.management.name} could not be listed: ${c.source.reason}`;
      out.push({ name: c.name, labels: c.labels, state: { kind: 'unlisted' as const, reason } });
      continue;
    }
    const planPath = join(plansDir, 'clusters', c.name, 'plan.json');
    const planFile = shownPath(cwd, planPath);
    out.push({ name: c.name, labels: c.labels, state: await stateOf(planPath, planFile) });
  }
  return out;
}

async function stateOf(planPath: string, planFile: string): Promise<RunState> {
  if (!existsSync(planPath)) return { kind: 'no-plan', planFile };
  const journalFile = journalPathFor(planPath);
  try {
    const plan = await readPlan(planPath, planFile);
    const steps = plan.phases.flatMap((p) => p.steps).map((s) => ({ id: s.id, title: s.title }));
    if (!existsSync(journalFile)) return runState({ planFile, steps, finished: new Set() });
    // A reader beside a live run: no waiting on its lock (busy is "not readable now", said as such).
    const j = Journal.open(journalFile, { readonly: true, busyTimeoutMs: 0 });
    try {
      const runs = j.runs();
      const latest = runs.at(-1);
      const end = j.runEnds().at(-1);
      const finished = new Set(
        [...j.lastStates().values()].filter((t) => FINISHED.has(t.state as never)).map((t) => t.stepId),
      );
      return runState({
        planFile,
        steps,
        finished,
        ...(latest && { latestRun: { runId: latest.runId, startedAt: latest.startedAt } }),
        ...(end && {
          lastEnd: {
            state: end.state as RunEnd,
            at: end.at,
            detail: end.detail,
            runId: end.runId,
          },
        }),
      });
    } finally {
      j.close();
    }
  } catch (err) {
    return { kind: 'unreadable', planFile, reason: reasonOf(err) };
  }
}
