/**
 * `--probe`: the operator's own endpoints, probed for the whole run (in its report beside the API
 * and etcd probes) and each gated on its failure budget since the last gate. `ferry run` and
 * `ferry rehearse` build them the same way.
 */
import { requestProbe } from '../adapters/probes/http.js';
import type { Probe } from '../ports/run.js';
import type { HealthSignal } from '../ports/signals.js';
import { probeBudget } from '../run/probe-budget.js';

/** One of the operator's endpoints and its failure budget. */
export interface UserProbe {
  url: string;
  expectStatus: number;
  /** Failed requests allowed per request since the last gate, 0..1. */
  maxFailRatio: number;
  intervalMs: number;
  timeoutMs: number;
}

export function userProbes(list: readonly UserProbe[]): { probes: Probe[]; signals: HealthSignal[] } {
  const built = list.map((u) => {
    const probe = requestProbe({ ...u, name: probeName(u.url) });
    // Quiet for longer than two requests' deadline and pause: the probe itself is stuck.
    const quietMs = 2 * (u.timeoutMs + u.intervalMs) + 1000;
    return { probe, signal: probeBudget(probe, { maxFailRatio: u.maxFailRatio, quietMs }) };
  });
  return { probes: built.map((b) => b.probe), signals: built.map((b) => b.signal) };
}

/** A probe's name in the report and the stop message: host and path, no scheme or query. */
function probeName(url: string): string {
  const u = new URL(url);
  return `${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}
