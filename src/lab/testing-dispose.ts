/** The end of a test's lab: disposed, none of the processes it spawned left alive, its directory gone. */
import { rm } from 'node:fs/promises';
import { expect } from 'vitest';
import type { LabCluster } from './cluster.js';
import { isAlive } from './etcd/process.js';

export async function disposeLab(lab: LabCluster | undefined, dir: string): Promise<void> {
  const pids = lab?.etcd.spawnedPids() ?? [];
  await lab?.dispose();
  expect(pids.filter((p) => isAlive(p))).toEqual([]);
  await rm(dir, { recursive: true, force: true });
}
