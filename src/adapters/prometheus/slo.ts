/**
 * A Prometheus instant query as a health signal (`--prometheus URL --slo 'QUERY<=VALUE'`): at each
 * gate the query is evaluated; every series it returns must satisfy the comparison. A query that
 * returns nothing has measured nothing (unobserved, never a pass), as has a Prometheus that does
 * not answer or answers an error.
 */
import type { HealthSignal, SignalReading } from '../../ports/signals.js';

export type Comparison = '<=' | '<' | '>=' | '>' | '==';

export interface Slo {
  query: string;
  op: Comparison;
  value: number;
  /** As written by the operator, for messages. */
  text: string;
}

/** `QUERY<=VALUE` (or `<`, `>=`, `>`, `==`): the last comparison in the text splits it. */
export function parseSlo(text: string): Slo | { error: string } {
  const m = /^(.*\S)\s*(<=|>=|==|<|>)\s*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$/s.exec(text);
  if (!m) return { error: 'write it as QUERY<=VALUE (or <, >=, >, ==) with a number on the right' };
  const query = m[1]!.trim();
  if (query === '') return { error: 'no query before the comparison' };
  return { query, op: m[2] as Comparison, value: Number(m[3]), text };
}

export function holds(v: number, op: Comparison, bound: number): boolean {
  switch (op) {
    case '<=':
      return v <= bound;
    case '<':
      return v < bound;
    case '>=':
      return v >= bound;
    case '>':
      return v > bound;
    case '==':
      return v === bound;
  }
}

interface QueryAnswer {
  status?: string;
  error?: string;
  data?: {
    resultType?: string;
    result?: unknown;
  };
}

export class PrometheusSlo implements HealthSignal {
  readonly name: string;
  readonly #url: string;
  readonly #slo: Slo;
  readonly #timeoutMs: number;

  constructor(url: string, slo: Slo, o: { timeoutMs?: number } = {}) {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new RangeError(`Prometheus ${url}: not an http:// or https:// URL`);
    this.#url = `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
    this.#slo = slo;
    this.#timeoutMs = o.timeoutMs ?? 5_000;
    this.name = `SLO ${slo.text} on Prometheus ${u.host}`;
  }

  async read(signal?: AbortSignal): Promise<SignalReading> {
    let answer: QueryAnswer;
    try {
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      const res = await fetch(`${this.#url}/api/v1/query?query=${encodeURIComponent(this.#slo.query)}`, {
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      answer = (await res.json()) as QueryAnswer;
      if (!res.ok || answer.status !== 'success')
        return {
          kind: 'unobserved',
          reason: `the query failed: HTTP ${res.status}${answer.error ? `: ${answer.error}` : ''}`,
        };
    } catch (e) {
      if (signal?.aborted) throw e;
      return { kind: 'unobserved', reason: `Prometheus did not answer: ${(e as Error).message}` };
    }
    const values = samples(answer.data);
    if (values === undefined)
      return {
        kind: 'unobserved',
        reason: `the query answered a ${answer.data?.resultType ?? 'missing'} result, not a vector or scalar`,
      };
    if (values.length === 0)
      return { kind: 'unobserved', reason: 'the query returned no series: nothing was measured' };
    const bad = values.filter((s) => !holds(s.value, this.#slo.op, this.#slo.value));
    if (bad.length === 0) return { kind: 'clear' };
    return {
      kind: 'firing',
      items: bad.map((s) => `${s.series} = ${s.value} (wants ${this.#slo.op} ${this.#slo.value})`),
    };
  }
}

/** The samples of an instant vector or scalar, NaN kept (a NaN satisfies no comparison). */
function samples(data: QueryAnswer['data']): { series: string; value: number }[] | undefined {
  if (data?.resultType === 'scalar' && Array.isArray(data.result))
    return [{ series: 'scalar', value: Number((data.result as unknown[])[1]) }];
  if (data?.resultType !== 'vector' || !Array.isArray(data.result)) return undefined;
  return (data.result as { metric?: Record<string, string>; value?: [number, string] }[]).map((r) => {
    const labels = Object.entries(r.metric ?? {})
      .filter(([k]) => k !== '__name__')
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return { series: `${r.metric?.['__name__'] ?? ''}{${labels.join(', ')}}`, value: Number(r.value?.[1]) };
  });
}
