import { rmSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, reapStale } from './process.js';

/**
 * Lifetime of lab clusters beyond a single test: the clusters this process has not disposed yet,
 * their directories on exit, and the leftovers of earlier runs that were killed outright.
 */

/** What the registry needs of a cluster. */
export type DisposableLab = { readonly dir: string; readonly keepDir: boolean; dispose(): Promise<void> };

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
    for (const l of liveLabs) if (!l.keepDir) rmSync(l.dir, { recursive: true, force: true });
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
 * their stale PID files and removes their directories (those with an owner.json whose owner is
 * gone). Directories of live runs, such as test files running in parallel, are left alone.
 */
export async function reapStaleLabs(
  root: string = defaultLabRoot(),
): Promise<{ killed: number[]; removedDirs: string[] }> {
  const { killed } = await reapStale(root);
  const removedDirs: string[] = [];
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const dir = join(root, e.name);
    const owner = await readFile(join(dir, 'owner.json'), 'utf8')
      .then((t) => JSON.parse(t) as { ownerPid?: number; ownerStartTicks?: string })
      .catch(() => undefined);
    if (owner?.ownerPid === undefined || isAlive(owner.ownerPid, owner.ownerStartTicks)) continue;
    await rm(dir, { recursive: true, force: true });
    removedDirs.push(dir);
  }
  return { killed, removedDirs };
}
