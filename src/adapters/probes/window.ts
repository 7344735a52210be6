/**
 * Availability figures from a series of probe samples (pure). The figure that matters is the
 * longest *consecutive* failure window (lessons.md: one long outage is not the same as scattered
 * errors), and for write probes the longest gap between two acknowledged writes.
 */
import type { ProbeSample, ProbeSummary } from '../../ports/run.js';

/** When a sample's answer arrived (its acknowledgement), ms since the probe started. */
export function ackTime(s: ProbeSample): number {
  return s.t + s.latencyMs;
}

export function summarize(
  name: string,
  description: string,
  samples: readonly ProbeSample[],
  extra?: Record<string, number | string>,
): ProbeSummary {
  let failures = 0;
  let longestFailureWindowMs = 0;
  let windowStart: number | undefined;
  let longestGapMs = 0;
  let longestGapAtMs = 0;
  let lastAck: number | undefined;
  const errors = new Map<string, number>();
  for (const s of samples) {
    if (s.ok) {
      const ack = ackTime(s);
      if (windowStart !== undefined)
        longestFailureWindowMs = Math.max(longestFailureWindowMs, ack - windowStart);
      windowStart = undefined;
      if (lastAck !== undefined && ack - lastAck > longestGapMs) {
        longestGapMs = ack - lastAck;
        longestGapAtMs = lastAck;
      }
      lastAck = ack;
    } else {
      failures++;
      windowStart ??= s.t;
      const key = normalizeError(s.error ?? 'failed');
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
  }
  // A window still open at the end lasts until the last sample's answer.
  const last = samples.at(-1);
  if (windowStart !== undefined && last)
    longestFailureWindowMs = Math.max(longestFailureWindowMs, ackTime(last) - windowStart);
  return {
    name,
    description,
    attempts: samples.length,
    failures,
    longestFailureWindowMs: Math.round(longestFailureWindowMs),
    longestGapMs: Math.round(longestGapMs),
    longestGapAtMs: Math.round(longestGapAtMs),
    errors: [...errors.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([message, count]) => ({ message, count })),
    ...(extra && { extra }),
  };
}

export interface Gap {
  /** Acknowledgement that opened the gap, ms since the probe started. */
  fromMs: number;
  gapMs: number;
  /** Attempts that failed inside the gap, and their errors. */
  failures: number;
  errors: string[];
}

/** The `n` longest gaps between two acknowledged attempts, longest first: where a stall happened. */
export function longestGaps(samples: readonly ProbeSample[], n: number): Gap[] {
  const gaps: Gap[] = [];
  let lastAck: number | undefined;
  let failed: ProbeSample[] = [];
  for (const s of samples) {
    if (!s.ok) {
      failed.push(s);
      continue;
    }
    const ack = ackTime(s);
    if (lastAck !== undefined) {
      gaps.push({
        fromMs: lastAck,
        gapMs: ack - lastAck,
        failures: failed.length,
        errors: [...new Set(failed.map((f) => normalizeError(f.error ?? 'failed')))],
      });
    }
    lastAck = ack;
    failed = [];
  }
  return gaps.sort((a, b) => b.gapMs - a.gapMs).slice(0, n);
}

/** Groups "connect ECONNREFUSED 127.0.20.1:6443" and the like without their variable parts. */
export function normalizeError(msg: string): string {
  return msg
    .replace(/\b\d+(\.\d+){3}(:\d+)?\b/g, 'ADDR')
    .replace(/\b\d{4,}\b/g, 'N')
    .slice(0, 200);
}

/**
 * At most `max` points for a plot: every failure is kept, successes are thinned evenly. The
 * longest gap survives because its two ends are kept.
 */
export function downsample(samples: readonly ProbeSample[], max: number): ProbeSample[] {
  if (samples.length <= max) return [...samples];
  const keep = new Set<number>();
  samples.forEach((s, i) => {
    if (!s.ok) {
      keep.add(i);
      if (i > 0) keep.add(i - 1);
      if (i + 1 < samples.length) keep.add(i + 1);
    }
  });
  // Keep the biggest gaps' ends.
  const gaps = samples
    .map((s, i) => ({ i, gap: i > 0 ? ackTime(s) - ackTime(samples[i - 1]!) : 0 }))
    .sort((a, b) => b.gap - a.gap)
    .slice(0, 20);
  for (const g of gaps) {
    keep.add(g.i);
    if (g.i > 0) keep.add(g.i - 1);
  }
  const room = Math.max(0, max - keep.size);
  const step = samples.length / Math.max(1, room);
  for (let x = 0; x < samples.length && keep.size < max; x += step) keep.add(Math.floor(x));
  return [...keep].sort((a, b) => a - b).map((i) => samples[i]!);
}
