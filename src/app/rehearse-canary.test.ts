import { expect, it } from 'vitest';
import type { Plan } from '../plan/model.js';
import type { ProbeRecord } from '../ports/run.js';
import type { TransitionRow } from '../run/journal.js';
import { canaryCheck, failuresByPart, phaseWindows } from './rehearse-canary.js';

const plan = {
  phases: [
    { id: 2, steps: [{ id: '2.01' }, { id: '2.02' }] },
    { id: 3, steps: [{ id: '3.01' }] },
  ],
} as unknown as Pick<Plan, 'phases'>;
const at = (s: number) => new Date(Date.parse('2026-12-01T00:00:00Z') + s * 1000).toISOString();
const row = (stepId: string, s: number) => ({ stepId, at: at(s) }) as TransitionRow;

it('splits failed canary requests into control planes and workers by the journal', () => {
  const windows = phaseWindows(plan, [row('2.01', 10), row('2.02', 20), row('3.01', 30), row('3.01', 40)]);
  expect(windows.map((w) => w.phase)).toEqual([2, 3]);
  const rec: ProbeRecord = {
    startedAt: at(0),
    summary: {
      name: 'canary-request',
      description: '',
      attempts: 100,
      failures: 3,
      longestFailureWindowMs: 40,
      longestGapMs: 50,
      longestGapAtMs: 0,
      errors: [{ message: 'connect ECONNREFUSED ADDR', count: 3 }],
      extra: { p99LatencyMs: 4.2 },
    },
    samples: [
      { t: 5_000, ok: false, latencyMs: 1 },
      { t: 15_000, ok: false, latencyMs: 1 },
      { t: 15_010, ok: true, latencyMs: 1 },
      { t: 35_000, ok: false, latencyMs: 1 },
    ],
  };
  expect(failuresByPart(rec, windows)).toEqual({ 'control planes': 1, workers: 1, elsewhere: 1 });
  const c = canaryCheck(rec, windows);
  expect(c.ok).toBe(false);
  expect(c.detail).toContain('3/100 requests failed (control planes: 1, workers: 1, elsewhere: 1)');
  expect(c.detail).toContain('p99 latency 4.2 ms');
  expect(canaryCheck({ ...rec, summary: { ...rec.summary, failures: 0 }, samples: [] }, windows).ok).toBe(
    true,
  );
  expect(canaryCheck(undefined, windows).ok).toBe(false);
});
