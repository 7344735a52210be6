import { describe, expect, it } from 'vitest';
import { holds, parseSlo } from './slo.js';

describe('SLO expressions', () => {
  it('splits at the last comparison; the query may hold comparisons of its own', () => {
    expect(parseSlo('max(rate(http_errors_total[1m]))<=0.01')).toMatchObject({
      query: 'max(rate(http_errors_total[1m]))',
      op: '<=',
      value: 0.01,
    });
    expect(parseSlo('sum(up{job="etcd"} == 1) >= 3')).toMatchObject({
      query: 'sum(up{job="etcd"} == 1)',
      op: '>=',
      value: 3,
    });
    expect(parseSlo('x < -1e-3')).toMatchObject({ op: '<', value: -0.001 });
    expect(parseSlo('x == 0')).toMatchObject({ op: '==', value: 0 });
  });

  it('refuses what has no comparison, no number or no query', () => {
    expect(parseSlo('up')).toEqual({ error: expect.stringContaining('QUERY<=VALUE') });
    expect(parseSlo('up <= high')).toEqual({ error: expect.stringContaining('QUERY<=VALUE') });
    expect(parseSlo('<= 3')).toEqual({ error: expect.stringContaining('QUERY<=VALUE') });
  });

  it('compares each way; NaN holds none', () => {
    expect([
      holds(1, '<=', 1),
      holds(1, '<', 1),
      holds(2, '>=', 2),
      holds(2, '>', 2),
      holds(3, '==', 3),
    ]).toEqual([true, false, true, false, true]);
    for (const op of ['<=', '<', '>=', '>', '=='] as const) expect(holds(Number.NaN, op, 0)).toBe(false);
  });
});
