import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs } from '../lab/etcd/cluster.js';
import { apiPath } from '../lab/nodes/world.js';
import { skipFor } from '../lab/testing-binaries.js';
import { allSteps } from '../plan/model.js';
import { Journal, journalPathFor } from './journal.js';
import { CrashLab, disposeAllCrashLabs, pinnedDeployment } from './testing-crash-sweep.js';

// SIGKILL the `ferry run` process at three moments and resume it each time. The lab lives in this
// process (subnet 127.0.45.x), the run in a child driving it over the lab control socket
// (src/run/testing-crash-sweep.ts: CrashLab, shared with the crash sweep).
afterAll(async () => {
  await disposeAllCrashLabs();
  await disposeAllLabs();
});

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

it('killed after a member add, during a drain and right after a member remove, --resume completes and no destructive step runs twice', async ({
  skip,
}) => {
  if (skipFor(missing)) skip(missing);
  const dir = await mkdtemp(join(tmpdir(), 'ferry-kill-'));
  const cl = await CrashLab.start({ dir, subnet: 45 });
  const { lab, planFile, plan } = cl;
  const start = (resume: boolean) => cl.start({ resume });
  const killWhen = cl.killWhen.bind(cl);
  const journalSays = cl.journalSays.bind(cl);
  const memberNames = async () => (await lab.etcd.memberList()).map((m) => m.name || `unstarted:${m.ID}`);

  try {
    // 1. Killed right after the Talos member was added (as a learner) for the first control plane.
    const first = plan.controlPlanes[0]!.node;
    const run1 = start(false);
    await killWhen(run1, 'a member add', async () => (await lab.etcd.memberList()).length === 4);

    // 2. Killed during the drain of the second control plane: a pod pinned to it takes 4 s to stop.
    const second = plan.controlPlanes[1]!.node;
    await lab.client.create(apiPath('apps/v1', 'deployments', 'default'), pinnedDeployment(second));
    expect((await lab.waitSettled(30_000)).pending).toEqual([]);
    const slow = await lab.inject({ kind: 'slow-drain', node: second, graceSeconds: 4 });
    const evictedBefore = lab.evictionLog.all().filter((e) => e.outcome === 'evicted').length;
    const run2 = start(true);
    await killWhen(
      run2,
      `a drain of ${second}`,
      async () =>
        (await journalSays((j) =>
          j.transitions().some((t) => t.stepId.endsWith(`drain.${second}`) && t.state === 'action-started'),
        )()) && lab.evictionLog.all().filter((e) => e.outcome === 'evicted').length > evictedBefore,
    );
    await slow.clear();

    // 3. Killed right after the etcd member of that control plane was removed.
    const run3 = start(true);
    await killWhen(
      run3,
      `the removal of ${second}'s member`,
      async () => !(await memberNames()).includes(second),
    );

    // 4. Resumed to the end.
    const run4 = start(true);
    const end = await run4.exit;
    expect(end.code, run4.out.join('').slice(-4000)).toBe(0);

    const names = await memberNames();
    expect(names.sort()).toEqual(plan.controlPlanes.map((c) => c.replacement.name!).sort());
    expect(lab.evictionLog.violations()).toEqual([]);

    const j = Journal.open(journalPathFor(planFile), { readonly: true });
    try {
      expect(j.runs()).toHaveLength(4);
      expect(j.runEnds().map((e) => e.state)).toEqual(['completed']);
      // The journal proves it: no destructive action was started twice, nor a provision.
      for (const s of allSteps(plan)) {
        if (s.destructive || s.kind === 'provision') expect(j.actionCount(s.id), s.id).toBeLessThanOrEqual(1);
      }
      const last3 = j.lastStates();
      const removeLast = allSteps(plan).find((s) => s.kind === 'etcd-remove-member' && s.subject === second)!;
      // The kill came after the removal: the resumed run re-observed it and recorded it done.
      expect(['already-done', 'done']).toContain(last3.get(removeLast.id)?.state);
      expect(j.actionCount(removeLast.id)).toBe(1);
      const resumeObs = j.observations({ purpose: 'resume' });
      expect(resumeObs.length).toBeGreaterThanOrEqual(1);
      const drainSecond = allSteps(plan).find((s) => s.kind === 'drain' && s.subject === second)!;
      expect(last3.get(drainSecond.id)?.state).toMatch(/done/);
      // The drain was interrupted and taken up again (re-observed first), not left half done.
      expect(
        j.transitions(drainSecond.id).filter((t) => t.state === 'started').length,
      ).toBeGreaterThanOrEqual(2);
      const provisionFirst = allSteps(plan).find((s) => s.kind === 'provision' && s.subject === first)!;
      expect(j.actionCount(provisionFirst.id)).toBe(1);
    } finally {
      j.close();
    }
  } finally {
    await cl.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}, 600_000);
