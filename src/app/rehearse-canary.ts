/**
 * The rehearsal's verdict on the canary's request probe: failed requests, the longest
 * failure window and the p99 latency, and where the failures fell: while control planes were
 * replaced (phases 2 and 4), while workers were (phase 3), or elsewhere. Phase windows come from
 * the journal (first to last transition of each phase's steps). Pure.
 */
import type { Plan } from '../plan/model.js';
import type { ProbeRecord } from '../ports/run.js';
import type { TransitionRow } from '../run/journal.js';
import type { ReportCheck } from '../run/report.js';

export const CANARY_PROBE = 'canary-request';

export type PhaseWindow = { phase: number; from: number; to: number };

export function phaseWindows(
  plan: Pick<Plan, 'phases'>,
  transitions: readonly TransitionRow[],
): PhaseWindow[] {
  const phaseOf = new Map(plan.phases.flatMap((p) => p.steps.map((s) => [s.id, p.id] as const)));
  const w = new Map<number, PhaseWindow>();
  for (const t of transitions) {
    const phase = phaseOf.get(t.stepId);
    const at = Date.parse(t.at);
    if (phase === undefined || !Number.isFinite(at)) continue;
    const cur = w.get(phase);
    if (!cur) w.set(phase, { phase, from: at, to: at });
    else {
      cur.from = Math.min(cur.from, at);
      cur.to = Math.max(cur.to, at);
    }
  }
  return [...w.values()].sort((a, b) => a.from - b.from);
}

type Where = 'control planes' | 'workers' | 'elsewhere';

/** Failed requests by where they fell. Every failure survives the record's thinning (session.ts). */
export function failuresByPart(rec: ProbeRecord, windows: readonly PhaseWindow[]): Record<Where, number> {
  const t0 = Date.parse(rec.startedAt);
  const out: Record<Where, number> = { 'control planes': 0, workers: 0, elsewhere: 0 };
  for (const s of rec.samples) {
    if (s.ok) continue;
    const at = t0 + s.t;
    const w = windows.find((x) => at >= x.from && at <= x.to);
    out[w?.phase === 3 ? 'workers' : w?.phase === 2 || w?.phase === 4 ? 'control planes' : 'elsewhere']++;
  }
  return out;
}

export function canaryCheck(rec: ProbeRecord | undefined, windows: readonly PhaseWindow[]): ReportCheck {
  const name = 'no failed canary request';
  if (!rec)
    return { name, ok: false, detail: 'no canary request probe ran (the lab has no canary Service front)' };
  const s = rec.summary;
  const parts = failuresByPart(rec, windows);
  const rolled = windows.map((w) => w.phase);
  const where = (['control planes', 'workers', 'elsewhere'] as const)
    .filter(
      (k) =>
        k === 'elsewhere' ||
        rolled.includes(k === 'workers' ? 3 : 2) ||
        (k === 'control planes' && rolled.includes(4)),
    )
    .map((k) => `${k}: ${parts[k]}`)
    .join(', ');
  return {
    name,
    ok: s.attempts > 0 && s.failures === 0,
    detail: `${s.failures}/${s.attempts} requests failed (${where}); longest failure window ${s.longestFailureWindowMs} ms; p99 latency ${s.extra?.['p99LatencyMs'] ?? '?'} ms${s.errors.length ? `; ${s.errors.map((e) => `${e.count}× ${e.message}`).join('; ')}` : ''}`,
  };
}
