/**
 * A virtual clock for unit tests of code that waits: time moves only when every caller waits, and
 * then jumps to the next timer. A run gives the same calls and durations on a busy machine as on an
 * idle one, and a test can check exact waits and the instant a loop stops.
 *
 * It stands in for node:timers/promises' setTimeout (the test mocks that module with
 * `virtualSetTimeout`) and for Date.now (the test spies on it with `clock.now`). Users:
 * src/run/drain-nodes.test.ts, src/adapters/provisioners/capi.test.ts.
 *
 * Test-only: nothing under src/ imports this file but tests and their fakes.
 */

interface Timer {
  due: number;
  seq: number;
  /** A caller waiting (a sleep, a fake request's latency); false for a scheduled change. */
  waiter: boolean;
  fire(): void;
}

/** Pumps in a row that find nothing later than now: a loop that never lets time pass. */
const MAX_STILL_PUMPS = 1_000;

export class VirtualClock {
  /** Where virtual time starts (a plausible epoch, so that no code sees 0). */
  readonly start = 1_700_000_000_000;
  #now = this.start;
  #seq = 0;
  #timers: Timer[] = [];
  #pumping = false;
  #still = 0;
  #broken: Error | undefined;
  /** Every wait drainNodes asked for (its `sleep`s), in order: what the pacing tests compare. */
  readonly sleeps: number[] = [];

  now = (): number => this.#now;
  elapsed = (): number => this.#now - this.start;

  /** node:timers/promises setTimeout, as drain-nodes.ts calls it. */
  sleep = <T>(ms?: number, value?: T, opts?: { signal?: AbortSignal }): Promise<T> => {
    this.sleeps.push(ms ?? 0);
    return this.#wait(ms ?? 0, opts?.signal).then(() => value as T);
  };

  /** Time passing inside the fake (a request's latency): not one of drainNodes' sleeps. */
  delay = (ms: number): Promise<void> => this.#wait(ms, undefined);

  /** Runs `fn` (a change to the cluster) once the clock reaches `ms` after its start. */
  at(ms: number, fn: () => void): void {
    this.#add({ due: this.start + ms, seq: this.#seq++, waiter: false, fire: fn });
  }

  /** Runs `fn` `ms` from now. */
  after(ms: number, fn: () => void): void {
    this.at(this.elapsed() + ms, fn);
  }

  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#broken) return reject(this.#broken);
      if (signal?.aborted) return reject(abortError(signal));
      const t: Timer = {
        due: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        waiter: true,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#timers = this.#timers.filter((x) => x !== t);
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#add(t);
    });
  }

  #add(t: Timer): void {
    this.#timers.push(t);
    if (this.#pumping) return;
    this.#pumping = true;
    // setImmediate runs once every promise chain in flight has settled (the fake answers in
    // microtasks): everyone that can move has moved, so the clock may jump.
    setImmediate(() => this.#pump());
  }

  #pump(): void {
    this.#pumping = false;
    // Time passes only for someone waiting: changes scheduled past the end of a drain stay put.
    if (!this.#timers.some((t) => t.waiter)) return;
    this.#timers.sort((a, b) => a.due - b.due || a.seq - b.seq);
    const due = this.#timers[0]!.due;
    if (due <= this.#now) this.#still++;
    else this.#still = 0;
    if (this.#still > MAX_STILL_PUMPS) {
      // A mutant that loops at one instant: fail the run instead of spinning until the test times out.
      this.#broken = new Error('virtual clock: the code loops without letting time pass');
      return;
    }
    this.#now = Math.max(this.#now, due);
    const firing = this.#timers.filter((t) => t.due === due);
    this.#timers = this.#timers.filter((t) => t.due !== due);
    for (const t of firing) t.fire();
    if (this.#timers.length > 0) {
      this.#pumping = true;
      setImmediate(() => this.#pump());
    }
  }
}

/** What node's timers/promises rejects with when the signal aborts a wait. */
function abortError(signal: AbortSignal): Error {
  const e = new Error('The operation was aborted', { cause: signal.reason });
  e.name = 'AbortError';
  (e as Error & { code: string }).code = 'ABORT_ERR';
  return e;
}

let current: VirtualClock | undefined;

/** The clock the mocked node:timers/promises setTimeout uses (one per test). */
export function useClock(c: VirtualClock): void {
  current = c;
}

export const virtualSetTimeout = <T>(ms?: number, value?: T, opts?: { signal?: AbortSignal }): Promise<T> => {
  if (!current) throw new Error('no virtual clock: call useClock first');
  return current.sleep(ms, value, opts);
};
