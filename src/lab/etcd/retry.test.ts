import { describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { LEARNER_NOT_IN_SYNC, retrying, UNHEALTHY_CLUSTER } from './retry.js';

describe('retrying', () => {
  it('retries matching errors until the call succeeds', async () => {
    let calls = 0;
    const out = await retrying(
      'add',
      async () => {
        calls++;
        if (calls < 3) throw new Error('etcdserver: unhealthy cluster');
        return 'ok';
      },
      { retryIf: (e) => UNHEALTHY_CLUSTER.test(String(e)), timeoutMs: 5_000, initialDelayMs: 1 },
    );
    expect(out).toBe('ok');
    expect(calls).toBe(3);
  });

  it('throws other errors at once', async () => {
    let calls = 0;
    const err = await retrying(
      'promote',
      async () => {
        calls++;
        throw new Error('etcdserver: member not found');
      },
      { retryIf: (e) => LEARNER_NOT_IN_SYNC.test(String(e)), timeoutMs: 5_000, initialDelayMs: 1 },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('etcdserver: member not found');
    expect(calls).toBe(1);
  });

  it('gives up at the deadline with the last error as cause', async () => {
    const last = new Error('etcdserver: can only promote a learner member which is in sync with leader');
    const started = Date.now();
    const err = await retrying(
      'promote m4',
      async () => {
        throw last;
      },
      { retryIf: () => true, timeoutMs: 200, initialDelayMs: 10, maxDelayMs: 40 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toMatch(/^promote m4: gave up after \d+ attempts/);
    expect((err as FerryError).cause).toBe(last);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('lets beforeRetry abort early', async () => {
    const err = await retrying(
      'wait',
      async () => {
        throw new Error('ECONNREFUSED');
      },
      {
        retryIf: () => true,
        timeoutMs: 10_000,
        initialDelayMs: 1,
        beforeRetry: () => {
          throw new Error('process exited');
        },
      },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toBe('process exited');
  });
});
