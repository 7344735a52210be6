/**
 * kube-apiserver audit log (JSON lines): who reached the API anonymously, and where. Health checks
 * by load balancers are the usual anonymous callers, and they break when Talos turns anonymous
 * auth off. Only the summary enters the snapshot; the log can be gigabytes, so it is streamed.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { AnonymousAccess, AuditLogSummary, SourceRef } from './model.js';
import { isRecord } from './validate.js';

/** Stages that repeat a request already counted at its ResponseComplete (or Panic) stage. */
const INTERMEDIATE_STAGES = new Set(['RequestReceived', 'ResponseStarted']);

export class AuditLogAccumulator {
  events = 0;
  unparseable = 0;
  private readonly byKey = new Map<
    string,
    { path: string; userAgent?: string; ips: Set<string>; count: number }
  >();

  addLine(line: string): void {
    const trimmed = line.trim();
    if (trimmed === '') return;
    let ev: unknown;
    try {
      ev = JSON.parse(trimmed);
    } catch {
      this.unparseable++;
      return;
    }
    if (!isRecord(ev) || typeof ev.requestURI !== 'string' || !isRecord(ev.user)) {
      this.unparseable++;
      return;
    }
    this.events++;
    if (typeof ev.stage === 'string' && INTERMEDIATE_STAGES.has(ev.stage)) return;
    if (!isAnonymous(ev.user)) return;
    // Group by path without the query: `/healthz?timeout=1s` and `/healthz` are one dependency.
    const q = ev.requestURI.indexOf('?');
    const path = q >= 0 ? ev.requestURI.slice(0, q) : ev.requestURI;
    const userAgent = typeof ev.userAgent === 'string' ? ev.userAgent : undefined;
    const key = `${path}\u0000${userAgent ?? ''}`;
    let entry = this.byKey.get(key);
    if (!entry) {
      entry = { path, ips: new Set(), count: 0 };
      if (userAgent !== undefined) entry.userAgent = userAgent;
      this.byKey.set(key, entry);
    }
    entry.count++;
    if (Array.isArray(ev.sourceIPs))
      for (const ip of ev.sourceIPs) if (typeof ip === 'string') entry.ips.add(ip);
  }

  summary(source: SourceRef): AuditLogSummary {
    const anonymous: AnonymousAccess[] = [...this.byKey.values()].map((e) => {
      const a: AnonymousAccess = { path: e.path, sourceIPs: [...e.ips].sort(), count: e.count };
      if (e.userAgent !== undefined) a.userAgent = e.userAgent;
      return a;
    });
    anonymous.sort((a, b) => b.count - a.count || a.path.localeCompare(b.path));
    return { source, events: this.events, anonymous };
  }
}

function isAnonymous(user: Record<string, unknown>): boolean {
  if (user.username === 'system:anonymous') return true;
  return Array.isArray(user.groups) && user.groups.includes('system:unauthenticated');
}

export function summarizeAuditLog(
  text: string,
  source: SourceRef,
): { summary: AuditLogSummary; unparseable: number } {
  const acc = new AuditLogAccumulator();
  for (const line of text.split('\n')) acc.addLine(line);
  return { summary: acc.summary(source), unparseable: acc.unparseable };
}

export async function summarizeAuditLogFile(
  path: string,
  source: SourceRef,
): Promise<{ summary: AuditLogSummary; unparseable: number }> {
  const acc = new AuditLogAccumulator();
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) acc.addLine(line);
  return { summary: acc.summary(source), unparseable: acc.unparseable };
}
