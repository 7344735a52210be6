/**
 * A probe loop: one attempt at a time, each with a deadline, a pause between them; every attempt
 * becomes a sample. Sequential on purpose: a write gap is only meaningful between writes that do
 * not overlap.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Probe, ProbeSample, ProbeSummary } from '../../ports/run.js';
import { summarize } from './window.js';

export interface LoopOptions {
  name: string;
  description: string;
  /** Pause after each attempt. */
  intervalMs: number;
  /** Deadline of one attempt; a late answer is a failure. */
  timeoutMs: number;
  /** One attempt; throws (or rejects) on failure. Receives a signal aborted at the deadline. */
  attempt: (signal: AbortSignal) => Promise<void>;
  /** Runs once after the loop stopped, before the summary (e.g. read back acknowledged writes). */
  finish?: () => Promise<Record<string, number | string> | undefined>;
  /** Called after each sample (live display). */
  onSample?: (s: ProbeSample) => void;
}

export class ProbeLoop implements Probe {
  readonly name: string;
  readonly #opts: LoopOptions;
  readonly #samples: ProbeSample[] = [];
  #t0 = 0;
  #running: Promise<void> | undefined;
  #stopping = false;
  #stopped: Promise<ProbeSummary> | undefined;
  #extra: Record<string, number | string> | undefined;

  constructor(opts: LoopOptions) {
    this.name = opts.name;
    this.#opts = opts;
  }

  start(): void {
    if (this.#running) return;
    this.#t0 = performance.now();
    this.#running = this.#loop();
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      const t = performance.now() - this.#t0;
      const ctl = new AbortController();
      const timer = setTimeout(
        () => ctl.abort(new Error(`no answer within ${this.#opts.timeoutMs} ms`)),
        this.#opts.timeoutMs,
      );
      let sample: ProbeSample;
      try {
        await Promise.race([
          this.#opts.attempt(ctl.signal),
          new Promise<never>((_, reject) =>
            ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason), { once: true }),
          ),
        ]);
        sample = { t, ok: true, latencyMs: performance.now() - this.#t0 - t };
      } catch (err) {
        sample = {
          t,
          ok: false,
          latencyMs: performance.now() - this.#t0 - t,
          error: (err as Error)?.message ?? String(err),
        };
      } finally {
        clearTimeout(timer);
      }
      this.#samples.push(sample);
      this.#opts.onSample?.(sample);
      if (this.#opts.intervalMs > 0) await sleep(this.#opts.intervalMs);
      else await new Promise((r) => setImmediate(r));
    }
  }

  /** Stops the loop and runs `finish` once; later calls return the same summary. */
  stop(): Promise<ProbeSummary> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      await this.#running;
      if (this.#opts.finish) this.#extra = await this.#opts.finish();
      return this.summary();
    })();
    return this.#stopped;
  }

  summary(): ProbeSummary {
    return summarize(this.name, this.#opts.description, this.#samples, this.#extra);
  }

  samples(): ProbeSample[] {
    return [...this.#samples];
  }
}
