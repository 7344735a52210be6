/**
 * Child process of the audit benchmark: runs what `ferry audit SNAPSHOT -o json` runs (load, derive
 * facts, every rule, render) and prints one JSON line with the phase times and the process's peak
 * RSS. A separate process so that peak RSS is the audit's alone, not the generator's.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { runAudit } from '../../src/audit/engine.js';
import { renderReport } from '../../src/audit/reporters/index.js';
import { ALL_RULES } from '../../src/audit/rules/index.js';
import { deriveFacts } from '../../src/facts/derive.js';
import { loadSnapshot } from '../../src/snapshot/load.js';

export interface AuditChildResult {
  loadMs: number;
  factsMs: number;
  rulesMs: number;
  renderMs: number;
  /** load + facts + rules: the audit's wall time before rendering. */
  auditMs: number;
  /** CPU time (user + system, all threads) of load + facts + rules: steadier than wall time on a busy machine. */
  auditCpuMs: number;
  /** process.resourceUsage().maxRSS, in bytes. */
  maxRssBytes: number;
  /** VmHWM from /proc/self/status, in bytes, where available. */
  vmHwmBytes?: number;
  findings: number;
  byRule: Record<string, number>;
  errors: { ruleId: string; message: string }[];
  skipped: string[];
  reportBytes: number;
  /** The human formats (grouped by rule): render time and size of each, after the json render. */
  human: { format: 'table' | 'md' | 'html'; ms: number; bytes: number }[];
}

function vmHwm(): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function main(dir: string): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const snapshot = await loadSnapshot(dir, { strictPki: false });
  const t1 = performance.now();
  const facts = deriveFacts(snapshot);
  const t2 = performance.now();
  const report = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date() });
  const t3 = performance.now();
  const c3 = process.cpuUsage(c0);
  const text = renderReport(report, 'json', { color: false });
  const t4 = performance.now();
  const human = (['table', 'md', 'html'] as const).map((format) => {
    const h0 = performance.now();
    const out = renderReport(report, format, { color: false });
    return { format, ms: performance.now() - h0, bytes: Buffer.byteLength(out) };
  });
  const byRule: Record<string, number> = {};
  for (const f of report.findings) byRule[f.ruleId] = (byRule[f.ruleId] ?? 0) + 1;
  const hwm = vmHwm();
  const result: AuditChildResult = {
    loadMs: t1 - t0,
    factsMs: t2 - t1,
    rulesMs: t3 - t2,
    renderMs: t4 - t3,
    auditMs: t3 - t0,
    auditCpuMs: (c3.user + c3.system) / 1000,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    ...(hwm !== undefined ? { vmHwmBytes: hwm } : {}),
    findings: report.findings.length,
    byRule,
    errors: report.errors,
    skipped: report.skipped.map((s) => s.ruleId),
    reportBytes: Buffer.byteLength(text),
    human,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main(process.argv[2] ?? '.').catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(4);
});
