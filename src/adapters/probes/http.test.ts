import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { quantile, requestProbe } from './http.js';

it('quantile: nearest rank', () => {
  const v = Array.from({ length: 100 }, (_, i) => i + 1);
  expect(quantile(v, 0.99)).toBe(99);
  expect(quantile(v, 0.5)).toBe(50);
  expect(quantile([7], 0.99)).toBe(7);
  expect(quantile([], 0.99)).toBe(0);
});

it('the request probe counts non-200 answers as failed requests and reports latency quantiles', async () => {
  let failing = false;
  const server = createServer((_req, res) => {
    res.writeHead(failing ? 503 : 200);
    res.end('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const probe = requestProbe({ url, intervalMs: 5 });
  try {
    probe.start();
    await sleep(150);
    failing = true;
    await sleep(150);
    failing = false;
    await sleep(150);
  } finally {
    await probe.stop();
    server.close();
  }
  const s = probe.summary();
  expect(s.name).toBe('app-request');
  expect(s.description).toMatch(/^GET \/ on 127\.0\.0\.1:\d+ every 5 ms/);
  expect(s.description).not.toContain('http://');
  expect(s.failures).toBeGreaterThan(0);
  expect(s.failures).toBeLessThan(s.attempts);
  expect(s.errors[0]?.message).toMatch(/^HTTP 503/);
  expect(s.longestFailureWindowMs).toBeGreaterThanOrEqual(100);
  expect(Number(s.extra?.['p99LatencyMs'])).toBeGreaterThan(0);
  expect(Number(s.extra?.['p99LatencyMs'])).toBeGreaterThanOrEqual(Number(s.extra?.['p50LatencyMs']));
});
