import { setTimeout as sleep } from 'node:timers/promises';
import { scaled } from './testing-slowness.js';

/**
 * Polls `fn` until it returns a value (not undefined/false), for tests of the lab's asynchronous
 * controllers; on timeout the error names what was awaited and the last failure seen.
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + scaled(opts.timeoutMs ?? 10_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await sleep(opts.intervalMs ?? 50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
