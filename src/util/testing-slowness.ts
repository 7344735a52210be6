/**
 * How much slower this machine runs right now than the one the tests' timeouts were set on. The
 * tests run real etcd servers and labs on two shared cores whose speed varies tenfold over an hour
 * (the same fixed loop took 0.6 s and 7.8 s within minutes): a hang guard of 60 s there fails
 * correct code. The factor scales the guards only; no test measures speed (benchmarks do, as
 * ratios). Set FERRY_TEST_SLOWNESS to fix it (1 disables the scaling).
 */
const ITERATIONS = 2e7;
const REFERENCE_MS = 20; // the loop below on an unshared modern core (about 1 ns an iteration)
const MAX_FACTOR = 8;

function loopMs(): number {
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < ITERATIONS; i++) x += i;
  if (x < 0) throw new Error('unreachable'); // keeps the loop from being optimised away
  return performance.now() - t0;
}

/** The median of five timings of a fixed loop against its reference, between 1 and 8. */
export function measureSlowness(): number {
  const fixed = Number(process.env.FERRY_TEST_SLOWNESS);
  if (Number.isFinite(fixed) && fixed >= 1) return fixed;
  const runs = Array.from({ length: 5 }, loopMs).sort((a, b) => a - b);
  const factor = (runs[2] ?? REFERENCE_MS) / REFERENCE_MS;
  return Math.min(MAX_FACTOR, Math.max(1, Math.round(factor * 10) / 10));
}

/** `ms` scaled by the factor the test run measured (vitest.config.ts), for a test's own waits. */
export function scaled(ms: number): number {
  const f = Number(process.env.FERRY_TEST_SLOWNESS);
  return Number.isFinite(f) && f >= 1 ? Math.round(ms * f) : ms;
}
