import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { LeasePort, LeaseView, LeaseWrite } from '../ports/run.js';
import { acquireLease, acquireLocalLock, type LockRecord, lockPathFor, procStartTicks } from './lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('local lock', () => {
  it('sits beside the plan', () => {
    expect(lockPathFor('/a/plan.json')).toBe('/a/plan.lock');
  });

  it('refuses a second holder while the first lives, names it, and releases', async () => {
    const file = join(dir, 'plan.lock');
    const a = await acquireLocalLock(file, { lineage: 'L', runId: 'r1' });
    const rec = JSON.parse(await readFile(file, 'utf8')) as LockRecord;
    expect(rec).toMatchObject({ pid: process.pid, runId: 'r1', host: hostname() });
    expect(rec.startTicks).toBe(procStartTicks(process.pid));
    const err = await acquireLocalLock(file, { lineage: 'L', runId: 'r2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).kind).toBe('gate');
    expect((err as FerryError).message).toContain(`pid ${process.pid}`);
    await a.release();
    const b = await acquireLocalLock(file, { lineage: 'L', runId: 'r3' });
    expect(b.replaced).toBeUndefined();
    await b.release();
  });

  it('replaces the lock of a killed process and reports what it replaced', async () => {
    const file = join(dir, 'plan.lock');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await once(child, 'spawn');
    const dead: LockRecord = {
      pid: child.pid!,
      startTicks: procStartTicks(child.pid!),
      host: hostname(),
      startedAt: new Date().toISOString(),
      lineage: 'L',
      runId: 'old',
    };
    await writeFile(file, JSON.stringify(dead));
    // While it lives, the lock holds.
    await expect(acquireLocalLock(file, { lineage: 'L', runId: 'new' })).rejects.toThrow(/another ferry run/);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const lock = await acquireLocalLock(file, { lineage: 'L', runId: 'new' });
    expect(lock.replaced?.runId).toBe('old');
    expect((JSON.parse(await readFile(file, 'utf8')) as LockRecord).runId).toBe('new');
    await lock.release();
  });

  it('treats a recycled pid (different start time) as stale', async () => {
    const file = join(dir, 'plan.lock');
    await writeFile(
      file,
      JSON.stringify({
        pid: process.pid,
        startTicks: '1',
        host: hostname(),
        startedAt: '',
        lineage: 'L',
        runId: 'ghost',
      } satisfies LockRecord),
    );
    const lock = await acquireLocalLock(file, { lineage: 'L', runId: 'me' });
    expect(lock.replaced?.runId).toBe('ghost');
    await lock.release();
  });
});

/** An in-memory Lease API with resourceVersion conflicts, as the API server has. */
function fakeLeases(): LeasePort & { store: Map<string, LeaseView> } {
  const store = new Map<string, LeaseView>();
  let rv = 1;
  const conflict = () => Object.assign(new Error('conflict'), { status: 409 });
  const view = (w: LeaseWrite): LeaseView => ({
    holderIdentity: w.holderIdentity,
    renewTime: w.renewTime,
    leaseDurationSeconds: w.leaseDurationSeconds,
    resourceVersion: String(rv++),
    annotations: w.annotations,
  });
  return {
    store,
    async getLease(ns, name) {
      return store.get(`${ns}/${name}`);
    },
    async createLease(ns, name, w) {
      if (store.has(`${ns}/${name}`)) throw conflict();
      const v = view(w);
      store.set(`${ns}/${name}`, v);
      return v;
    },
    async replaceLease(ns, name, resourceVersion, w) {
      const cur = store.get(`${ns}/${name}`);
      if (!cur || cur.resourceVersion !== resourceVersion) throw conflict();
      const v = view(w);
      store.set(`${ns}/${name}`, v);
      return v;
    },
    async deleteLease(ns, name, resourceVersion) {
      const cur = store.get(`${ns}/${name}`);
      if (!cur || cur.resourceVersion !== resourceVersion) throw conflict();
      store.delete(`${ns}/${name}`);
    },
  };
}

describe('cluster Lease', () => {
  it('keeps a second lineage off, lets the same lineage take over, and frees on release', async () => {
    const port = fakeLeases();
    const a = await acquireLease(port, { lineage: 'A', runId: 'a1' });
    expect(port.store.get('kube-system/ferry-run')?.holderIdentity).toBe('ferry/A');
    const err = await acquireLease(port, { lineage: 'B', runId: 'b1' }).catch((e: unknown) => e);
    expect((err as FerryError).kind).toBe('gate');
    expect((err as FerryError).message).toMatch(
      /another run holds the Lease kube-system\/ferry-run: ferry\/A/,
    );
    // A resumed run of the same journal (after a crash) takes it over.
    const a2 = await acquireLease(port, { lineage: 'A', runId: 'a2' });
    expect(port.store.get('kube-system/ferry-run')?.annotations['ferry.dev/run-id']).toBe('a2');
    await a2.release();
    expect(port.store.size).toBe(0);
    await a.release(); // no longer ours: leaves nothing behind, throws nothing
    const b = await acquireLease(port, { lineage: 'B', runId: 'b2' });
    await b.release();
  });

  it('takes an expired Lease of another lineage', async () => {
    const port = fakeLeases();
    const past = new Date(Date.now() - 10 * 60_000);
    await acquireLease(port, { lineage: 'A', runId: 'a' }, { now: () => past, durationSeconds: 60 });
    const b = await acquireLease(port, { lineage: 'B', runId: 'b' });
    expect(port.store.get('kube-system/ferry-run')?.holderIdentity).toBe('ferry/B');
    expect(b.lost).toBe(false);
    await b.release();
  });
});
