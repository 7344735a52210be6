/**
 * The request probe: an HTTP GET against an application's Service every few ms for the
 * whole roll, on a new connection each time (so each request is routed afresh, as a new user's
 * would be), as the users of the cluster's applications feel it. A request fails on a connection
 * error, a status other than 200, or no answer within its deadline. Besides the failure count and
 * the longest failure window, its summary carries the p99 (and p50, max) latency of the requests
 * that succeeded.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ProbeSample } from '../../ports/run.js';
import { ProbeLoop } from './loop.js';

export interface RequestProbeOptions {
  /** http(s)://HOST:PORT/PATH; loopback only in tests and the lab. */
  url: string;
  /** The status a good answer has. Default 200. */
  expectStatus?: number;
  /** Default `app-request`. */
  name?: string;
  /** Pause between requests. Default 10 ms. */
  intervalMs?: number;
  /** Per request. Default 1 s. */
  timeoutMs?: number;
  onSample?: (s: ProbeSample) => void;
}

/** The q-quantile (0..1) of `values` by the nearest-rank method; 0 for none. Pure. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function requestProbe(opts: RequestProbeOptions): ProbeLoop {
  const url = new URL(opts.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`request probe: ${opts.url} is not an http:// or https:// URL`);
  const expect = opts.expectStatus ?? 200;
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const latencies: number[] = [];
  const loop: ProbeLoop = new ProbeLoop({
    name: opts.name ?? 'app-request',
    // Host and path, not the URL: a report names no link.
    description: `GET ${url.pathname} on ${url.host} every ${opts.intervalMs ?? 10} ms (a new connection each time)`,
    intervalMs: opts.intervalMs ?? 10,
    timeoutMs,
    onSample: (s) => {
      if (s.ok) latencies.push(s.latencyMs);
      opts.onSample?.(s);
    },
    attempt: (signal) => get(url, expect, signal),
    finish: async () => ({
      p50LatencyMs: round(quantile(latencies, 0.5)),
      p99LatencyMs: round(quantile(latencies, 0.99)),
      maxLatencyMs: round(quantile(latencies, 1)),
    }),
  });
  return loop;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

function get(url: URL, expect: number, signal: AbortSignal): Promise<void> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: false, signal }, (res) => {
      res.resume();
      res.on('error', reject);
      res.on('end', () =>
        res.statusCode === expect ? resolve() : reject(new Error(`HTTP ${res.statusCode} from ${url.host}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
