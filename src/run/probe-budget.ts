/**
 * An operator's probe (`--probe URL,max-fail=0.1%`) as a health signal: at each gate, the requests
 * made since the previous gate; more failed than the budget allows and the run stops, naming the
 * failures. A probe that made no request for longer than its deadline and pause allow has not been
 * seen to hold (unobserved).
 */

import type { Probe } from '../ports/run.js';
import type { HealthSignal, SignalReading } from '../ports/signals.js';

export interface ProbeBudgetOptions {
  /** Failed requests allowed per request, 0..1 (0.001 is 0.1 %). */
  maxFailRatio: number;
  /** Longest a probe may go without finishing a request (its deadline plus its pause). */
  quietMs: number;
  now?: () => number;
}

export function probeBudget(probe: Probe, o: ProbeBudgetOptions): HealthSignal {
  const now = o.now ?? (() => performance.now());
  let last = { attempts: 0, failures: 0, errors: new Map<string, number>(), at: now() };
  return {
    name: `probe ${probe.name}`,
    async read(): Promise<SignalReading> {
      const s = probe.summary();
      const at = now();
      const attempts = s.attempts - last.attempts;
      const failures = s.failures - last.failures;
      const errors = new Map(s.errors.map((e) => [e.message, e.count]));
      const since = last;
      if (attempts === 0) {
        if (at - since.at <= o.quietMs) return { kind: 'clear' };
        return {
          kind: 'unobserved',
          reason: `it finished no request in the last ${Math.round((at - since.at) / 1000)} s`,
        };
      }
      last = { attempts: s.attempts, failures: s.failures, errors, at };
      if (failures <= attempts * o.maxFailRatio) return { kind: 'clear' };
      const kinds = [...errors]
        .map(([m, c]) => [m, c - (since.errors.get(m) ?? 0)] as const)
        .filter(([, c]) => c > 0)
        .map(([m, c]) => `${m} ×${c}`);
      return {
        kind: 'firing',
        items: [
          `${failures} of ${attempts} requests failed since the last gate (${percent(failures / attempts)}, more than the ${percent(o.maxFailRatio)} allowed)${kinds.length ? `: ${kinds.join(', ')}` : ''}`,
        ],
      };
    },
  };
}

function percent(r: number): string {
  return `${Math.round(r * 100_000) / 1000} %`;
}
