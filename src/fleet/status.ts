/**
 * Where each cluster's migration stands, from what `ferry run` journals beside its plan (the
 * plans `ferry fleet plan` wrote): not planned, not started, in progress (no end recorded:
 * running now, or killed, which `--resume` continues), stopped at a gate or failed (with the
 * step and what the run said), or completed. Pure: built from the journal's rows.
 */
import type { ManagementBackup } from './backup-age.js';
import type { ProbeFigures } from './probes.js';
import type { ClusterVersions } from './versions.js';

export type Adoption =
  | { kind: 'capi'; management: string; namespace: string; cluster: string }
  /** Listed in the fleet file by kubeconfig or snapshot: not read from a management cluster. */
  | { kind: 'listed' };

/** One cluster's line of `ferry fleet status`. */
export interface ClusterStatusRow {
  name: string;
  labels: Record<string, string>;
  state: RunState;
  adoption: Adoption;
  versions: ClusterVersions;
  /** What the probes of the newest run that recorded any measured (none before a run ends). */
  lastProbes?: ProbeFigures;
}

export interface FleetStatus {
  /** When it was read. */
  generatedAt: string;
  clusters: ClusterStatusRow[];
  management: { name: string; backup: ManagementBackup }[];
}

/** How a run ended, as the run journal records it (the reader in src/app maps its rows to this). */
export type RunEnd = 'completed' | 'stopped' | 'failed';

export type RunState =
  /** A management cluster whose Clusters could not be listed: their states are not known. */
  | { kind: 'unlisted'; reason: string }
  | { kind: 'no-plan'; planFile: string }
  | { kind: 'not-started'; planFile: string; steps: number }
  | { kind: 'in-progress'; planFile: string; done: number; steps: number; current?: string; since: string }
  | {
      kind: 'stopped' | 'failed';
      planFile: string;
      done: number;
      steps: number;
      at?: string;
      message: string;
      remediation?: string;
      since: string;
    }
  | { kind: 'completed'; planFile: string; steps: number; since: string }
  /** A journal ferry could not read (locked past its wait, damaged): not seen, so not "fine". */
  | { kind: 'unreadable'; planFile: string; reason: string };

export interface JournalView {
  planFile: string;
  /** Steps of the plan, in order (the journal's catalogue of the plan it ran). */
  steps: { id: string; title: string }[];
  /** The last run-level end, if any, and when the latest run began. */
  lastEnd?: { state: RunEnd; at: string; detail: unknown; runId: string };
  latestRun?: { runId: string; startedAt: string };
  /** Steps finished (done, already done or skipped) in any run. */
  finished: ReadonlySet<string>;
}

const text = (v: unknown, key: string): string | undefined => {
  if (typeof v !== 'object' || v === null) return undefined;
  const x = (v as Record<string, unknown>)[key];
  return typeof x === 'string' ? x : undefined;
};

export function runState(j: JournalView): RunState {
  const steps = j.steps.length;
  if (!j.latestRun) return { kind: 'not-started', planFile: j.planFile, steps };
  const done = j.steps.filter((s) => j.finished.has(s.id)).length;
  const next = j.steps.find((s) => !j.finished.has(s.id));
  const ended = j.lastEnd && j.lastEnd.runId === j.latestRun.runId ? j.lastEnd : undefined;
  if (!ended)
    return {
      kind: 'in-progress',
      planFile: j.planFile,
      done,
      steps,
      ...(next && { current: `${next.id} ${next.title}` }),
      since: j.latestRun.startedAt,
    };
  switch (ended.state) {
    case 'completed':
      return { kind: 'completed', planFile: j.planFile, steps, since: ended.at };
    case 'stopped':
    case 'failed': {
      const remediation = text(ended.detail, 'remediation');
      return {
        kind: ended.state,
        planFile: j.planFile,
        done,
        steps,
        ...(next && { at: `${next.id} ${next.title}` }),
        message: text(ended.detail, 'message') ?? '(no message recorded)',
        ...(remediation !== undefined && { remediation }),
        since: ended.at,
      };
    }
  }
}

export function describeRunState(s: RunState): string {
  switch (s.kind) {
    case 'no-plan':
      return `no plan at ${s.planFile} (ferry fleet plan writes it)`;
    case 'not-started':
      return `planned, not started (${s.steps} steps)`;
    case 'in-progress':
      return `in progress since ${s.since}: ${s.done}/${s.steps} steps${s.current ? `, next ${s.current}` : ''} (no end recorded: running, or killed: ferry run --resume continues it)`;
    case 'stopped':
    case 'failed':
      return `${s.kind} ${s.since}${s.at ? ` at ${s.at}` : ''} (${s.done}/${s.steps} steps): ${s.message}${s.remediation ? `; ${s.remediation}` : ''}`;
    case 'completed':
      return `completed ${s.since} (${s.steps} steps)`;
    case 'unreadable':
      return `journal not readable: ${s.reason}`;
    case 'unlisted':
      return `its clusters are not known: ${s.reason}`;
  }
}

/**
 * Exit 1 for what someone must look at: a stopped or failed run, a journal ferry could not read, a
 * management cluster whose Clusters could not be listed.
 */
export function needsAttention(s: RunState): boolean {
  return s.kind === 'stopped' || s.kind === 'failed' || s.kind === 'unreadable' || s.kind === 'unlisted';
}
