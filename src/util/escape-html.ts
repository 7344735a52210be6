/**
 * The one HTML escaper: every HTML ferry writes (audit report, plan runbook, run report) puts
 * cluster text through it, in element content and in quoted attribute values alike.
 */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
