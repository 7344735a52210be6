import { describe, expect, it } from 'vitest';
import { inDependencyOrder, inParallel } from './parallel.js';

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('inDependencyOrder', () => {
  // 0 → 1 → 2 (a chain), 3 slow and independent, 4 owned by 0 and 3.
  const deps: Record<number, number[]> = { 0: [], 1: [0], 2: [1], 3: [], 4: [0, 3] };

  it('starts each item after its dependencies, not after its whole level, at most `limit` at once', async () => {
    const events: string[] = [];
    let running = 0;
    let most = 0;
    // 3 finishes only after 2 has: a scheduler that waited for the whole first level would hang.
    let chainDone!: () => void;
    const chain = new Promise<void>((r) => {
      chainDone = r;
    });
    await inDependencyOrder(
      5,
      (i) => deps[i]!,
      2,
      async (i) => {
        running++;
        most = Math.max(most, running);
        events.push(`start ${i}`);
        if (i === 3) await chain;
        else await sleep(2);
        events.push(`end ${i}`);
        if (i === 2) chainDone();
        running--;
      },
    );
    expect(most).toBe(2);
    for (const [i, ds] of Object.entries(deps))
      for (const d of ds) expect(events.indexOf(`end ${d}`)).toBeLessThan(events.indexOf(`start ${i}`));
    expect(events.filter((e) => e.startsWith('end')).length).toBe(5);
  });

  it('starts nothing after a failure and rejects once the started items settled', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const p = inDependencyOrder(
      5,
      (i) => deps[i]!,
      2,
      async (i) => {
        started.push(i);
        if (i === 0) {
          await sleep(5);
          throw new Error('zero');
        }
        await sleep(30);
        ended.push(i);
      },
    );
    await expect(p).rejects.toThrow('zero');
    expect(started.sort()).toEqual([0, 3]);
    expect(ended).toEqual([3]);
  });

  it('refuses a dependency cycle instead of waiting forever', async () => {
    const ran: number[] = [];
    await expect(
      inDependencyOrder(
        3,
        (i) => (i === 0 ? [] : i === 1 ? [2] : [1]),
        4,
        async (i) => {
          ran.push(i);
        },
      ),
    ).rejects.toThrow('2 item(s) wait on a dependency cycle');
    expect(ran).toEqual([0]);
  });
});
