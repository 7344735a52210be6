/** Small pieces every renderer shares, so the formats word things the same way. */

import { describeNotObserved, type NotObserved } from '../../snapshot/model.js';
import { escapeHtml } from '../../util/escape-html.js';
import type { AuditReport, SkippedRule } from '../engine.js';
import type { Severity, TargetSummary } from '../findings.js';

export interface RenderOptions {
  /** ANSI colour (table only); the CLI sets it only when stdout is a TTY. */
  color: boolean;
  /** Rule ids whose every object the human formats list (`ferry audit --expand RULE`). */
  expand?: readonly string[];
}

export const SEVERITY_LABEL: Record<Severity, string> = { blocker: 'BLOCKER', risk: 'RISK', info: 'INFO' };

export function plural(n: number, word: string, many = `${word}s`): string {
  // 15,781: thousands grouped, the same in every format.
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`;
}

export function describeTarget(t: TargetSummary): string {
  const parts = [`Talos ${t.talosVersion}`];
  if (t.kubernetesVersion) parts.push(`Kubernetes ${t.kubernetesVersion}`);
  parts.push(`KubePrism ${t.kubeprism ? 'on' : 'off'}`, `provisioner ${t.provisioner}`);
  return parts.join(', ') + (t.assumed ? ` (${t.assumed})` : '');
}

/** "2 blockers, 1 risk, 0 info; 1 suppressed; 3 skipped; 10 passed" — identical in every format. */
export function summaryLine(r: AuditReport): string {
  const c = r.counts;
  const parts = [
    `${plural(c.blocker, 'blocker')}, ${plural(c.risk, 'risk')}, ${c.info} info`,
    `${c.suppressed} suppressed`,
  ];
  if (r.kit) parts.push(`${c.resolved} resolved by the kit`);
  if (r.baseline) parts.push(`${c.baselined} in baseline`);
  if (c.expiredSuppressions) parts.push(plural(c.expiredSuppressions, 'expired suppression'));
  parts.push(
    `${plural(c.skipped, 'rule')} skipped`,
    `${c.notApplicable} not applicable`,
    `${c.passed} passed`,
  );
  if (c.errors) parts.push(plural(c.errors, 'rule error'));
  return parts.join('; ');
}

/** The heading of the section of findings the kit resolves, naming the kit: the same in every format. */
export function resolvedHeading(r: AuditReport): string {
  return `Resolved by the kit${r.kit ? ` ${r.kit.path}` : ''} (${r.resolved.length})`;
}

export function escapeXml(s: string): string {
  // XML 1.0 forbids most control characters even when escaped.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return escapeHtml(s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, ''));
}

/** Escapes Markdown inline syntax and HTML so finding text renders literally. */
export function escapeMd(s: string): string {
  // Inline syntax only: every call site puts text after a prefix, never at a line start.
  return s
    .replace(/[\\`*_[\]|~]/g, '\\$&')
    .replace(/</g, '&lt;')
    .replace(/\r?\n/g, ' ');
}

/** Why a rule was skipped, in one phrase: the same in every format. */
export function skipReason(s: SkippedRule): string {
  switch (s.because) {
    case 'input-missing':
      return `missing ${s.missing.join(', ')}`;
    case 'not-observed':
      return `not observed: ${s.missing.join(', ')} (${[...new Set(s.notObserved.map(notObservedWhy))].join('; ')})`;
  }
}

function notObservedWhy(n: NotObserved): string {
  return `${describeNotObserved(n)} ${n.reason === 'forbidden' ? 'forbidden (HTTP 403)' : 'not served (HTTP 404)'}`;
}

/**
 * What the snapshot did not read, one line each, said before any finding: every result below
 * stands on what was read, and the rules that needed the rest are skipped.
 */
export function unobservedLines(r: AuditReport): string[] {
  const out = r.snapshot.unobserved.map((n) => `${n.input}: ${notObservedWhy(n)}: ${n.message}`);
  if (out.length && r.snapshot.partial) out.unshift('the snapshot is partial (taken with --allow-partial)');
  return out;
}

export function unobservedHeading(r: AuditReport): string {
  return `Not observed (${r.snapshot.unobserved.length}) - the server refused or does not serve these; rules that need them are skipped`;
}
