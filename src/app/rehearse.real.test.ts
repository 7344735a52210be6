import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs } from '../lab/etcd/cluster.js';
import { readLabState, stopLab } from '../lab/state.js';
import { skipFor } from '../lab/testing-binaries.js';
import { Journal, journalPathFor } from '../run/journal.js';
import { lockPathFor, procStartTicks } from '../run/lock.js';
import { scaled } from '../util/testing-slowness.js';
import { clearEarlierRehearsal, rehearse } from './rehearse.js';

// The rehearsal of examples/lab-cluster on a real lab (subnet 127.0.44.x belongs to this file).
afterAll(async () => {
  await disposeAllLabs();
});

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

it('rehearses examples/lab-cluster: all 8 nodes replaced, no API error, no write lost, no failed canary request, no PDB violated', async ({
  skip,
}) => {
  if (skipFor(missing)) skip(missing);
  const dir = await mkdtemp(join(tmpdir(), 'ferry-rehearse-'));
  const lines: string[] = [];
  try {
    const r = await rehearse({
      snapshotPath: 'examples/lab-cluster',
      dir,
      subnet: 44,
      // An answer later than 2 s is an API error; on a machine measured k× slow, later than 2k s.
      probes: { apiTimeoutMs: scaled(2_000), requestTimeoutMs: scaled(2_000) },
      log: (l) => lines.push(l),
    });
    const check = (name: string) => r.checks.find((c) => c.name === name);
    expect(r.result.status, r.result.error?.message).toBe('completed');
    // Every failing check at once (one failure must not hide the others).
    expect(r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)).toEqual([]);

    // 0 API errors through the endpoint, and the probes really ran throughout.
    const api = r.probes.filter((p) => p.summary.name.startsWith('api-'));
    expect(api).toHaveLength(2);
    for (const p of api) {
      expect(p.summary.failures).toBe(0);
      expect(p.summary.attempts).toBeGreaterThan(50);
    }
    // The apps' view: the canary's request probe ran throughout, every 10 ms, and none failed.
    const canary = r.probes.find((p) => p.summary.name === 'canary-request')!;
    expect(canary.summary.failures, JSON.stringify(canary.summary.errors)).toBe(0);
    expect(canary.summary.attempts).toBeGreaterThan(1_000);
    expect(Number(canary.summary.extra?.['p99LatencyMs'])).toBeGreaterThan(0);
    expect(check('no failed canary request')?.detail).toMatch(
      /^0\/\d+ requests failed \(control planes: 0, workers: 0/,
    );
    // Every workload with a PDB kept its minimum Ready; checkout was scaled up around its drains.
    expect(r.workloads.filter((w) => w.violated)).toEqual([]);
    expect(r.workloads.find((w) => w.name === 'shop/checkout')).toMatchObject({ pdb: { minimum: 2 } });
    expect(r.workloads.find((w) => w.name === 'shop/checkout')!.minReady).toBeGreaterThanOrEqual(2);
    expect(r.workloads.find((w) => w.name === 'ferry-lab/canary')!.minReady).toBeGreaterThanOrEqual(2);
    // No acknowledged write lost: every acknowledged etcd write was read back.
    const etcd = r.probes.find((p) => p.summary.name === 'etcd-write')!;
    expect(etcd.summary.extra).toMatchObject({ lost: 0, checked: 'yes' });
    expect(Number(etcd.summary.extra?.['acknowledged'])).toBeGreaterThan(500);
    // A generous bound: a forced election alone costs 1.2–1.5 s; the benchmark reports the real figure.
    expect(etcd.summary.longestGapMs).toBeLessThan(1_000);
    expect(check('no PodDisruptionBudget violated')?.detail).toMatch(
      /^\d+ evicted, \d+ refused by a budget, 0 let through/,
    );

    // The journal: every control plane swapped, leadership moved for the leader, each removal once.
    const j = Journal.open(r.journalFile, { readonly: true });
    try {
      const last = j.lastStates();
      for (const cp of ['cp-1', 'cp-2', 'cp-3']) {
        const remove = [...last.keys()].find((id) => id.endsWith(`etcd-remove-member.${cp}`))!;
        expect(last.get(remove)?.state).toBe('done');
        expect(j.actionCount(remove)).toBe(1);
      }
      // The workers too: each of the five decommissioned once, after its drain.
      for (const w of ['worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5']) {
        const gone = [...last.keys()].find((id) => id.startsWith('3.') && id.endsWith(`decommission.${w}`))!;
        expect(last.get(gone)?.state, w).toBe('done');
        expect(j.actionCount(gone)).toBe(1);
      }
      const moved = [...last.entries()].filter(
        ([id, t]) => id.includes('etcd-move-leader') && t.state === 'done',
      );
      expect(moved.length).toBeGreaterThanOrEqual(1);
      expect(j.runEnds().at(-1)?.state).toBe('completed');
    } finally {
      j.close();
    }

    // The report: md and a self-contained html with the timeline and the probe plot.
    const html = readFileSync(join(dir, 'rehearsal.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).toContain('etcd-write');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    const md = readFileSync(join(dir, 'rehearsal.md'), 'utf8');
    expect(md).toContain('standing in for 3.5.16');
    expect(md).toContain('| no acknowledged write lost | pass |');
    expect(md).toContain('| no failed canary request | pass |');
    // Each worker batch counts the pods it moved (journaled drain progress), never "—".
    const batchRows = md.split('\n').filter((l) => /^\| \d+ \| worker-/.test(l));
    expect(batchRows.length).toBeGreaterThan(0);
    for (const row of batchRows) expect(row.split('|')[3]?.trim()).toMatch(/^\d+$/);
    expect(html).toContain('canary-request');
    const json = JSON.parse(readFileSync(join(dir, 'rehearsal.json'), 'utf8'));
    expect(json.probes.map((p: { name: string }) => p.name)).toContain('canary-request');
    expect(json.workloads.length).toBeGreaterThan(5);
    expect(existsSync(join(dir, 'plan.md'))).toBe(true);

    // Again in the same directory (the quick start run twice): a new lab, a new plan (the kit's
    // bootstrap token differs), so the first rehearsal's journal must not stand in the way.
    // This time keeping the lab's files (--keep): they stay, and the lab state says what they are.
    // With an operator's probe (--probe) of an endpoint of its own: probed throughout, reported.
    const own = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', () => r()));
    const ownUrl = `http://127.0.0.1:${(own.address() as AddressInfo).port}/healthz`;
    let again: Awaited<ReturnType<typeof rehearse>>;
    try {
      again = await rehearse({
        snapshotPath: 'examples/lab-cluster',
        dir,
        subnet: 44,
        phases: [0],
        keepData: true,
        userProbes: [{ url: ownUrl, expectStatus: 200, maxFailRatio: 0, intervalMs: 20, timeoutMs: 2000 }],
        log: () => {},
      });
    } finally {
      own.close();
    }
    expect(again.result.status, again.result.error?.message).toBe('completed');
    const ownProbe = again.probes.find((p) => p.summary.name === new URL(ownUrl).host + '/healthz');
    expect(ownProbe?.summary.attempts ?? 0).toBeGreaterThan(0);
    expect(ownProbe?.summary.failures).toBe(0);
    const j2 = Journal.open(again.journalFile, { readonly: true });
    try {
      expect(j2.runEnds()).toHaveLength(1);
    } finally {
      j2.close();
    }
    expect(again.keptLab).toBe(join(dir, 'lab'));
    const kept = await readLabState(join(dir, 'lab'));
    expect(kept?.phase).toBe('stopped');
    expect(kept?.kept?.length).toBeGreaterThan(0);
    for (const k of kept?.kept ?? []) expect(readdirSync(k).length, k).toBeGreaterThan(0);
    const down = await stopLab(join(dir, 'lab'));
    expect(down.orphansKilled).toEqual([]);
    for (const k of kept?.kept ?? []) expect(existsSync(k), k).toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 900_000);

it("clears an earlier rehearsal's journal, but not while that rehearsal still runs", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-rehearse-clear-'));
  try {
    const plan = join(dir, 'plan.json');
    const journal = journalPathFor(plan);
    const lock = (pid: number) => ({
      pid,
      startTicks: procStartTicks(pid),
      host: hostname(),
      startedAt: '2026-11-30T00:00:00Z',
      lineage: 'l',
      runId: 'r',
    });
    await writeFile(journal, 'earlier');
    await writeFile(`${journal}-wal`, 'earlier');
    // This process holds the lock: a rehearsal running there.
    await writeFile(lockPathFor(plan), JSON.stringify(lock(process.pid)));
    await expect(clearEarlierRehearsal(plan)).rejects.toThrow(/another rehearsal is running in .*: pid \d+/);
    expect(existsSync(journal)).toBe(true);
    // Its holder is gone (a pid that cannot exist): the journal goes.
    await writeFile(lockPathFor(plan), JSON.stringify({ ...lock(process.pid), pid: 2 ** 22 + 1 }));
    await clearEarlierRehearsal(plan);
    expect(existsSync(journal)).toBe(false);
    expect(existsSync(`${journal}-wal`)).toBe(false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
