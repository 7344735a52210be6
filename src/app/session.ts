/**
 * One `ferry run` from start to end, around the orchestrator: the journal beside the plan, the
 * local lock and the cluster Lease, the probes for the whole run (their summaries and a thinned
 * series journalled for the report), and the checks that keep a journal to one plan.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { downsample } from '../adapters/probes/window.js';
import { FerryError, usageError } from '../errors.js';
import { allSteps, type Plan } from '../plan/model.js';
import type { Probe, ProbeRecord, ProbeSummary } from '../ports/run.js';
import type { RunDeps, RunOptions, RunResult } from '../run/deps.js';
import { Journal, journalPathFor } from '../run/journal.js';
import {
  acquireLease,
  acquireLocalLock,
  type ClusterLease,
  type LocalLock,
  lockPathFor,
} from '../run/lock.js';
import { runPlan } from '../run/orchestrator.js';

export interface SessionOptions {
  planFile: string;
  plan: Plan;
  ports: Omit<RunDeps, 'plan' | 'planFile' | 'journal' | 'log' | 'signal' | 'interrupt'>;
  probes?: Probe[];
  run?: RunOptions;
  /** Take the coordination.k8s.io Lease. Default true. */
  lease?: boolean;
  /** Seconds between live probe lines. Default 10. */
  liveSeconds?: number;
  log: (line: string) => void;
  signal?: AbortSignal;
}

export interface SessionResult {
  result: RunResult;
  probes: ProbeRecord[];
  journalFile: string;
  runId: string;
}

export function planDigest(planFile: string): string {
  return createHash('sha256').update(readFileSync(planFile)).digest('hex');
}

/** A journal keeps to one plan: one whose runs were made for another plan is refused. */
function assertJournalOfPlan(
  journalFile: string,
  prior: string | undefined,
  planFile: string,
  digest: string,
): void {
  if (prior !== undefined && prior !== digest) {
    throw new FerryError(
      'input',
      `the journal ${journalFile} belongs to another plan (its runs were made for a plan with digest ${prior.slice(0, 12)}…)`,
      {
        location: { file: planFile },
        remediation:
          'run the plan the journal was made for, or move the journal away to start over with this plan',
      },
    );
  }
}

/**
 * The checks runSession makes of the journal beside the plan, made without starting a run or
 * writing anything: for `ferry run --dry-run`, before it connects.
 */
export function checkJournal(planFile: string): void {
  const journalFile = journalPathFor(planFile);
  const found = Journal.peek(journalFile);
  if (found) assertJournalOfPlan(journalFile, found.planDigest, planFile, planDigest(planFile));
}

export async function runSession(o: SessionOptions): Promise<SessionResult> {
  const journalFile = journalPathFor(o.planFile);
  const digest = planDigest(o.planFile);
  const journal = Journal.open(journalFile);
  let lock: LocalLock | undefined;
  let lease: ClusterLease | undefined;
  const probes = o.probes ?? [];
  let live: NodeJS.Timeout | undefined;
  try {
    assertJournalOfPlan(journalFile, journal.planDigest(), o.planFile, digest);
    const runs = journal.runs();
    const lastEnd = journal.runEnds().at(-1);
    if (runs.length > 0 && !o.run?.resume) {
      throw lastEnd?.state === 'completed'
        ? usageError(
            `the plan ${o.planFile} was run to completion already (journal ${journalFile})`,
            'nothing to do; build a new plan for further changes',
          )
        : usageError(
            `a run of ${o.planFile} did not finish (journal ${journalFile}); ferry continues it only when asked`,
            'run the same command with --resume: the step in flight is re-observed before anything is done',
          );
    }
    if (o.run?.resume && lastEnd?.state === 'completed' && runs.length > 0) {
      throw usageError(`the plan ${o.planFile} was run to completion already`, 'nothing to resume');
    }
    const runId = randomUUID();
    lock = await acquireLocalLock(lockPathFor(o.planFile), { lineage: journal.lineage, runId });
    if (lock.replaced)
      o.log(`lock: took over the lock of run ${lock.replaced.runId} (pid ${lock.replaced.pid}, gone)`);
    if (o.lease !== false) lease = await acquireLease(o.ports.kube, { lineage: journal.lineage, runId });
    const steps = allSteps(o.plan);
    journal.beginRun({
      planFile: o.planFile,
      planDigest: digest,
      runId,
      steps: steps.map((s, i) => ({
        id: s.id,
        position: i + 1,
        kind: s.kind,
        subject: s.subject,
        destructive: s.destructive,
        title: s.title,
      })),
      ...(runs.length > 0 && { resumedFrom: runs.at(-1)!.runId }),
    });
    // The members the last run saw: the endpoints given on the command line may be gone by now.
    const known = journal
      .observations({ purpose: 'note' })
      .map((n) => (n.data as { etcdEndpoints?: string[] } | null)?.etcdEndpoints)
      .filter((e): e is string[] => Array.isArray(e))
      .at(-1);
    if (known && known.length > 0) {
      o.ports.etcd.useEndpoints(known);
      await o.ports.etcdProbe?.setEndpoints(known);
      o.log(`resume: etcd endpoints from the journal: ${known.join(', ')}`);
    }
    const startedAt = new Date().toISOString();
    for (const p of probes) p.start();
    if (probes.length > 0) {
      live = setInterval(
        () => o.log(`probes: ${probes.map((p) => liveLine(p.summary())).join(' · ')}`),
        (o.liveSeconds ?? 10) * 1000,
      );
      live.unref();
    }
    const result = await runPlan(
      {
        ...o.ports,
        plan: o.plan,
        planFile: o.planFile,
        journal,
        log: o.log,
        ...(o.signal && { signal: o.signal }),
        interrupt: () => (lease?.lost ? 'another run took the cluster Lease' : undefined),
      },
      o.run ?? {},
    );
    clearInterval(live);
    const records: ProbeRecord[] = [];
    for (const p of probes) {
      const summary = await p.stop();
      const rec: ProbeRecord = { summary, samples: downsample(p.samples(), 600), startedAt };
      records.push(rec);
      journal.observe(null, 'probe', summary.failures === 0, rec);
    }
    return { result, probes: records, journalFile, runId };
  } finally {
    clearInterval(live);
    await Promise.allSettled(probes.map((p) => p.stop()));
    await lease?.release();
    await lock?.release();
    journal.close();
  }
}

function liveLine(s: ProbeSummary): string {
  const longest =
    s.name === 'etcd-write'
      ? `longest gap ${s.longestGapMs} ms`
      : `longest outage ${s.longestFailureWindowMs} ms`;
  return `${s.name} ${s.failures} error(s), ${longest}`;
}
