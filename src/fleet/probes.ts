/**
 * The last probe figures of a cluster's run, from its journal: `ferry run` records one probe
 * observation per probe when it ends (stopped, failed or completed; a killed run records none), so
 * the newest run that recorded any is what the fleet status shows, and it says which run that was.
 * Pure: built from the journal's observation rows.
 */

/** One probe's figures, as `ferry run` prints them when it ends. */
export interface ProbeFigure {
  name: string;
  attempts: number;
  failures: number;
  longestFailureWindowMs: number;
  longestGapMs: number;
  /** Acknowledged writes lost (the etcd write probe). */
  lost?: number | string;
}

export interface ProbeFigures {
  runId: string;
  /** When that run's probes started. */
  startedAt: string;
  probes: ProbeFigure[];
  /** Probe records of that run that ferry could not read: said, never dropped silently. */
  unreadable: number;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function figureOf(data: unknown): { figure: ProbeFigure; startedAt?: string } | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { summary: s, startedAt } = data as { summary?: Record<string, unknown>; startedAt?: unknown };
  if (typeof s !== 'object' || s === null || typeof s['name'] !== 'string') return undefined;
  const { attempts, failures, longestFailureWindowMs, longestGapMs } = s;
  if (!isCount(attempts) || !isCount(failures) || !isCount(longestFailureWindowMs) || !isCount(longestGapMs))
    return undefined;
  const extra = s['extra'];
  const lost =
    typeof extra === 'object' && extra !== null ? (extra as Record<string, unknown>)['lost'] : undefined;
  return {
    figure: {
      name: s['name'],
      attempts,
      failures,
      longestFailureWindowMs,
      longestGapMs,
      ...((typeof lost === 'number' || typeof lost === 'string') && { lost }),
    },
    ...(typeof startedAt === 'string' && { startedAt }),
  };
}

/** The probe rows (purpose 'probe', journal order) of the newest run that recorded any. */
export function lastProbeFigures(
  rows: readonly { runId: string; at: string; data: unknown }[],
): ProbeFigures | undefined {
  const last = rows.at(-1);
  if (!last) return undefined;
  const mine = rows.filter((r) => r.runId === last.runId);
  const read = mine.map((r) => figureOf(r.data));
  const figures = read.filter((x) => x !== undefined);
  return {
    runId: last.runId,
    startedAt: figures.find((f) => f.startedAt)?.startedAt ?? mine[0]!.at,
    probes: figures.map((f) => f.figure),
    unreadable: read.length - figures.length,
  };
}

export function describeProbeFigure(p: ProbeFigure): string {
  return `${p.name} ${p.failures}/${p.attempts} failed, longest outage ${p.longestFailureWindowMs} ms, longest gap ${p.longestGapMs} ms${p.lost !== undefined ? `, acknowledged writes lost ${p.lost}` : ''}`;
}

export function describeProbeFigures(f: ProbeFigures): string {
  const parts = f.probes.map(describeProbeFigure);
  if (f.unreadable > 0) parts.push(`${f.unreadable} probe record(s) not readable`);
  return `probes of the run started ${f.startedAt}: ${parts.join(' · ')}`;
}
