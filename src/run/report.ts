/**
 * The run report, from the journal and the probes: what ran when (a timeline of steps), how the
 * cluster fared meanwhile (probe figures and a plot), and how the run ended. Markdown for tickets,
 * one self-contained HTML page (inline SVG, no script, no external resource) for people.
 */

import type { Plan } from '../plan/model.js';
import type { ProbeRecord, ProbeSample, ProbeSummary } from '../ports/run.js';
import { escapeHtml as esc } from '../util/escape-html.js';
import type { ObservationRow, RunRow, TransitionRow } from './journal.js';
import { batchReport, batchTableHtml, batchTableMarkdown } from './report-batches.js';
import { signalReport, signalsHtml, signalsMarkdown } from './report-signals.js';

export interface ReportCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ReportInput {
  title: string;
  plan: Plan;
  planFile: string;
  runs: RunRow[];
  transitions: TransitionRow[];
  runEnds: TransitionRow[];
  probes: ProbeRecord[];
  /** Context lines (which etcd binaries stand in for which versions, the lab's address map …). */
  notes?: string[];
  /** Assertions about the run (a rehearsal: no API error, no write lost, no PDB violated …). */
  checks?: ReportCheck[];
  /** The journal's drain-progress observations: pods moved per worker batch. */
  drainProgress?: ObservationRow[];
  /** The journal's signal observations (a signal not clear at a gate) and silences. */
  signals?: ObservationRow[];
  silences?: ObservationRow[];
}

export interface StepSpan {
  id: string;
  title: string;
  kind: string;
  phase: number;
  destructive: boolean;
  start: number;
  end: number;
  outcome: string;
  attempts: number;
}

/** One span per step: from its first `started` to its last transition. */
export function timeline(input: Pick<ReportInput, 'plan' | 'transitions'>): StepSpan[] {
  const meta = new Map(input.plan.phases.flatMap((p) => p.steps).map((s) => [s.id, s]));
  const spans = new Map<string, StepSpan>();
  for (const t of input.transitions) {
    const s = meta.get(t.stepId);
    if (!s) continue;
    const at = Date.parse(t.at);
    let span = spans.get(t.stepId);
    if (!span) {
      span = {
        id: s.id,
        title: s.title,
        kind: s.kind,
        phase: s.phase,
        destructive: s.destructive,
        start: at,
        end: at,
        outcome: t.state,
        attempts: 0,
      };
      spans.set(t.stepId, span);
    }
    span.end = Math.max(span.end, at);
    span.outcome = t.state;
    if (t.state === 'started') span.attempts++;
  }
  return [...spans.values()].sort((a, b) => a.start - b.start);
}

/** Probe records as the journal kept them. */
export function probeRecordsFrom(observations: ObservationRow[]): ProbeRecord[] {
  return observations.filter((o) => o.purpose === 'probe').map((o) => o.data as ProbeRecord);
}

function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
}

function outcomeOf(input: ReportInput): { status: string; detail: string } {
  const end = input.runEnds.at(-1);
  if (!end)
    return {
      status: 'running or killed',
      detail: 'the last run recorded no end (it was killed, or still runs)',
    };
  const d = end.detail as { message?: string; remediation?: string } | null;
  if (end.state === 'completed') return { status: 'completed', detail: '' };
  return {
    status: end.state,
    detail: `${d?.message ?? ''}${d?.remediation ? `\nfix: ${d.remediation}` : ''}`,
  };
}

function probeRow(s: ProbeSummary): string[] {
  const lost = s.extra?.['lost'];
  return [
    s.name,
    String(s.attempts),
    String(s.failures),
    ms(s.longestFailureWindowMs),
    ms(s.longestGapMs),
    lost === undefined ? '' : String(lost),
  ];
}

// ---- Markdown -----------------------------------------------------------------------------------

export function renderReportMarkdown(input: ReportInput): string {
  const spans = timeline(input);
  const out = outcomeOf(input);
  const t0 = spans[0]?.start ?? 0;
  const lines: string[] = [
    `# ${input.title}`,
    '',
    `- plan: \`${input.planFile}\` (strategy ${input.plan.strategy}, Talos ${input.plan.target.talosVersion}, ${input.plan.controlPlanes.length} control planes)`,
    `- runs: ${input.runs.length} (${input.runs.map((r) => `${r.runId.slice(0, 8)} pid ${r.pid} at ${r.startedAt}`).join('; ')})`,
    `- outcome: **${out.status}**${out.detail ? `\n\n\`\`\`\n${out.detail}\n\`\`\`` : ''}`,
    '',
  ];
  if (input.notes?.length) lines.push('## Context', '', ...input.notes.map((n) => `- ${n}`), '');
  if (input.checks?.length) {
    lines.push('## Checks', '', '| check | result | detail |', '|---|---|---|');
    for (const c of input.checks)
      lines.push(`| ${c.name} | ${c.ok ? 'pass' : '**FAIL**'} | ${c.detail.replace(/\|/g, '\\|')} |`);
    lines.push('');
  }
  lines.push('## Availability (probes through the endpoint and etcd)', '');
  if (input.probes.length === 0) lines.push('No probes ran.', '');
  else {
    lines.push(
      '| probe | attempts | failures | longest failure window | longest gap | acknowledged writes lost |',
      '|---|---|---|---|---|---|',
    );
    for (const p of input.probes) lines.push(`| ${probeRow(p.summary).join(' | ')} |`);
    lines.push('');
    for (const p of input.probes) {
      lines.push(`- **${p.summary.name}**: ${p.summary.description}`);
      for (const e of p.summary.errors) lines.push(`  - ${e.count}× ${e.message}`);
    }
    lines.push('');
  }
  const signals = signalReport(input);
  if (signals) lines.push(...signalsMarkdown(signals));
  const batches = batchReport(input);
  if (batches) lines.push(...batchTableMarkdown(batches));
  lines.push('## Timeline', '', '| start | duration | step | outcome | attempts |', '|---|---|---|---|---|');
  for (const s of spans) {
    lines.push(
      `| +${ms(s.start - t0)} | ${ms(s.end - s.start)} | \`${s.id}\` ${s.title}${s.destructive ? ' **(destructive)**' : ''} | ${s.outcome} | ${s.attempts} |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

// ---- HTML ---------------------------------------------------------------------------------------

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1b1f24}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccd;padding:.2em .6em;text-align:left;vertical-align:top}
.pass{color:#1a7f37;font-weight:600}.fail{color:#cf222e;font-weight:700}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.5em .8em;white-space:pre-wrap}
code{font-family:ui-monospace,monospace;font-size:.92em}.muted{color:#666}
svg text{font:11px system-ui,sans-serif;fill:#333}
`;

const KIND_COLOUR: Record<string, string> = {
  gate: '#8c959f',
  provision: '#0969da',
  'provision-request': '#0969da',
  'provision-detect': '#218bff',
  'wait-member-joined': '#54aeff',
  'wait-member-voter': '#54aeff',
  'wait-node-ready': '#54aeff',
  'lb-add': '#8250df',
  'lb-remove': '#8250df',
  cordon: '#bf8700',
  drain: '#bf8700',
  'stop-apiserver': '#bc4c00',
  'etcd-move-leader': '#1a7f37',
  'etcd-remove-member': '#cf222e',
  'verify-membership': '#8c959f',
  decommission: '#cf222e',
  'delete-node': '#cf222e',
};

/** Step bars on top, one lane per probe below (latency dots, failures in red), one time axis. */
export function timelineSvg(spans: StepSpan[], probes: ProbeRecord[]): string {
  const W = 1000;
  const left = 120;
  const plotW = W - left - 10;
  const stepH = 8;
  const rows = spans.length;
  const laneH = 70;
  const top = 20;
  const stepsH = rows * (stepH + 2);
  const H = top + stepsH + 20 + probes.length * (laneH + 20) + 20;
  const starts = [...spans.map((s) => s.start), ...probes.map((p) => Date.parse(p.startedAt))].filter(
    Number.isFinite,
  );
  const ends = [
    ...spans.map((s) => s.end),
    ...probes.map(
      (p) => Date.parse(p.startedAt) + (p.samples.at(-1)?.t ?? 0) + (p.samples.at(-1)?.latencyMs ?? 0),
    ),
  ].filter(Number.isFinite);
  const t0 = Math.min(...starts);
  const t1 = Math.max(...ends, t0 + 1);
  const x = (t: number) => left + ((t - t0) / (t1 - t0)) * plotW;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="timeline of steps and probe results">`,
  ];
  // time axis ticks
  const span = t1 - t0;
  const tick =
    [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600].map((s) => s * 1000).find((s) => span / s <= 12) ??
    3_600_000;
  for (let t = 0; t <= span; t += tick) {
    const px = x(t0 + t).toFixed(1);
    parts.push(`<line x1="${px}" y1="${top - 5}" x2="${px}" y2="${H - 15}" stroke="#eee"/>`);
    parts.push(`<text x="${px}" y="${H - 3}" text-anchor="middle">${Math.round(t / 1000)} s</text>`);
  }
  parts.push(`<text x="4" y="${top - 6}">steps</text>`);
  spans.forEach((s, i) => {
    const y = top + i * (stepH + 2);
    const w = Math.max(1.5, x(s.end) - x(s.start));
    const colour =
      s.outcome === 'stopped' || s.outcome === 'failed' ? '#cf222e' : (KIND_COLOUR[s.kind] ?? '#6e7781');
    const opacity = s.outcome === 'skipped' || s.outcome === 'already-done' ? 0.35 : 0.9;
    parts.push(
      `<rect x="${x(s.start).toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${stepH}" fill="${colour}" fill-opacity="${opacity}"><title>${esc(`${s.id} ${s.title}: ${s.outcome}, ${ms(s.end - s.start)}`)}</title></rect>`,
    );
    if (i % 5 === 0)
      parts.push(`<text x="4" y="${y + stepH}">${esc(s.id.split('.').slice(0, 2).join('.'))}</text>`);
  });
  let y0 = top + stepsH + 20;
  for (const p of probes) {
    const base = Date.parse(p.startedAt);
    const maxLat = Math.max(10, ...p.samples.map((s) => s.latencyMs));
    const ly = (l: number) => y0 + laneH - (Math.log10(1 + l) / Math.log10(1 + maxLat)) * (laneH - 8);
    parts.push(
      `<rect x="${left}" y="${y0}" width="${plotW}" height="${laneH}" fill="none" stroke="#d0d7de"/>`,
    );
    parts.push(`<text x="4" y="${y0 + 12}">${esc(p.summary.name)}</text>`);
    parts.push(`<text x="4" y="${y0 + 26}" class="muted">${p.summary.failures} fail</text>`);
    parts.push(`<text x="4" y="${y0 + 40}">gap ${esc(ms(p.summary.longestGapMs))}</text>`);
    parts.push(`<text x="${left - 4}" y="${y0 + 10}" text-anchor="end">${esc(ms(maxLat))}</text>`);
    const dots = p.samples
      .filter((s: ProbeSample) => s.ok)
      .map((s) => `M${x(base + s.t).toFixed(1)} ${ly(s.latencyMs).toFixed(1)}h0.1`)
      .join('');
    if (dots) parts.push(`<path d="${dots}" stroke="#0969da" stroke-width="2" stroke-linecap="round"/>`);
    for (const s of p.samples.filter((q: ProbeSample) => !q.ok)) {
      const px = x(base + s.t).toFixed(1);
      parts.push(
        `<line x1="${px}" y1="${y0}" x2="${px}" y2="${y0 + laneH}" stroke="#cf222e" stroke-opacity="0.6"><title>${esc(s.error ?? 'failed')}</title></line>`,
      );
    }
    if (p.summary.longestGapMs > 0) {
      const gx = x(base + p.summary.longestGapAtMs);
      const gw = Math.max(1, x(base + p.summary.longestGapAtMs + p.summary.longestGapMs) - gx);
      parts.push(
        `<rect x="${gx.toFixed(1)}" y="${y0}" width="${gw.toFixed(1)}" height="4" fill="#bf8700"><title>longest gap ${esc(ms(p.summary.longestGapMs))}</title></rect>`,
      );
    }
    y0 += laneH + 20;
  }
  parts.push('</svg>');
  return parts.join('');
}

export function renderReportHtml(input: ReportInput): string {
  const spans = timeline(input);
  const out = outcomeOf(input);
  const t0 = spans[0]?.start ?? 0;
  const body: string[] = [
    `<h1>${esc(input.title)}</h1>`,
    `<p>Plan <code>${esc(input.planFile)}</code>: strategy ${esc(input.plan.strategy)}, Talos ${esc(input.plan.target.talosVersion)}, ${input.plan.controlPlanes.length} control planes. ${input.runs.length} run(s).</p>`,
    `<p>Outcome: <span class="${out.status === 'completed' ? 'pass' : 'fail'}">${esc(out.status)}</span></p>`,
    out.detail ? `<pre>${esc(out.detail)}</pre>` : '',
  ];
  if (input.notes?.length)
    body.push('<h2>Context</h2><ul>', ...input.notes.map((n) => `<li>${esc(n)}</li>`), '</ul>');
  if (input.checks?.length) {
    body.push('<h2>Checks</h2><table><tr><th>check</th><th>result</th><th>detail</th></tr>');
    for (const c of input.checks)
      body.push(
        `<tr><td>${esc(c.name)}</td><td class="${c.ok ? 'pass' : 'fail'}">${c.ok ? 'pass' : 'FAIL'}</td><td>${esc(c.detail)}</td></tr>`,
      );
    body.push('</table>');
  }
  body.push('<h2>Availability</h2>');
  if (input.probes.length > 0) {
    body.push(
      '<table><tr><th>probe</th><th>attempts</th><th>failures</th><th>longest failure window</th><th>longest gap</th><th>acknowledged writes lost</th></tr>',
    );
    for (const p of input.probes)
      body.push(
        `<tr>${probeRow(p.summary)
          .map((c) => `<td>${esc(c)}</td>`)
          .join('')}</tr>`,
      );
    body.push('</table><ul>');
    for (const p of input.probes)
      body.push(
        `<li><b>${esc(p.summary.name)}</b>: ${esc(p.summary.description)}${p.summary.errors.map((e) => `<br><span class="muted">${e.count}× ${esc(e.message)}</span>`).join('')}</li>`,
      );
    body.push('</ul>');
  } else body.push('<p>No probes ran.</p>');
  const signals = signalReport(input);
  if (signals) body.push(...signalsHtml(signals, esc));
  const batches = batchReport(input);
  if (batches) body.push(...batchTableHtml(batches, esc));
  body.push('<h2>Timeline</h2>', timelineSvg(spans, input.probes));
  body.push('<table><tr><th>start</th><th>duration</th><th>step</th><th>outcome</th><th>attempts</th></tr>');
  for (const s of spans) {
    body.push(
      `<tr><td>+${esc(ms(s.start - t0))}</td><td>${esc(ms(s.end - s.start))}</td><td><code>${esc(s.id)}</code> ${esc(s.title)}${s.destructive ? ' <b>(destructive)</b>' : ''}</td><td class="${s.outcome === 'stopped' || s.outcome === 'failed' ? 'fail' : ''}">${esc(s.outcome)}</td><td>${s.attempts}</td></tr>`,
    );
  }
  body.push('</table>');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>${esc(input.title)}</title><style>${CSS}</style></head><body>${body.join('\n')}</body></html>\n`;
}
