/**
 * The cluster's own signals at each gate (an Alertmanager's alerts, the operator's probes), and the
 * silences of the alerts a step is expected to raise. Kept out of the orchestrator: it calls
 * `holdSignals` at each gate and `silenceFor` around each action.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { silenceMatchers } from '../knowledge/expected-alerts.js';
import type { ExpectedAlert, HealthSignal, SignalReading } from '../ports/signals.js';
import { errText, gateError } from '../ports/stop.js';
import type { RunDeps } from './deps.js';

/** Every signal read once, side by side; a read that throws is unobserved. */
async function readAll(signals: readonly HealthSignal[], signal?: AbortSignal) {
  return Promise.all(
    signals.map(async (s) => ({
      s,
      r: await s.read(signal).catch((e: unknown): SignalReading => {
        if (signal?.aborted) throw e;
        return { kind: 'unobserved', reason: `${s.name}: ${errText(e)}` };
      }),
    })),
  );
}

function describe(s: HealthSignal, r: SignalReading): string {
  switch (r.kind) {
    case 'clear':
      return `${s.name}: clear`;
    case 'firing':
      return `${s.name} reports ${r.items.length}: ${r.items.join('; ')}`;
    case 'unobserved':
      return `could not read ${s.name}: ${r.reason}`;
  }
}

/**
 * Before step `stepId`: every signal clear, read again every `pollMs` for up to `graceMs` (an alert
 * that resolves within the grace does not stop the run); otherwise a gate stop naming what fired
 * or could not be read. Each reading that is not clear is journaled.
 */
export async function holdSignals(
  deps: Pick<RunDeps, 'signals' | 'journal'>,
  stepId: string,
  o: { graceMs: number; pollMs: number; signal?: AbortSignal },
): Promise<void> {
  const signals = deps.signals ?? [];
  if (signals.length === 0) return;
  const deadline = Date.now() + o.graceMs;
  for (;;) {
    const readings = await readAll(signals, o.signal);
    const bad = readings.filter((x) => x.r.kind !== 'clear');
    if (bad.length === 0) return;
    deps.journal.observe(
      stepId,
      'signal',
      false,
      bad.map((x) => ({ signal: x.s.name, ...x.r })),
    );
    if (Date.now() + o.pollMs > deadline) {
      const unread = bad.some((x) => x.r.kind === 'unobserved');
      throw gateError(
        `the cluster's own signals do not hold before ${stepId}: ${bad.map((x) => describe(x.s, x.r)).join(' · ')}`,
        unread
          ? 'make the signal readable again (is the URL right, does it answer from here?), or run without it; then run ferry run --resume'
          : 'find out why it fires and fix it (a migration step adds load: the alert may be real), then run ferry run --resume; an alert the step is expected to raise is silenced with --silence-expected',
      );
    }
    await sleep(o.pollMs, undefined, o.signal ? { signal: o.signal } : undefined);
  }
}

/**
 * Silences the alerts a step raises by design (its handler's `expectedAlerts`, asked only when
 * there is a silencer) until a minute past its timeout, so a crashed run leaves no silence for
 * long, and returns what ends them when the step ends. Each silence is journaled made and ended.
 */
export async function silenceFor(
  deps: Pick<RunDeps, 'silencer' | 'journal'>,
  stepId: string,
  expected: () => readonly ExpectedAlert[],
  o: { timeoutMs: number; log: (line: string) => void; signal?: AbortSignal },
): Promise<() => Promise<void>> {
  const silencer = deps.silencer;
  const alerts = silencer ? expected() : [];
  if (!silencer || alerts.length === 0) return async () => undefined;
  const until = new Date(Date.now() + o.timeoutMs + 60_000);
  const made: { id: string; alert: ExpectedAlert }[] = [];
  for (const a of alerts) {
    const id = await silencer.silence(
      silenceMatchers(a),
      until,
      `ferry: ${stepId}: ${a.because}; expires when the step ends`,
      o.signal,
    );
    made.push({ id, alert: a });
    deps.journal.observe(stepId, 'silence', true, {
      id,
      alertname: a.alertname,
      labels: a.labels ?? {},
      until: until.toISOString(),
    });
    o.log(
      `silenced ${a.alertname}${a.labels ? ` ${JSON.stringify(a.labels)}` : ''} on ${silencer.name} until the step ends (${id})`,
    );
  }
  return async () => {
    for (const m of made)
      await silencer.expire(m.id).then(
        () => deps.journal.observe(stepId, 'silence', true, { id: m.id, expired: true }),
        (e: unknown) => {
          deps.journal.observe(stepId, 'silence', false, { id: m.id, expired: false, error: errText(e) });
          o.log(
            `could not end silence ${m.id} on ${silencer.name} (${errText(e)}): it ends by itself at ${until.toISOString()}`,
          );
        },
      );
  };
}
