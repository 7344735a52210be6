import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarizeAuditLog, summarizeAuditLogFile } from './audit-log.js';
import type { SourceRef } from './model.js';

const ev = (o: Record<string, unknown>) =>
  JSON.stringify({
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    stage: 'ResponseComplete',
    verb: 'get',
    ...o,
  });
const anon = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const src: SourceRef = { kind: 'file', path: 'audit.log' };

const lines = [
  ev({
    stage: 'RequestReceived',
    requestURI: '/healthz',
    user: anon,
    sourceIPs: ['10.0.0.5'],
    userAgent: 'lb',
  }),
  ev({ requestURI: '/healthz', user: anon, sourceIPs: ['10.0.0.5'], userAgent: 'lb' }),
  ev({ requestURI: '/healthz?timeout=2s', user: anon, sourceIPs: ['10.0.0.6', '10.0.0.5'], userAgent: 'lb' }),
  ev({
    requestURI: '/readyz',
    user: { username: 'x', groups: ['system:unauthenticated'] },
    sourceIPs: ['1.2.3.4'],
  }),
  ev({
    requestURI: '/api/v1/pods',
    user: { username: 'admin', groups: ['system:masters'] },
    sourceIPs: ['10.1.1.1'],
  }),
  'garbage',
  '{"kind":"Event"}',
  '',
];

describe('audit log summary', () => {
  it('counts anonymous requests once per request, grouped by path and user agent', () => {
    const { summary, unparseable } = summarizeAuditLog(lines.join('\n'), src);
    expect(unparseable).toBe(2);
    expect(summary).toEqual({
      source: src,
      events: 5,
      anonymous: [
        { path: '/healthz', userAgent: 'lb', sourceIPs: ['10.0.0.5', '10.0.0.6'], count: 2 },
        { path: '/readyz', sourceIPs: ['1.2.3.4'], count: 1 },
      ],
    });
  });

  it('streams a file and gives the same summary', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-audit-'));
    try {
      await writeFile(join(dir, 'audit.log'), lines.join('\r\n'));
      const r = await summarizeAuditLogFile(join(dir, 'audit.log'), src);
      expect(r).toEqual(summarizeAuditLog(lines.join('\n'), src));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
