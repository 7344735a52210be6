import { rmSync, statfsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, reapStale } from './process.js';

/**
 * Lifetime of lab clusters beyond a single test: the clusters this process has not disposed yet,
 * their directories on exit, and the leftovers of earlier runs that were killed outright.
 */

/** What the registry needs of a cluster. */
export type DisposableLab = {
  /** The lab's directories: removed on exit unless keepDir. */
  readonly dirs: readonly string[];
  readonly keepDir: boolean;
  dispose(): Promise<void>;
};

/** statfs f_type of a tmpfs. */
export const TMPFS_MAGIC = 0x01021994;
const SHM = '/dev/shm';
/** etcd preallocates 64 MB of WAL per member, and a test run holds a few labs at once. */
const SHM_MIN_FREE_BYTES = 2 * 1024 ** 3;

export interface LabDataStorage {
  /** Parent of the clusters' data directories; undefined: each member's data stays in its lab directory. */
  root: string | undefined;
  kind: 'tmpfs' | 'lab-dir' | 'chosen';
  why: string;
}

/**
 * Where lab etcd members keep their data (--data-dir). In production every member fsyncs to its
 * own disk; in a lab six members share one, and their fsyncs queue behind each other, which
 * stretches every write and the moment of a leadership transfer. So their data lives on /dev/shm
 * when it is a tmpfs with room (as etcd's own test clusters do); PKI and logs stay in the lab
 * directory. FERRY_LAB_DATA=DIR chooses the place; FERRY_LAB_DATA=lab-dir keeps data with the rest.
 */
export function labDataStorage(env: NodeJS.ProcessEnv = process.env, shm = SHM): LabDataStorage {
  const chosen = env.FERRY_LAB_DATA;
  if (chosen === 'lab-dir') return { root: undefined, kind: 'lab-dir', why: 'FERRY_LAB_DATA=lab-dir' };
  if (chosen) return { root: chosen, kind: 'chosen', why: 'FERRY_LAB_DATA' };
  const labDir = { root: undefined, kind: 'lab-dir' as const };
  try {
    const st = statfsSync(shm);
    if (st.type !== TMPFS_MAGIC) return { ...labDir, why: `${shm} is not a tmpfs` };
    const free = st.bavail * st.bsize;
    if (free < SHM_MIN_FREE_BYTES)
      return { ...labDir, why: `${shm} has ${Math.round(free / 1024 ** 2)} MiB free, under 2 GiB` };
    return { root: join(shm, 'ferry-lab-etcd-data'), kind: 'tmpfs', why: `${shm} is a tmpfs` };
  } catch {
    return { ...labDir, why: `no ${shm}` };
  }
}

/**
 * Where the members of a lab whose files outlive it (`ferry rehearse --keep`) keep their data: in
 * the lab directory, beside their PKI and logs, where `ferry lab down` removes it. Not on the shared
 * tmpfs: there the next lab started anywhere on the machine reaps data whose owner has exited.
 */
export function labDataStorageFor(
  opts: { keep?: boolean },
  env: NodeJS.ProcessEnv = process.env,
  shm = SHM,
): LabDataStorage {
  if (opts.keep) return { root: undefined, kind: 'lab-dir', why: 'kept after the lab stops' };
  return labDataStorage(env, shm);
}

/** One line for logs and reports. */
export function describeLabData(s: LabDataStorage): string {
  return s.root
    ? `lab etcd data on ${s.root} (${s.why}): each member's fsync costs what a dedicated disk's would`
    : `lab etcd data in the lab directory (${s.why}): the members' fsyncs share one disk`;
}

export function defaultLabRoot(): string {
  return join(tmpdir(), 'ferry-lab-etcd');
}

const liveLabs = new Set<DisposableLab>();
let exitHookInstalled = false;

export function trackLab(lab: DisposableLab): void {
  liveLabs.add(lab);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // process.ts's safety net kills the members; this removes what they leave on disk.
  process.once('exit', () => {
    for (const l of liveLabs)
      if (!l.keepDir) for (const d of l.dirs) rmSync(d, { recursive: true, force: true });
  });
}

export function untrackLab(lab: DisposableLab): void {
  liveLabs.delete(lab);
}

/** Disposes every cluster this process started and has not disposed: for an `afterAll`. */
export async function disposeAllLabs(): Promise<void> {
  await Promise.all([...liveLabs].map((l) => l.dispose()));
}

/**
 * Cleans up after earlier runs that were killed before they could: kills the etcd processes in
 * their stale PID files and removes their directories, and their data directories under
 * `dataRoot` (those with an owner.json whose owner is gone). Directories of live runs, such as
 * test files running in parallel, are left alone.
 */
export async function reapStaleLabs(
  root: string = defaultLabRoot(),
  dataRoot: string | undefined = labDataStorage().root,
): Promise<{ killed: number[]; removedDirs: string[] }> {
  const { killed } = await reapStale(root);
  const removedDirs: string[] = [];
  for (const parent of dataRoot ? [root, dataRoot] : [root]) {
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const dir = join(parent, e.name);
      const owner = await readFile(join(dir, 'owner.json'), 'utf8')
        .then((t) => JSON.parse(t) as { ownerPid?: number; ownerStartTicks?: string })
        .catch(() => undefined);
      if (owner?.ownerPid === undefined || isAlive(owner.ownerPid, owner.ownerStartTicks)) continue;
      await rm(dir, { recursive: true, force: true });
      removedDirs.push(dir);
    }
  }
  return { killed, removedDirs };
}
