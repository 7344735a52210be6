/**
 * `ferry fleet audit`: every cluster of a fleet read (a snapshot loaded, or a live cluster
 * collected as `ferry snapshot` does) and audited side by side, at most `concurrency` at a time.
 * Each cluster's report (and a live cluster's snapshot) is written under OUT/clusters/NAME/ as it
 * finishes; one cluster that cannot be read is recorded with the reason and never stops the others.
 */
import { isAbsolute, join, relative } from 'node:path';
import { runAudit } from '../audit/engine.js';
import { renderReport } from '../audit/reporters/index.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { FerryError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import type { TargetInput } from '../facts/target.js';
import type { FleetCluster } from '../fleet/config.js';
import type { ClusterOutcome, ClusterResult } from '../fleet/report.js';
import type { KubeReader } from '../ports/kube.js';
import type { Snapshot } from '../snapshot/model.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { inParallel } from '../util/parallel.js';

export interface FleetAuditOptions {
  clusters: readonly FleetCluster[];
  outDir: string;
  /** Paths in the report are shown relative to this directory. */
  cwd: string;
  concurrency: number;
  target: TargetInput;
  now: () => Date;
  /** One line per cluster event, e.g. "prod-eu-1: listing pods". */
  progress: (line: string) => void;
}

/** The results in the fleet file's order. */
export async function auditFleet(opts: FleetAuditOptions): Promise<ClusterResult[]> {
  const results = new Map<string, ClusterResult>();
  await inParallel([...opts.clusters], opts.concurrency, async (cluster) => {
    const outcome = await auditOne(cluster, opts);
    results.set(cluster.name, { cluster, outcome });
    opts.progress(`${cluster.name}: ${outcomeLine(outcome)}`);
  });
  return opts.clusters.map((c) => results.get(c.name)!);
}

function outcomeLine(o: ClusterOutcome): string {
  switch (o.kind) {
    case 'audited': {
      const c = o.report.counts;
      return `audited: ${c.blocker} blocker(s), ${c.risk} risk(s), ${c.info} info`;
    }
    case 'unreachable':
    case 'unreadable':
      return `${o.kind}: ${o.reason}`;
  }
}

/** An error's message with its remediation, as the single-cluster commands print it. */
export function reasonOf(err: unknown): string {
  if (err instanceof FerryError) return err.remediation ? `${err.message} (${err.remediation})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/** The snapshot of one cluster: loaded, or collected live (and kept under `dir`); what went wrong, otherwise. */
export async function readCluster(
  cluster: FleetCluster,
  dir: string,
  progress: (line: string) => void,
): Promise<
  | { kind: 'read'; snapshot: Snapshot; snapshotDir?: string }
  | { kind: 'unreachable' | 'unreadable'; reason: string }
> {
  const src = cluster.source;
  switch (src.kind) {
    case 'snapshot':
      try {
        const { loadSnapshot } = await import('../snapshot/load.js');
        return { kind: 'read', snapshot: await loadSnapshot(src.dir, { strictPki: false }) };
      } catch (err) {
        return { kind: 'unreadable', reason: reasonOf(err) };
      }
    case 'kubeconfig':
      try {
        const { createKubeReader } = await import('../adapters/kube/reader.js');
        const kube = createKubeReader({
          kubeconfig: src.path,
          ...(src.context !== undefined && { context: src.context }),
        });
        return await collectLive(kube, cluster, dir, progress);
      } catch (err) {
        return { kind: 'unreachable', reason: reasonOf(err) };
      }
    case 'capi':
      try {
        const [{ createKubeReader }, { createKubeClient }, { loadKubeconfig }, { workloadKubeconfig }] =
          await Promise.all([
            import('../adapters/kube/reader.js'),
            import('../adapters/kube/client.js'),
            import('../adapters/kube/kubeconfig.js'),
            import('../adapters/capi/fleet-clusters.js'),
          ]);
        const m = src.management.kubeconfig;
        const mgmt = createKubeClient(loadKubeconfig(m.path, m.context), { connectTimeoutMs: 5_000 });
        const kube = createKubeReader({
          kubeconfig: await workloadKubeconfig(mgmt, src.namespace, src.cluster),
        });
        return await collectLive(kube, cluster, dir, progress);
      } catch (err) {
        return { kind: 'unreachable', reason: reasonOf(err) };
      }
    case 'unlisted':
      return {
        kind: 'unreachable',
        reason: `the Clusters of management cluster ${src.management.name} could not be listed, so its members are not known: ${src.reason}`,
      };
  }
}

/** A live cluster collected as `ferry snapshot` does, the snapshot kept under `dir`. */
async function collectLive(
  kube: KubeReader,
  cluster: FleetCluster,
  dir: string,
  progress: (line: string) => void,
): Promise<{ kind: 'read'; snapshot: Snapshot; snapshotDir: string }> {
  const [{ collectSnapshot }, { saveSnapshot }] = await Promise.all([
    import('../snapshot/collect.js'),
    import('../snapshot/store.js'),
  ]);
  const snapshot = await collectSnapshot({
    kube,
    progress: (e) => {
      if (e.kind === 'step') progress(`${cluster.name}: ${e.text}`);
    },
  });
  const snapshotDir = join(dir, 'snapshot');
  await saveSnapshot(snapshot, snapshotDir, { force: true });
  return { kind: 'read', snapshot, snapshotDir };
}

/** Relative to where the operator stands, unless that climbs out of it. */
export function shownPath(cwd: string, p: string): string {
  const rel = relative(cwd, p);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? p : rel;
}

async function auditOne(cluster: FleetCluster, opts: FleetAuditOptions): Promise<ClusterOutcome> {
  const dir = join(opts.outDir, 'clusters', cluster.name);
  const read = await readCluster(cluster, dir, opts.progress);
  if (read.kind !== 'read') return read;
  const { snapshot, snapshotDir } = read;
  const facts = deriveFacts(snapshot, opts.target);
  const report = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: opts.now() });
  const reportFile = join(dir, 'report.json');
  await writeFileAtomic(reportFile, renderReport(report, 'json', { color: false }));
  return {
    kind: 'audited',
    // A copy: findings point into the snapshot's objects, and the fleet keeps every report until
    // it renders, so the snapshot may go now. The rules' metadata is the same for every cluster: shared.
    report: { ...structuredClone({ ...report, rules: [] }), rules: report.rules },
    reportFile: shownPath(opts.cwd, reportFile),
    ...(snapshotDir !== undefined && { snapshotDir: shownPath(opts.cwd, snapshotDir) }),
  };
}
