import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan, Step } from '../plan/model.js';
import type { ObservationRow, TransitionRow } from './journal.js';
import { TerminalOperator } from './operator.js';
import { type ReportInput, renderReportHtml, renderReportMarkdown, timeline } from './report.js';
import { resumePoint } from './resume.js';

const steps = [
  {
    id: '2.01.cordon.cp-1',
    kind: 'cordon',
    subject: 'cp-1',
    phase: 2,
    title: 'Cordon cp-1',
    destructive: false,
  },
  {
    id: '2.02.drain.cp-1',
    kind: 'drain',
    subject: 'cp-1',
    phase: 2,
    title: 'Drain cp-1',
    destructive: false,
  },
  {
    id: '2.03.etcd-remove-member.cp-1',
    kind: 'etcd-remove-member',
    subject: 'cp-1',
    phase: 2,
    title: 'Remove <cp-1>',
    destructive: true,
  },
] as unknown as Step[];

let seq = 0;
function tr(stepId: string, state: TransitionRow['state'], at: string, attempt = 1): TransitionRow {
  return { seq: ++seq, runId: 'r', stepId, attempt, state, at: `2026-01-01T00:00:${at}Z`, detail: null };
}

describe('resume point', () => {
  it('finds finished steps and the step in flight, and whether its action had started', () => {
    const t = [
      tr('2.01.cordon.cp-1', 'started', '01'),
      tr('2.01.cordon.cp-1', 'done', '02'),
      tr('2.02.drain.cp-1', 'started', '03'),
      tr('2.02.drain.cp-1', 'action-started', '04'),
    ];
    const p = resumePoint(t, [], steps);
    expect([...p.finished]).toEqual(['2.01.cordon.cp-1']);
    expect(p.inFlight).toEqual([
      {
        stepId: '2.02.drain.cp-1',
        last: 'action-started',
        actionStarted: true,
        attempt: 1,
      },
    ]);
    // A second attempt that only got to its gate: its action did not start.
    const again = resumePoint(
      [...t, tr('2.02.drain.cp-1', 'started', '05', 2), tr('2.02.drain.cp-1', 'stopped', '06', 2)],
      [],
      steps,
    );
    expect(again.inFlight).toMatchObject([{ last: 'stopped', actionStarted: false, attempt: 2 }]);
  });

  it('finds every step of a concurrent group in flight, oldest last transition first', () => {
    const t = [
      tr('3.08.cordon.worker-1', 'started', '01'),
      tr('3.09.cordon.worker-2', 'started', '01'),
      tr('3.09.cordon.worker-2', 'action-started', '02'),
      tr('3.08.cordon.worker-1', 'gate-passed', '03'),
      tr('3.10.cordon.worker-3', 'started', '03'),
      tr('3.10.cordon.worker-3', 'done', '04'),
    ];
    const p = resumePoint(t, [], steps);
    expect([...p.finished]).toEqual(['3.10.cordon.worker-3']);
    expect(p.inFlight).toEqual([
      { stepId: '3.09.cordon.worker-2', last: 'action-started', actionStarted: true, attempt: 1 },
      { stepId: '3.08.cordon.worker-1', last: 'gate-passed', actionStarted: false, attempt: 1 },
    ]);
  });

  it("runs cordon and drain again after the run restored the node's cordon", () => {
    const t = [
      tr('2.01.cordon.cp-1', 'started', '01'),
      tr('2.01.cordon.cp-1', 'done', '02'),
      tr('2.02.drain.cp-1', 'started', '03'),
      tr('2.02.drain.cp-1', 'stopped', '09'),
    ];
    const restored: ObservationRow = {
      seq: 1,
      runId: 'r',
      stepId: '2.02.drain.cp-1',
      purpose: 'cordon-restored',
      at: '2026-01-01T00:00:10Z',
      ok: true,
      data: { node: 'cp-1', subject: 'cp-1' },
    };
    const p = resumePoint(t, [restored], steps);
    expect(p.finished.size).toBe(0);
    expect(p.rewound.map((r) => r.stepId)).toEqual(['2.01.cordon.cp-1']);
  });
});

describe('report', () => {
  const plan = {
    phases: [{ id: 2, steps }],
    strategy: 'surge',
    target: { talosVersion: 'v1.13.9' },
    controlPlanes: [{}, {}, {}],
    cluster: { name: 'lab' },
  } as unknown as Plan;
  const input: ReportInput = {
    title: 'ferry rehearse: lab <test>',
    plan,
    planFile: 'plan.json',
    runs: [
      {
        runId: 'abcdef1234',
        lineage: 'l',
        planFile: 'plan.json',
        planDigest: 'd',
        pid: 42,
        host: 'h',
        startedAt: '2026-01-01T00:00:00Z',
        resumedFrom: null,
      },
    ],
    transitions: [
      tr('2.01.cordon.cp-1', 'started', '01'),
      tr('2.01.cordon.cp-1', 'done', '02'),
      tr('2.03.etcd-remove-member.cp-1', 'started', '03'),
      tr('2.03.etcd-remove-member.cp-1', 'done', '05'),
    ],
    runEnds: [tr('', 'completed', '06')],
    probes: [
      {
        startedAt: '2026-01-01T00:00:00Z',
        samples: [
          { t: 0, ok: true, latencyMs: 3 },
          { t: 1000, ok: false, latencyMs: 300, error: 'no answer within 300 ms' },
          { t: 1300, ok: true, latencyMs: 4 },
        ],
        summary: {
          name: 'etcd-write',
          description: 'sequential puts',
          attempts: 3,
          failures: 1,
          longestFailureWindowMs: 304,
          longestGapMs: 1301,
          longestGapAtMs: 3,
          errors: [{ message: 'no answer within 300 ms', count: 1 }],
          extra: { lost: 0, acknowledged: 2 },
        },
      },
    ],
    notes: ['etcd 3.4.23 stands in for 3.5.16'],
    checks: [{ name: 'no acknowledged write lost', ok: true, detail: '2 read back' }],
  };

  it('builds a timeline of steps with durations and outcomes', () => {
    const spans = timeline(input);
    expect(spans.map((s) => [s.id, s.outcome, s.end - s.start])).toEqual([
      ['2.01.cordon.cp-1', 'done', 1000],
      ['2.03.etcd-remove-member.cp-1', 'done', 2000],
    ]);
  });

  it('renders Markdown and one self-contained, escaped HTML page with an SVG plot', () => {
    const md = renderReportMarkdown(input);
    expect(md).toContain('- outcome: **completed**');
    expect(md).toContain('| etcd-write | 3 | 1 | 304 ms | 1301 ms | 0 |');
    expect(md).toContain('| no acknowledged write lost | pass | 2 read back |');
    expect(md).toContain('**(destructive)**');
    const html = renderReportHtml(input);
    expect(html).toContain('<svg');
    expect(html).toContain('lab &lt;test&gt;');
    expect(html).not.toContain('<test>');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script|<link|src="http/);
  });
});

describe('terminal operator without a terminal', () => {
  it('takes its answer from a file beside the plan', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-op-'));
    try {
      const said: string[] = [];
      const op = new TerminalOperator({
        say: (l) => said.push(l),
        confirmDir: dir,
        interactive: false,
        pollMs: 10,
      });
      const answer = op.ask(
        '5.03.manual.cluster',
        'every Talos member healthy?',
        new AbortController().signal,
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(said.join('\n')).toContain(`touch ${join(dir, '5.03.manual.cluster.yes')}`);
      await writeFile(join(dir, '5.03.manual.cluster.no'), '');
      expect(await answer).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
