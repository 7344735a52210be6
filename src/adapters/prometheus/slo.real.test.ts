/**
 * The SLO signal against a real Prometheus scraping a test exporter: a query that holds is clear,
 * one that does not names each series and its value, a query with no series or an error, and a
 * Prometheus that does not answer, are unobserved (never a pass).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipFor } from '../../lab/testing-binaries.js';
import { PrometheusSlo, parseSlo, type Slo } from './slo.js';
import { prometheusMissing, startPrometheus, type TestPrometheus } from './testing-prometheus.js';

const slo = (t: string): Slo => {
  const s = parseSlo(t);
  if ('error' in s) throw new Error(s.error);
  return s;
};

describe.skipIf(skipFor(prometheusMissing()))('SLO signal (real Prometheus)', () => {
  let prom: TestPrometheus;
  beforeAll(async () => {
    prom = await startPrometheus();
  }, 40_000);
  afterAll(async () => prom?.stop());

  it('clear while the query holds; firing with the series once it does not; unobserved on nothing or an error', async () => {
    prom.metrics.set('shop_errors_ratio', 0);
    await prom.scraped('shop_errors_ratio');
    const s = new PrometheusSlo(prom.url, slo('max(shop_errors_ratio) <= 0.01'));
    expect(s.name).toMatch(/^SLO max\(shop_errors_ratio\) <= 0\.01 on Prometheus 127\.0\.0\.1:\d+$/);
    expect(await s.read()).toEqual({ kind: 'clear' });

    prom.metrics.set('shop_errors_ratio', 0.2);
    const perSeries = new PrometheusSlo(prom.url, slo('shop_errors_ratio<=0.01'));
    const deadline = Date.now() + 15_000;
    let r = await perSeries.read();
    while (r.kind === 'clear' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      r = await perSeries.read();
    }
    expect(r).toEqual({
      kind: 'firing',
      items: [
        expect.stringMatching(
          /^shop_errors_ratio\{instance="127\.0\.0\.1:\d+", job="app"\} = 0\.2 \(wants <= 0\.01\)$/,
        ),
      ],
    });

    expect(await new PrometheusSlo(prom.url, slo('no_such_metric <= 1')).read()).toEqual({
      kind: 'unobserved',
      reason: 'the query returned no series: nothing was measured',
    });
    expect(await new PrometheusSlo(prom.url, slo('rate(shop_errors_ratio) <= 1')).read()).toEqual({
      kind: 'unobserved',
      reason: expect.stringMatching(/^the query failed: HTTP 400: .*range/),
    });
    expect(await new PrometheusSlo(prom.url, slo('scalar(max(shop_errors_ratio)) < 1')).read()).toEqual({
      kind: 'clear',
    });
  }, 40_000);

  it('a Prometheus that does not answer is unobserved', async () => {
    const other = await startPrometheus();
    const s = new PrometheusSlo(other.url, slo('vector(1) == 1'), { timeoutMs: 1000 });
    expect(await s.read()).toEqual({ kind: 'clear' });
    other.kill();
    await other.stop();
    expect(await s.read()).toEqual({
      kind: 'unobserved',
      reason: expect.stringMatching(/^Prometheus did not answer: /),
    });
  }, 40_000);
});
