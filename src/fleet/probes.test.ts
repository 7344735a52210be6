import { describe, expect, it } from 'vitest';
import { describeProbeFigures, lastProbeFigures } from './probes.js';

const rec = (name: string, failures: number, extra?: Record<string, number>) => ({
  summary: {
    name,
    description: name,
    attempts: 100,
    failures,
    longestFailureWindowMs: failures * 10,
    longestGapMs: 40 + failures,
    longestGapAtMs: 5,
    errors: [],
    ...(extra && { extra }),
  },
  samples: [],
  startedAt: '2026-12-04T10:00:00.000Z',
});

describe("a cluster's last probe figures from its journal", () => {
  it('none before a run recorded any', () => {
    expect(lastProbeFigures([])).toBeUndefined();
  });

  it("the newest run's probes only, with what each measured", () => {
    const f = lastProbeFigures([
      { runId: 'r1', at: '2026-12-04T09:00:00Z', data: rec('api', 9) },
      { runId: 'r2', at: '2026-12-04T11:00:00Z', data: rec('api', 0) },
      { runId: 'r2', at: '2026-12-04T11:00:00Z', data: rec('etcd-write', 2, { lost: 0 }) },
    ]);
    expect(f).toEqual({
      runId: 'r2',
      startedAt: '2026-12-04T10:00:00.000Z',
      unreadable: 0,
      probes: [
        { name: 'api', attempts: 100, failures: 0, longestFailureWindowMs: 0, longestGapMs: 40 },
        {
          name: 'etcd-write',
          attempts: 100,
          failures: 2,
          longestFailureWindowMs: 20,
          longestGapMs: 42,
          lost: 0,
        },
      ],
    });
    expect(describeProbeFigures(f!)).toBe(
      'probes of the run started 2026-12-04T10:00:00.000Z: api 0/100 failed, longest outage 0 ms, longest gap 40 ms · etcd-write 2/100 failed, longest outage 20 ms, longest gap 42 ms, acknowledged writes lost 0',
    );
  });

  it('a record it cannot read is counted and said, not dropped', () => {
    const f = lastProbeFigures([
      { runId: 'r1', at: '2026-12-04T09:00:00Z', data: { summary: { name: 'api', attempts: 'many' } } },
      { runId: 'r1', at: '2026-12-04T09:00:00Z', data: null },
    ]);
    expect(f).toEqual({ runId: 'r1', startedAt: '2026-12-04T09:00:00Z', probes: [], unreadable: 2 });
    expect(describeProbeFigures(f!)).toBe(
      'probes of the run started 2026-12-04T09:00:00Z: 2 probe record(s) not readable',
    );
  });
});
