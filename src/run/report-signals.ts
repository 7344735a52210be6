/**
 * The cluster's own signals in the run report: each gate at which one was not clear (the Alertmanager's
 * alerts, a probe's failures, an SLO, or a signal that could not be read), and every silence ferry
 * made for a step's expected alerts, with whether it ended with its step.
 */
import type { SignalReading } from '../ports/signals.js';
import type { ObservationRow } from './journal.js';

export interface SignalRow {
  at: string;
  step: string;
  signal: string;
  reading: string;
}

export interface SilenceRow {
  id: string;
  step: string;
  alert: string;
  madeAt: string;
  until: string;
  /** Ended by ferry when its step ended; false: it ends by itself at `until`. */
  ended: boolean;
}

export interface SignalReport {
  notClear: SignalRow[];
  silences: SilenceRow[];
}

type Reading = SignalReading & { signal: string };

function readingText(r: Reading): string {
  switch (r.kind) {
    case 'clear':
      return 'clear';
    case 'firing':
      return r.items.join('; ');
    case 'unobserved':
      return `not read: ${r.reason}`;
  }
}

export function signalReport(input: {
  signals?: ObservationRow[];
  silences?: ObservationRow[];
}): SignalReport | undefined {
  const signals = input.signals ?? [];
  const silenceRows = input.silences ?? [];
  if (signals.length === 0 && silenceRows.length === 0) return undefined;
  // A gate reads every poll while it waits: one row per step, signal and reading.
  const seen = new Set<string>();
  const notClear: SignalRow[] = [];
  for (const o of signals)
    for (const r of o.data as Reading[]) {
      const row = { at: o.at, step: o.stepId ?? '', signal: r.signal, reading: readingText(r) };
      const key = `${row.step}|${row.signal}|${row.reading}`;
      if (seen.has(key)) continue;
      seen.add(key);
      notClear.push(row);
    }
  const silences = new Map<string, SilenceRow>();
  for (const o of silenceRows) {
    const d = o.data as {
      id: string;
      alertname?: string;
      labels?: Record<string, string>;
      until?: string;
      expired?: boolean;
    };
    if (d.expired === undefined) {
      const labels = Object.entries(d.labels ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      silences.set(d.id, {
        id: d.id,
        step: o.stepId ?? '',
        alert: `${d.alertname ?? '?'}${labels.length ? `{${labels.join(', ')}}` : ''}`,
        madeAt: o.at,
        until: d.until ?? '',
        ended: false,
      });
    } else if (d.expired) {
      const s = silences.get(d.id);
      if (s) s.ended = true;
    }
  }
  return { notClear, silences: [...silences.values()] };
}

const cell = (s: string) => s.replace(/\|/g, '\\|');

export function signalsMarkdown(r: SignalReport): string[] {
  const lines = ["## The cluster's own signals", ''];
  if (r.notClear.length === 0) lines.push('Every signal was clear at every gate.', '');
  else {
    lines.push('| at | before step | signal | reading |', '|---|---|---|---|');
    for (const s of r.notClear)
      lines.push(`| ${s.at} | \`${s.step}\` | ${cell(s.signal)} | ${cell(s.reading)} |`);
    lines.push('');
  }
  if (r.silences.length > 0) {
    lines.push(
      'Silences made for the alerts a step raises by design:',
      '',
      '| step | alert | made | ended |',
      '|---|---|---|---|',
    );
    for (const s of r.silences)
      lines.push(
        `| \`${s.step}\` | ${cell(s.alert)} | ${s.madeAt} | ${s.ended ? 'with its step' : `**not by ferry**: by itself at ${s.until}`} |`,
      );
    lines.push('');
  }
  return lines;
}

export function signalsHtml(r: SignalReport, esc: (s: string) => string): string[] {
  const out = ["<h2>The cluster's own signals</h2>"];
  if (r.notClear.length === 0) out.push('<p>Every signal was clear at every gate.</p>');
  else {
    out.push('<table><tr><th>at</th><th>before step</th><th>signal</th><th>reading</th></tr>');
    for (const s of r.notClear)
      out.push(
        `<tr><td>${esc(s.at)}</td><td><code>${esc(s.step)}</code></td><td>${esc(s.signal)}</td><td class="fail">${esc(s.reading)}</td></tr>`,
      );
    out.push('</table>');
  }
  if (r.silences.length > 0) {
    out.push(
      '<p>Silences made for the alerts a step raises by design:</p><table><tr><th>step</th><th>alert</th><th>made</th><th>ended</th></tr>',
    );
    for (const s of r.silences)
      out.push(
        `<tr><td><code>${esc(s.step)}</code></td><td>${esc(s.alert)}</td><td>${esc(s.madeAt)}</td><td class="${s.ended ? 'pass' : 'fail'}">${s.ended ? 'with its step' : `not by ferry: by itself at ${esc(s.until)}`}</td></tr>`,
      );
    out.push('</table>');
  }
  return out;
}
