import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs } from '../lab/etcd/cluster.js';
import { skipFor } from '../lab/testing-binaries.js';
import type { StepKind } from '../plan/model.js';
import { scaled } from '../util/testing-slowness.js';
import { crashRun, disposeAllCrashLabs } from './testing-crash-sweep.js';

// The crash sweep's CI sample (scripts/crash-sweep.ts runs every kind): one lab on 127.0.51.x, the
// run SIGKILLed in the middle of a step of three kinds of different shapes, resumed to the end.
// - wait-member-voter: long-running, nothing of its own to do (killed while it verifies);
// - lb-remove: a load-balancer change through the lab control socket (killed once it took effect);
// - decommission: destructive (killed while the machine powers off).
afterAll(async () => {
  await disposeAllCrashLabs();
  await disposeAllLabs();
});

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

const KINDS: StepKind[] = ['wait-member-voter', 'lb-remove', 'decommission'];

it(
  'killed in a wait-member-voter, an lb-remove and a decommission step, --resume completes and every invariant holds',
  async ({ skip }) => {
    if (skipFor(missing)) skip(missing);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-crash-sweep-'));
    const lines: string[] = [];
    try {
      const r = await crashRun({ dir, subnet: 51, kinds: KINDS, keep: true, log: (l) => lines.push(l) });
      const runs = existsSync(join(dir, 'runs.log')) ? readFileSync(join(dir, 'runs.log'), 'utf8') : '';
      const why = `${lines.join('\n')}\n--- runs.log (end) ---\n${runs.slice(-6000)}`;
      expect(
        r.targets.map((t) => [t.kind, t.error]),
        why,
      ).toEqual(KINDS.map((k) => [k, undefined]));
      // Each was hit in its middle: after its action-started, before its done.
      for (const t of r.targets) {
        expect(t.stepId, why).toMatch(new RegExp(`\\.${t.kind}\\.`));
        expect(['action-started', 'action-done'], why).toContain(t.moment);
      }
      expect(r.targets.find((t) => t.kind === 'wait-member-voter')?.moment).toBe('action-done');
      expect(r.targets.find((t) => t.kind === 'lb-remove')?.effectSeen, why).toBe(true);
      expect(r.completed, why).toBe(true);
      expect(
        r.invariants.filter((i) => !i.ok),
        why,
      ).toEqual([]);
      expect(r.invariants.map((i) => i.name)).toEqual(
        expect.arrayContaining([
          'no destructive action twice',
          'no node left cordoned that the plan did not cordon',
          'no API error through the endpoint',
          'no acknowledged write lost',
          'etcd membership as planned',
        ]),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
  scaled(600_000),
);
