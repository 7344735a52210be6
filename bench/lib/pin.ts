/**
 * CPU pinning for the lab benchmarks (docs/benchmarks.md): the lab's etcd members and API servers on
 * one core, the orchestrator and the probes on the other, with `taskset`, so that a figure measures
 * ferry's order rather than the two competing for the same cores. Linux only; where `taskset` is
 * missing or this process may use fewer than two cores, pinning is not possible and the caller runs
 * unpinned, saying why.
 */
import { spawnSync } from 'node:child_process';

export const LAB_CORE = '0';
export const RUN_CORE = '1';

export type PinSupport = { ok: true } | { ok: false; why: string };

/** This process's affinity mask as `taskset -p` prints it (hex), or undefined. */
export function affinityOf(pid: number): string | undefined {
  const r = spawnSync('taskset', ['-p', String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  return /mask:\s*([0-9a-f]+)/i.exec(r.stdout)?.[1];
}

export function pinSupport(): PinSupport {
  const probe = spawnSync('taskset', ['-V'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { ok: false, why: 'taskset is not installed (util-linux)' };
  const mask = affinityOf(process.pid);
  if (mask === undefined) return { ok: false, why: 'taskset could not read this process affinity' };
  const cores = [...BigInt(`0x${mask}`).toString(2)].filter((b) => b === '1').length;
  const has = (core: string) => ((BigInt(`0x${mask}`) >> BigInt(core)) & 1n) === 1n;
  if (cores < 2 || !has(LAB_CORE) || !has(RUN_CORE))
    return {
      ok: false,
      why: `this process may use ${cores} core(s) (mask ${mask}); pinning needs cores ${LAB_CORE} and ${RUN_CORE}`,
    };
  return { ok: true };
}

/**
 * Sets the affinity of every thread of `pid` (threads and children started later inherit it).
 * Throws when taskset refuses: a run said to be pinned must be.
 */
export function setAffinity(pid: number, cores: string): void {
  const r = spawnSync('taskset', ['-a', '-cp', cores, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`taskset -a -cp ${cores} ${pid} failed: ${r.stderr.trim() || r.status}`);
}

/** Puts back a mask affinityOf() read. */
export function restoreAffinity(pid: number, mask: string): void {
  const r = spawnSync('taskset', ['-a', '-p', mask, String(pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset -a -p ${mask} ${pid} failed: ${r.stderr.trim() || r.status}`);
}
