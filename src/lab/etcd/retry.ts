import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../errors.js';

/** etcd answers worth waiting out (test-infra.md, pitfalls 1 and 2). */
export const UNHEALTHY_CLUSTER = /unhealthy cluster/i;
export const LEARNER_NOT_IN_SYNC = /can only promote a learner member which is in sync with leader/i;
/** The member is not (yet, or any longer) reachable, or is busy electing a leader. */
export const TRANSIENT =
  /no connection established|ECONNREFUSED|ECONNRESET|connection refused|failed to connect|deadline exceeded|UNAVAILABLE|leader changed|no leader|not leader|timed out|too many requests|server stopped/i;

export function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

export type RetryOptions = {
  /** True when the error is worth another attempt. */
  retryIf: (err: unknown) => boolean;
  timeoutMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Called before each retry; may throw to give up early (e.g. the process died). */
  beforeRetry?: (err: unknown, attempt: number) => void;
};

/**
 * Calls `fn` until it succeeds, backing off exponentially (capped) between attempts while the
 * error is retryable and time remains; the final error is kept as the cause.
 */
export async function retrying<T>(
  what: string,
  fn: (attempt: number) => Promise<T>,
  opts: RetryOptions,
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let delay = opts.initialDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!opts.retryIf(err)) throw err;
      if (Date.now() + delay > deadline) {
        throw new FerryError(
          'internal',
          `${what}: gave up after ${attempt} attempts in ${opts.timeoutMs} ms`,
          {
            cause: err,
            remediation: 'see the member logs in the lab directory',
          },
        );
      }
      opts.beforeRetry?.(err, attempt);
      await sleep(delay);
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}
