import { describe, expect, it } from 'vitest';
import { describeRunState, needsAttention, runState } from './status.js';

const steps = [
  { id: '0.01', title: 'preflight' },
  { id: '1.01', title: 'prepare' },
  { id: '2.01', title: 'add cp-1' },
];
const base = { planFile: 'p/plan.json', steps };

describe('a cluster run state from its journal', () => {
  it('not started, in progress (no end recorded), stopped with the step and the message, completed', () => {
    expect(runState({ ...base, finished: new Set() })).toEqual({
      kind: 'not-started',
      planFile: 'p/plan.json',
      steps: 3,
    });
    const latestRun = { runId: 'r2', startedAt: '2026-12-04T10:00:00Z' };
    const running = runState({ ...base, finished: new Set(['0.01']), latestRun });
    expect(running).toMatchObject({ kind: 'in-progress', done: 1, current: '1.01 prepare' });
    expect(describeRunState(running)).toContain('ferry run --resume continues it');
    expect(needsAttention(running)).toBe(false);
    // An end of an earlier run does not end this one.
    const older = runState({
      ...base,
      finished: new Set(['0.01']),
      latestRun,
      lastEnd: { state: 'stopped', at: '2026-12-04T09:00:00Z', detail: { message: 'old' }, runId: 'r1' },
    });
    expect(older.kind).toBe('in-progress');
    const stopped = runState({
      ...base,
      finished: new Set(['0.01', '1.01']),
      latestRun,
      lastEnd: {
        state: 'stopped',
        at: '2026-12-04T10:05:00Z',
        detail: { message: 'gate: etcd has 2 voters, expected 3', remediation: 'check etcd' },
        runId: 'r2',
      },
    });
    expect(stopped).toMatchObject({
      kind: 'stopped',
      done: 2,
      at: '2.01 add cp-1',
      message: 'gate: etcd has 2 voters, expected 3',
    });
    expect(describeRunState(stopped)).toBe(
      'stopped 2026-12-04T10:05:00Z at 2.01 add cp-1 (2/3 steps): gate: etcd has 2 voters, expected 3; check etcd',
    );
    expect(needsAttention(stopped)).toBe(true);
    const done = runState({
      ...base,
      finished: new Set(['0.01', '1.01', '2.01']),
      latestRun,
      lastEnd: { state: 'completed', at: '2026-12-04T11:00:00Z', detail: { steps: 3 }, runId: 'r2' },
    });
    expect(done).toEqual({
      kind: 'completed',
      planFile: 'p/plan.json',
      steps: 3,
      since: '2026-12-04T11:00:00Z',
    });
    expect(needsAttention({ kind: 'unreadable', planFile: 'x', reason: 'database is locked' })).toBe(true);
  });
});
