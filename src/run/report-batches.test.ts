import { describe, expect, it } from 'vitest';
import type { Plan } from '../plan/model.js';
import type { ObservationRow, TransitionRow } from './journal.js';
import { type ReportInput, renderReportHtml, renderReportMarkdown } from './report.js';
import { batchReport } from './report-batches.js';

const step = (id: string, batch: number) => ({
  id,
  phase: 3,
  batch,
  kind: 'drain-batch',
  title: id,
  destructive: false,
});
const plan = {
  strategy: 'surge',
  target: { talosVersion: 'v1.11.0' },
  controlPlanes: [],
  phases: [
    {
      id: 3,
      steps: [
        step('3.01.gate.w1', 1),
        step('3.02.drain-batch.w1', 1),
        step('3.03.gate.w3', 2),
        step('3.04.drain-batch.w3', 2),
      ],
    },
  ],
  workerRoll: {
    batches: [
      {
        index: 1,
        nodes: ['w1', 'w2'],
        seconds: 40,
        why: '2 nodes: PodDisruptionBudget shop/web allows 2 disruptions',
      },
      { index: 2, nodes: ['w3'], seconds: 30, why: '1 node: --max-unavailable 1' },
    ],
    estimate: { seconds: 70, lowerBoundSeconds: 50, surgeSeconds: 0, lowerBound: [], assumptions: [] },
  },
} as unknown as Plan;

let seq = 0;
const tr = (stepId: string, state: TransitionRow['state'], s: number): TransitionRow => ({
  seq: ++seq,
  runId: 'r',
  stepId,
  attempt: 1,
  state,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(),
  detail: null,
});
const evicted = (stepId: string, pod: string): ObservationRow => ({
  seq: ++seq,
  runId: 'r',
  stepId,
  purpose: 'drain-progress',
  at: '',
  ok: null,
  data: { kind: 'evicted', evicted: { node: 'w1', pod, uid: pod, controller: null } },
});
const transitions = [
  tr('3.01.gate.w1', 'started', 0),
  tr('3.02.drain-batch.w1', 'done', 20),
  tr('3.03.gate.w3', 'started', 21),
  tr('3.04.drain-batch.w3', 'done', 60),
];
const drainProgress = [
  evicted('3.02.drain-batch.w1', 'shop/a'),
  evicted('3.02.drain-batch.w1', 'shop/b'),
  evicted('3.04.drain-batch.w3', 'shop/c'),
  { ...evicted('3.04.drain-batch.w3', 'x'), data: { kind: 'node-drained', node: 'w3', ms: 1 } },
];

describe('worker batches in the run report', () => {
  it('per batch: nodes, pods moved, time, what bounded it; the makespan against the lower bound', () => {
    const r = batchReport({ plan, transitions, drainProgress })!;
    expect(r.rows).toEqual([
      {
        index: 1,
        nodes: ['w1', 'w2'],
        podsMoved: 2,
        seconds: 20,
        plannedSeconds: 40,
        boundBy: '2 nodes: PodDisruptionBudget shop/web allows 2 disruptions',
        outcome: 'done',
      },
      {
        index: 2,
        nodes: ['w3'],
        podsMoved: 1,
        seconds: 39,
        plannedSeconds: 30,
        boundBy: '1 node: --max-unavailable 1',
        outcome: 'done',
      },
    ]);
    expect(r.makespanSeconds).toBe(60);
    expect(r.lowerBoundSeconds).toBe(50);
  });

  it('is in the Markdown and HTML reports', () => {
    const input = {
      title: 't',
      plan,
      planFile: 'p',
      runs: [],
      transitions,
      runEnds: [],
      probes: [],
      drainProgress,
    } as ReportInput;
    const md = renderReportMarkdown(input);
    expect(md).toContain('## Worker batches');
    expect(md).toContain(
      '| 1 | w1, w2 | 2 | 20.0 s | 40.0 s | 2 nodes: PodDisruptionBudget shop/web allows 2 disruptions | done |',
    );
    expect(md).toContain(
      "Makespan 60.0 s: 1.20× the plan's lower bound (50.0 s); the plan estimated 70.0 s.",
    );
    const html = renderReportHtml(input);
    expect(html).toContain('<h2>Worker batches</h2>');
    expect(html).toContain('1.20×');
  });

  it('without the drain progress, pods moved is unknown, not zero', () => {
    expect(batchReport({ plan, transitions })!.rows.map((r) => r.podsMoved)).toEqual([null, null]);
  });
});
