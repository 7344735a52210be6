/**
 * ferry's own retries for etcd membership calls (etcd3's fault handling is off: its circuit breaker
 * turns repeated `unhealthy cluster` answers into BrokenCircuitError, test-infra.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** `member add/remove` until the serving member has seen every voter for 5 s (pitfall 1). */
export const UNHEALTHY_CLUSTER = /unhealthy cluster/i;
/** `member promote` until the learner has caught up (pitfall 2). */
export const LEARNER_NOT_IN_SYNC = /can only promote a learner member which is in sync with leader/i;
/** MoveLeader sent to a member that does not lead (any more) (pitfall 3). */
export const NOT_LEADER = /not leader|leader changed|no leader/i;
/** The member is unreachable for now, or busy electing. */
export const TRANSIENT =
  /no connection established|ECONNREFUSED|ECONNRESET|connection refused|failed to connect|deadline exceeded|UNAVAILABLE|timed out|too many requests|server stopped|GoAwayError|Connection dropped/i;

export function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`.replace(/\.?\s*Resolution note:\s*$/, '');
  return String(err);
}

export interface BackoffOptions {
  retryIf: (err: unknown) => boolean;
  timeoutMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  signal?: AbortSignal;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
}

/** Calls `fn(attempt)` until it succeeds, doubling the pause up to a cap, within `timeoutMs`. */
export async function withBackoff<T>(fn: (attempt: number) => Promise<T>, opts: BackoffOptions): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let delay = opts.initialDelayMs ?? 200;
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (!opts.retryIf(err) || Date.now() + delay > deadline) throw err;
      opts.onRetry?.(err, attempt, delay);
      await sleep(delay, undefined, opts.signal ? { signal: opts.signal } : undefined);
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}
