/**
 * The rehearsal's report is built from its journal like a run's: the worker batches' table counts
 * the pods each batch's drain moved (the journaled drain progress), never "—". A real SQLite journal.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Plan } from '../plan/model.js';
import { Journal } from '../run/journal.js';
import { writeRehearsalReport } from './rehearse.js';

const step = (id: string, batch: number) => ({
  id,
  phase: 3,
  batch,
  kind: 'drain-batch',
  subject: id,
  title: id,
  destructive: false,
});
const plan = {
  cluster: { name: 'lab' },
  strategy: 'surge',
  target: { talosVersion: 'v1.11.0' },
  controlPlanes: [],
  phases: [{ id: 3, steps: [step('3.01.drain-batch.w1', 1), step('3.02.drain-batch.w3', 2)] }],
  workerRoll: {
    batches: [
      { index: 1, nodes: ['w1', 'w2'], seconds: 40, why: '2 nodes: PodDisruptionBudget shop/web' },
      { index: 2, nodes: ['w3'], seconds: 30, why: '1 node: --max-unavailable 1' },
    ],
    estimate: { seconds: 70, lowerBoundSeconds: 50, surgeSeconds: 0, lowerBound: [], assumptions: [] },
  },
} as unknown as Plan;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("the rehearsal report's batch table counts the pods each batch moved, from the journal", async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-rehearse-report-'));
  const journalFile = join(dir, 'plan.journal.sqlite');
  const j = Journal.open(journalFile);
  j.beginRun({
    planFile: 'plan.json',
    planDigest: 'd',
    steps: plan.phases[0]!.steps.map((s, position) => ({ ...s, position })),
  });
  const evict = (stepId: string, node: string, pod: string) =>
    j.observe(stepId, 'drain-progress', null, {
      kind: 'evicted',
      evicted: { node, pod, uid: pod, controller: { kind: 'ReplicaSet', name: 'web-1' } },
    });
  j.transition('3.01.drain-batch.w1', 1, 'started');
  evict('3.01.drain-batch.w1', 'w1', 'shop/a');
  evict('3.01.drain-batch.w1', 'w2', 'shop/b');
  j.observe('3.01.drain-batch.w1', 'drain-progress', null, { kind: 'node-drained', node: 'w1', ms: 5 });
  j.transition('3.01.drain-batch.w1', 1, 'done');
  j.transition('3.02.drain-batch.w3', 1, 'started');
  j.transition('3.02.drain-batch.w3', 1, 'done');
  j.endRun('completed');
  j.close();

  const [md] = await writeRehearsalReport(dir, plan, 'plan.json', journalFile, [], []);
  const rows = (await readFile(md!, 'utf8')).split('\n').filter((l) => /^\| \d+ \| w/.test(l));
  // batch | nodes | pods moved | …: 2 evicted in batch 1; none in batch 2 is 0, not "—".
  expect(
    rows.map((r) =>
      r
        .split('|')
        .slice(1, 4)
        .map((c) => c.trim()),
    ),
  ).toEqual([
    ['1', 'w1, w2', '2'],
    ['2', 'w3', '0'],
  ]);
});
