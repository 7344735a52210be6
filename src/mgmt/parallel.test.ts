import { describe, expect, it } from 'vitest';
import { inParallel } from './parallel.js';

describe('inParallel', () => {
  it('runs at most `limit` at once and every item once', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    await inParallel([1, 2, 3, 4, 5, 6, 7], 3, async (i) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      seen.push(i);
      running--;
    });
    expect(most).toBe(3);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('rejects with the first failure only after the started ones settled, and starts no more', async () => {
    const done: number[] = [];
    let settledBeforeReject = false;
    const p = inParallel([1, 2, 3, 4, 5], 2, async (i) => {
      if (i === 1) throw new Error('one');
      await new Promise((r) => setTimeout(r, 10));
      done.push(i);
      settledBeforeReject = true;
    });
    await expect(p).rejects.toThrow('one');
    expect(settledBeforeReject).toBe(true);
    expect(done).toEqual([2]);
  });
});
