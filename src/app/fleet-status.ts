/**
 * `ferry fleet status`: each cluster's journal, beside the plan `ferry fleet plan` wrote, read
 * without taking its lock; its Kubernetes and Talos versions from its Nodes (a snapshot's, or the
 * live cluster's); whether it came from a management cluster; and each management cluster's newest
 * backup, as `ferry mgmt status` reads it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ManagementBackup } from '../fleet/backup-age.js';
import type { Fleet, FleetCluster, FleetManagement } from '../fleet/config.js';
import { lastProbeFigures, type ProbeFigures } from '../fleet/probes.js';
import {
  type Adoption,
  type ClusterStatusRow,
  type FleetStatus,
  type RunEnd,
  type RunState,
  runState,
} from '../fleet/status.js';
import { type ClusterVersions, clusterVersions } from '../fleet/versions.js';
import { readPlan } from '../plan/load.js';
import type { KubeReader } from '../ports/kube.js';
import { FINISHED, Journal, journalPathFor } from '../run/journal.js';
import { inParallel } from '../util/parallel.js';
import { reasonOf, shownPath } from './fleet-audit.js';

export async function fleetStatus(o: {
  fleet: Fleet;
  clusters: readonly FleetCluster[];
  plansDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  now: Date;
  concurrency: number;
}): Promise<FleetStatus> {
  const rows = new Map<string, ClusterStatusRow>();
  await inParallel([...o.clusters], o.concurrency, async (c) => {
    const src = c.source;
    const adoption: Adoption =
      src.kind === 'capi'
        ? { kind: 'capi', management: src.management.name, namespace: src.namespace, cluster: src.cluster }
        : { kind: 'listed' };
    const row = { name: c.name, labels: c.labels, adoption };
    if (src.kind === 'unlisted') {
      const reason = `the Clusters of management cluster ${src.management.name} could not be listed: ${src.reason}`;
      rows.set(c.name, {
        ...row,
        state: { kind: 'unlisted', reason },
        versions: { kind: 'not-observed', reason },
      });
      return;
    }
    const planPath = join(o.plansDir, 'clusters', c.name, 'plan.json');
    const [{ state, lastProbes }, versions] = await Promise.all([
      journalOf(planPath, shownPath(o.cwd, planPath)),
      versionsOf(c),
    ]);
    rows.set(c.name, { ...row, state, versions, ...(lastProbes && { lastProbes }) });
  });
  const management = [];
  for (const m of o.fleet.management)
    management.push({ name: m.name, backup: await backupOf(m, o.env, o.now) });
  return {
    generatedAt: o.now.toISOString(),
    clusters: o.clusters.map((c) => rows.get(c.name)!),
    management,
  };
}

/** The Nodes of a snapshot, or of the live cluster; what went wrong, otherwise. */
async function versionsOf(c: FleetCluster): Promise<ClusterVersions> {
  const src = c.source;
  try {
    switch (src.kind) {
      case 'snapshot': {
        const { loadSnapshot } = await import('../snapshot/load.js');
        return clusterVersions((await loadSnapshot(src.dir, { strictPki: false })).resources.nodes);
      }
      case 'kubeconfig': {
        const { createKubeReader } = await import('../adapters/kube/reader.js');
        return await liveVersions(
          createKubeReader({
            kubeconfig: src.path,
            ...(src.context !== undefined && { context: src.context }),
          }),
        );
      }
      case 'capi': {
        const [{ createKubeReader }, { createKubeClient }, { loadKubeconfig }, { workloadKubeconfig }] =
          await Promise.all([
            import('../adapters/kube/reader.js'),
            import('../adapters/kube/client.js'),
            import('../adapters/kube/kubeconfig.js'),
            import('../adapters/capi/fleet-clusters.js'),
          ]);
        const m = src.management.kubeconfig;
        const mgmt = createKubeClient(loadKubeconfig(m.path, m.context), { connectTimeoutMs: 5_000 });
        return await liveVersions(
          createKubeReader({ kubeconfig: await workloadKubeconfig(mgmt, src.namespace, src.cluster) }),
        );
      }
      case 'unlisted':
        return { kind: 'not-observed', reason: src.reason };
    }
  } catch (err) {
    return { kind: 'not-observed', reason: reasonOf(err) };
  }
}

async function liveVersions(kube: KubeReader): Promise<ClusterVersions> {
  await kube.version();
  return clusterVersions(await kube.list('nodes'));
}

/** The newest backup, checksum-verified; an S3 that cannot be reached is "not read", never "none". */
async function backupOf(m: FleetManagement, env: NodeJS.ProcessEnv, now: Date): Promise<ManagementBackup> {
  const b = m.backup;
  if (!b) return { kind: 'not-configured' };
  const [{ openStore }, { backupStatus }] = await Promise.all([
    import('../mgmt/connect.js'),
    import('../mgmt/status.js'),
  ]);
  let opened: Awaited<ReturnType<typeof openStore>> | undefined;
  try {
    opened = await openStore(
      b.url,
      `management[${m.name}].backup.url`,
      { endpoint: b.endpoint, region: b.region, credentialsFile: b.credentialsFile, profile: b.profile },
      env,
    );
    return { kind: 'read', backup: await backupStatus({ store: opened.store, loc: opened.loc, now }) };
  } catch (err) {
    return { kind: 'not-read', url: b.url, reason: reasonOf(err) };
  } finally {
    opened?.store.destroy();
  }
}

async function journalOf(
  planPath: string,
  planFile: string,
): Promise<{ state: RunState; lastProbes?: ProbeFigures }> {
  if (!existsSync(planPath)) return { state: { kind: 'no-plan', planFile } };
  const journalFile = journalPathFor(planPath);
  try {
    const plan = await readPlan(planPath, planFile);
    const steps = plan.phases.flatMap((p) => p.steps).map((s) => ({ id: s.id, title: s.title }));
    if (!existsSync(journalFile)) return { state: runState({ planFile, steps, finished: new Set() }) };
    // A reader beside a live run: no waiting on its lock (busy is "not readable now", said as such).
    const j = Journal.open(journalFile, { readonly: true, busyTimeoutMs: 0 });
    try {
      const runs = j.runs();
      const latest = runs.at(-1);
      const end = j.runEnds().at(-1);
      const finished = new Set(
        [...j.lastStates().values()].filter((t) => FINISHED.has(t.state as never)).map((t) => t.stepId),
      );
      const lastProbes = lastProbeFigures(j.observations({ purpose: 'probe' }));
      const state = runState({
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
      return { state, ...(lastProbes && { lastProbes }) };
    } finally {
      j.close();
    }
  } catch (err) {
    return { state: { kind: 'unreadable', planFile, reason: reasonOf(err) } };
  }
}
