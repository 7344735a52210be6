/**
 * One run per cluster: a local lock file beside the plan (pid + process start time, so a stale lock
 * of a killed run is recognised) and a coordination.k8s.io/v1 Lease in the cluster, so that a
 * second operator on another machine is kept off as well. The Lease holder is the journal's
 * lineage: a `--resume` of the same journal takes over its dead predecessor's Lease, anything else
 * waits for it to expire.
 */
import { readFileSync } from 'node:fs';
import { link, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { FerryError } from '../errors.js';
import type { LeasePort, LeaseView } from '../ports/run.js';

export interface LockRecord {
  pid: number;
  /** /proc/PID/stat start time in ticks: tells the same process from a later one with its pid. */
  startTicks: string | null;
  host: string;
  startedAt: string;
  lineage: string;
  runId: string;
}

/** `plan.json` → `plan.lock` in the same directory. */
export function lockPathFor(planFile: string): string {
  return join(dirname(planFile), `${basename(planFile, extname(planFile))}.lock`);
}

export function procStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null;
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why a lock record no longer protects anything, or undefined when its owner may still run. */
export function staleReason(rec: LockRecord, host = hostname()): string | undefined {
  if (rec.host !== host) return undefined;
  if (!pidAlive(rec.pid)) return `process ${rec.pid} is gone`;
  const ticks = procStartTicks(rec.pid);
  if (ticks === null) return `process ${rec.pid} is gone`;
  if (rec.startTicks !== null && ticks !== rec.startTicks)
    return `pid ${rec.pid} now belongs to another process`;
  return undefined;
}

/** The lock record in `file`, or undefined when there is none (or it cannot be read). */
export async function readLockRecord(file: string): Promise<LockRecord | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

export interface LocalLock {
  file: string;
  record: LockRecord;
  /** The stale record this lock replaced, if any (a crashed predecessor). */
  replaced: LockRecord | undefined;
  release(): Promise<void>;
}

/**
 * Creates the lock file atomically (write a temp file, hard-link it into place: link fails when the
 * name exists). A stale lock is moved aside and re-checked before it is replaced.
 */
export async function acquireLocalLock(
  file: string,
  ids: { lineage: string; runId: string },
): Promise<LocalLock> {
  const record: LockRecord = {
    pid: process.pid,
    startTicks: procStartTicks(process.pid),
    host: hostname(),
    startedAt: new Date().toISOString(),
    lineage: ids.lineage,
    runId: ids.runId,
  };
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o644 });
  let replaced: LockRecord | undefined;
  try {
    for (let round = 0; round < 3; round++) {
      try {
        await link(tmp, file);
        return { file, record, replaced, release: () => releaseLocal(file, record) };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readLockRecord(file);
      const why = held ? staleReason(held) : 'unreadable lock file';
      if (why === undefined && held) {
        throw new FerryError(
          'gate',
          `another ferry run holds ${file}: pid ${held.pid} on ${held.host}, started ${held.startedAt}`,
          {
            remediation: `wait for that run to end (or stop it); if you are sure no run is active${
              held.host !== record.host ? ` on ${held.host}` : ''
            }, delete ${file}`,
          },
        );
      }
      // Move it aside under a unique name, then check it is still the stale one we judged.
      const aside = `${file}.stale.${process.pid}.${round}`;
      try {
        await rename(file, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      const moved = await readLockRecord(aside);
      if (moved && staleReason(moved) === undefined) {
        // A live run took it between our read and the rename: give it back.
        await link(aside, file).catch(() => undefined);
        await unlink(aside).catch(() => undefined);
        continue;
      }
      replaced = moved ?? held;
      await unlink(aside).catch(() => undefined);
    }
    throw new FerryError('gate', `could not take the run lock ${file}: it keeps changing hands`, {
      remediation: 'another ferry run is starting on this plan; let one of them run',
    });
  } finally {
    await rm(tmp, { force: true });
  }
}

async function releaseLocal(file: string, record: LockRecord): Promise<void> {
  const held = await readLockRecord(file);
  if (held && held.pid === record.pid && held.runId === record.runId) await rm(file, { force: true });
}

// ---- the Lease ----------------------------------------------------------------------------------

export const LEASE_NAMESPACE = 'kube-system';
export const LEASE_NAME = 'ferry-run';
const LEASE_SECONDS = 60;

export function leaseHolder(lineage: string): string {
  return `ferry/${lineage}`;
}

function leaseExpired(l: LeaseView, now: Date): boolean {
  if (!l.holderIdentity) return true;
  if (!l.renewTime || !l.leaseDurationSeconds) return true;
  return Date.parse(l.renewTime) + l.leaseDurationSeconds * 1000 < now.getTime();
}

function isConflict(err: unknown): boolean {
  const e = err as { status?: number; statusCode?: number; code?: number };
  return e?.status === 409 || e?.statusCode === 409 || e?.code === 409;
}

export interface ClusterLease {
  holder: string;
  /** True once a renewal found someone else holding it: the run must stop. */
  readonly lost: boolean;
  release(): Promise<void>;
}

/**
 * Takes the Lease: free, expired, or held by this journal's lineage (a resumed run after a crash).
 * Renews it every third of its duration until released.
 */
export async function acquireLease(
  port: LeasePort,
  ids: { lineage: string; runId: string },
  opts: { durationSeconds?: number; now?: () => Date; namespace?: string; name?: string } = {},
): Promise<ClusterLease> {
  const ns = opts.namespace ?? LEASE_NAMESPACE;
  const name = opts.name ?? LEASE_NAME;
  const duration = opts.durationSeconds ?? LEASE_SECONDS;
  const now = opts.now ?? (() => new Date());
  const holder = leaseHolder(ids.lineage);
  const annotations = {
    'ferry.dev/run-id': ids.runId,
    'ferry.dev/host': hostname(),
    'ferry.dev/pid': String(process.pid),
  };
  const write = () => ({
    holderIdentity: holder,
    leaseDurationSeconds: duration,
    renewTime: now().toISOString(),
    acquireTime: now().toISOString(),
    annotations,
  });

  for (let round = 0; ; round++) {
    const existing = await port.getLease(ns, name);
    try {
      if (!existing) {
        await port.createLease(ns, name, write());
        break;
      }
      if (existing.holderIdentity !== holder && !leaseExpired(existing, now())) {
        const who = existing.annotations['ferry.dev/host']
          ? ` (host ${existing.annotations['ferry.dev/host']}, pid ${existing.annotations['ferry.dev/pid'] ?? '?'})`
          : '';
        throw new FerryError(
          'gate',
          `another run holds the Lease ${ns}/${name}: ${existing.holderIdentity}${who}, renewed ${existing.renewTime}`,
          {
            remediation: `let that run finish; a crashed run's Lease expires ${existing.leaseDurationSeconds ?? duration} s after its last renewal (kubectl -n ${ns} get lease ${name} -o yaml)`,
          },
        );
      }
      await port.replaceLease(ns, name, existing.resourceVersion, write());
      break;
    } catch (err) {
      if (isConflict(err) && round < 3) continue;
      throw err;
    }
  }

  let lost = false;
  const renew = async () => {
    try {
      const seen = await port.getLease(ns, name);
      if (!seen || seen.holderIdentity !== holder) {
        lost = true;
        return;
      }
      await port.replaceLease(ns, name, seen.resourceVersion, {
        holderIdentity: holder,
        leaseDurationSeconds: duration,
        renewTime: now().toISOString(),
        annotations,
      });
    } catch {
      // A missed renewal is not fatal: the Lease lasts three renewal periods.
    }
  };
  const timer = setInterval(() => void renew(), (duration * 1000) / 3);
  timer.unref();

  return {
    holder,
    get lost() {
      return lost;
    },
    async release() {
      clearInterval(timer);
      try {
        const seen = await port.getLease(ns, name);
        if (seen && seen.holderIdentity === holder) await port.deleteLease(ns, name, seen.resourceVersion);
      } catch {
        // It expires on its own.
      }
    },
  };
}
