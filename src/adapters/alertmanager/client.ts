/**
 * Alertmanager's API v2 as the run's health signal and silencer: the firing alerts that match the
 * operator's matcher groups (active, neither silenced nor inhibited) stop the run at the next gate;
 * the alerts a step is expected to raise are silenced for the step. An Alertmanager that does not
 * answer is `unobserved`, never "no alerts".
 */
import type { HealthSignal, LabelMatcher, SignalReading, Silencer } from '../../ports/signals.js';
import { formatMatcher, matches } from '../../util/label-match.js';

export interface AlertmanagerOptions {
  /** Its base URL: `http://127.0.0.1:9093` (a path prefix such as `/alertmanager` is kept). */
  url: string;
  /** An alert stops the run when it matches any group. Default: `severity="critical"`. */
  groups?: LabelMatcher[][];
  /** Per request. Default 5 s. */
  timeoutMs?: number;
  /** Recorded as the silences' author. Default `ferry`. */
  createdBy?: string;
}

interface GettableAlert {
  labels?: Record<string, string>;
  startsAt?: string;
  status?: { state?: string };
}

export const DEFAULT_ALERT_GROUPS: LabelMatcher[][] = [
  [{ name: 'severity', value: 'critical', isRegex: false, isEqual: true }],
];

/** One line per alert: its name and its other labels, sorted, as a person reads them. */
export function describeAlert(labels: Readonly<Record<string, string>>, startsAt?: string): string {
  const rest = Object.entries(labels)
    .filter(([k]) => k !== 'alertname')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${labels['alertname'] ?? '(no alertname)'}{${rest.join(', ')}}${startsAt ? ` since ${startsAt}` : ''}`;
}

export class Alertmanager implements HealthSignal, Silencer {
  readonly name: string;
  readonly #base: string;
  readonly #groups: LabelMatcher[][];
  readonly #timeoutMs: number;
  readonly #createdBy: string;

  constructor(o: AlertmanagerOptions) {
    const u = new URL(o.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new RangeError(`Alertmanager ${o.url}: not an http:// or https:// URL`);
    this.#base = `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
    this.name = `Alertmanager ${u.host}`;
    this.#groups = o.groups ?? DEFAULT_ALERT_GROUPS;
    this.#timeoutMs = o.timeoutMs ?? 5_000;
    this.#createdBy = o.createdBy ?? 'ferry';
  }

  /** What the matcher groups are, for the run's log. */
  describeGroups(): string {
    return this.#groups.map((g) => `{${g.map(formatMatcher).join(', ')}}`).join(' or ');
  }

  async read(signal?: AbortSignal): Promise<SignalReading> {
    let alerts: GettableAlert[];
    try {
      const res = await this.#fetch('/api/v2/alerts?active=true&silenced=false&inhibited=false', {}, signal);
      const body = (await res.json()) as unknown;
      if (!Array.isArray(body))
        return { kind: 'unobserved', reason: `${this.name}: /api/v2/alerts did not answer a list` };
      alerts = body as GettableAlert[];
    } catch (e) {
      if (signal?.aborted) throw e;
      return { kind: 'unobserved', reason: `${this.name} did not answer: ${(e as Error).message}` };
    }
    const firing = alerts.filter(
      (a) =>
        (a.status?.state ?? 'active') === 'active' && this.#groups.some((g) => matches(a.labels ?? {}, g)),
    );
    return firing.length === 0
      ? { kind: 'clear' }
      : { kind: 'firing', items: firing.map((a) => describeAlert(a.labels ?? {}, a.startsAt)) };
  }

  async silence(
    matchers: LabelMatcher[],
    endsAt: Date,
    comment: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const res = await this.#fetch(
      '/api/v2/silences',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          matchers,
          startsAt: new Date().toISOString(),
          endsAt: endsAt.toISOString(),
          createdBy: this.#createdBy,
          comment,
        }),
      },
      signal,
    );
    const id = ((await res.json()) as { silenceID?: string }).silenceID;
    if (!id) throw new Error(`${this.name}: the silence was not created (no silenceID in the answer)`);
    return id;
  }

  async expire(id: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.#fetch(`/api/v2/silence/${encodeURIComponent(id)}`, { method: 'DELETE' }, signal);
    } catch (e) {
      // Gone already (expired, or the server forgot it): nothing is silenced any more.
      if (e instanceof HttpError && (e.status === 404 || /already expired/i.test(e.body))) return;
      throw e;
    }
  }

  async #fetch(path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const res = await fetch(`${this.#base}${path}`, {
      ...init,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (!res.ok)
      throw new HttpError(res.status, `${init.method ?? 'GET'} ${path}`, await res.text().catch(() => ''));
    return res;
  }
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    what: string,
    readonly body: string,
  ) {
    super(`${what}: HTTP ${status}${body ? `: ${body.trim().slice(0, 200)}` : ''}`);
  }
}
