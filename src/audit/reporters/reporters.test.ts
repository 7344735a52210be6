import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deriveFacts } from '../../facts/derive.js';
import { sarifValidator } from '../../lab/testing-sarif.js';
import { ruleDocsRef } from '../docs-link.js';
import { type AuditReport, runAudit } from '../engine.js';
import type { Rule } from '../rule.js';
import { parseSuppressions } from '../suppressions.js';
import { makeSnapshot, obj } from '../testing.js';
import { REPORT_FORMATS, renderReport } from './index.js';

const HOSTILE = '<script>alert("x")</script> & `rm -rf` | *bold* ]]> --';

/** One fixture report exercising every section: findings of each severity, file/line, object,
 * flag, node and etcd evidence, a suppressed finding, an expired suppression, a skipped rule,
 * a not-applicable rule and hostile text that every format must escape. */
function fixtureReport(): AuditReport {
  const rules: Rule[] = [
    {
      id: 'apiserver.example',
      family: 'apiserver',
      severity: 'blocker',
      title: 'Apiserver example',
      inputs: ['flags'],
      reads: [],
      requires: [],
      description: 'Why it breaks.',
      docs: 'docs/rules.md#apiserver.example',
      check: () => [
        {
          message: `Issuer differs ${HOSTILE}`,
          evidence: [
            {
              kind: 'flag',
              component: 'kube-apiserver',
              node: 'cp-1',
              flag: 'service-account-issuer',
              from: { kind: 'file', path: 'manifests/cp-1/kube-apiserver.yaml', line: 17 },
              observed: 'https://kubernetes.default.svc.cluster.local',
              expected: 'https://k8s-api.lab.example:6443',
            },
            { kind: 'file', path: 'pki/apiserver.crt', line: 1, field: 'subjectAltName' },
          ],
          remediation: `Prepend the Talos issuer ${HOSTILE}`,
          artifacts: ['kubeadm-prep/apiserver-issuer.patch.yaml'],
        },
      ],
    },
    {
      id: 'workload.example',
      family: 'workload',
      severity: 'risk',
      title: 'Workload example',
      inputs: ['api'],
      reads: [],
      check: () => [
        {
          message: 'Deployment shop/web has one replica',
          evidence: [
            {
              kind: 'object',
              object: {
                apiVersion: 'apps/v1',
                kind: 'Deployment',
                namespace: 'shop',
                name: 'web',
                uid: 'u-web',
              },
              field: 'spec.replicas',
              observed: '1',
            },
          ],
          remediation: 'add a PDB',
          subject: {
            kind: 'Deployment',
            group: 'apps',
            namespace: 'shop',
            name: 'web',
            uid: 'u-web',
            labels: { team: 'shop' },
          },
        },
        {
          message: 'Deployment batch/report has one replica',
          evidence: [
            {
              kind: 'object',
              object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'batch', name: 'report' },
              field: 'spec.replicas',
            },
          ],
          remediation: 'add a PDB',
        },
      ],
    },
    {
      id: 'etcd.example',
      family: 'etcd',
      severity: 'info',
      title: 'etcd example',
      inputs: ['api'],
      reads: [],
      check: () => [
        {
          message: 'db size 12 MiB',
          evidence: [
            {
              kind: 'etcd-member',
              name: 'cp-1',
              memberId: '9372538179322589801',
              field: 'dbSize',
              observed: '12582912',
            },
          ],
          remediation: 'none needed',
        },
        {
          message: 'node note',
          evidence: [
            { kind: 'node', node: 'worker-1' },
            { kind: 'tls', address: '10.20.0.10:6443' },
            { kind: 'target', field: 'talosVersion' },
          ],
          remediation: 'none',
        },
      ],
    },
    {
      id: 'etcd.skipped',
      family: 'etcd',
      severity: 'blocker',
      title: 'Needs etcd',
      inputs: ['etcd'],
      reads: [],
      check: () => [],
    },
    {
      id: 'capi.example',
      family: 'capi',
      severity: 'risk',
      title: 'CAPI only',
      inputs: ['mgmt'],
      reads: [],
      notApplicable: () => 'Cluster API mode only',
      check: () => [],
    },
  ];
  const suppressions = parseSuppressions(
    `- rule: workload.example
  scope: {namespace: batch}
  reason: batch jobs may go down ${HOSTILE}
- rule: etcd.example
  reason: expired one
  expires: 2026-01-01
`,
    '.ferry/suppressions.yaml',
    rules.map((r) => r.id),
  );
  const snapshot = makeSnapshot({ resources: { nodes: [obj('Node', 'cp-1'), obj('Node', 'worker-1')] } });
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  return runAudit({
    snapshot,
    facts,
    target: facts.target,
    rules,
    suppressions,
    now: new Date('2026-08-20T10:00:00Z'),
  });
}

const report = fixtureReport();
const reported = report.findings.map((f) => f.fingerprint).sort();
const suppressed = report.suppressed.map((s) => s.finding.fingerprint);

describe('fixture report', () => {
  it('has the shape the format tests rely on', () => {
    expect(report.counts).toMatchObject({
      blocker: 1,
      risk: 1,
      info: 2,
      suppressed: 1,
      skipped: 1,
      notApplicable: 1,
      expiredSuppressions: 1,
    });
    expect(suppressed).toHaveLength(1);
  });
});

describe('every format carries the same findings and suppressed counts', () => {
  it('json', () => {
    const doc = JSON.parse(renderReport(report, 'json'));
    expect(doc.kind).toBe('ferry-audit-report');
    expect(doc.findings.map((f: { fingerprint: string }) => f.fingerprint).sort()).toEqual(reported);
    expect(doc.suppressed.map((s: { finding: { fingerprint: string } }) => s.finding.fingerprint)).toEqual(
      suppressed,
    );
    expect(doc.counts.suppressed).toBe(1);
    expect(doc.findings[0].message).toContain(HOSTILE); // JSON is data: text stays verbatim
  });

  it('yaml', () => {
    const doc = parseYaml(renderReport(report, 'yaml'));
    expect(doc.findings.map((f: { fingerprint: string }) => f.fingerprint).sort()).toEqual(reported);
    expect(doc.suppressed.map((s: { finding: { fingerprint: string } }) => s.finding.fingerprint)).toEqual(
      suppressed,
    );
    expect(doc.counts.suppressed).toBe(1);
    expect(doc).toEqual(JSON.parse(renderReport(report, 'json')));
  });

  it('sarif (valid against the SARIF 2.1.0 schema)', () => {
    const log = JSON.parse(renderReport(report, 'sarif'));
    const validate = sarifValidator();
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    // The validator does bite: a level SARIF does not know is rejected.
    const broken = structuredClone(log);
    broken.runs[0].results[0].level = 'fatal';
    expect(validate(broken)).toBe(false);

    const run = log.runs[0];
    const active = run.results.filter((r: { suppressions?: unknown[] }) => !r.suppressions);
    const sup = run.results.filter((r: { suppressions?: unknown[] }) => r.suppressions);
    expect(
      active
        .map((r: { partialFingerprints: Record<string, string> }) => r.partialFingerprints['ferry/v1'])
        .sort(),
    ).toEqual(reported);
    expect(
      sup.map((r: { partialFingerprints: Record<string, string> }) => r.partialFingerprints['ferry/v1']),
    ).toEqual(suppressed);
    expect(sup[0].suppressions[0]).toMatchObject({ kind: 'external', status: 'accepted' });
    expect(run.properties.counts.suppressed).toBe(1);
    // A grouping key per rule and object (without the field), stable across runs.
    for (const res of run.results)
      expect(res.partialFingerprints['ferry/rule-object/v1']).toMatch(/^[0-9a-f]{32}$/);
    const byMessage = (name: string) =>
      run.results.find((x: { message: { text: string } }) => x.message.text.includes(name));
    expect(byMessage('shop/web').partialFingerprints['ferry/rule-object/v1']).not.toBe(
      byMessage('batch/report').partialFingerprints['ferry/rule-object/v1'],
    );
    expect(
      JSON.parse(renderReport(report, 'sarif')).runs[0].results.map(
        (x: { partialFingerprints: unknown }) => x.partialFingerprints,
      ),
    ).toEqual(run.results.map((x: { partialFingerprints: unknown }) => x.partialFingerprints));
    // helpUri: the rule's section of docs/rules.md, the anchor `ferry explain` cites.
    const helped = run.tool.driver.rules.find((x: { id: string }) => x.id === 'apiserver.example');
    expect(helped.helpUri).toMatch(/^file:\/\/\/.*\/docs\/rules\.md#apiserver\.example$/);
    expect(helped.helpUri.endsWith(`#${ruleDocsRef('apiserver.example').split('#')[1]}`)).toBe(true);
    // Rule metadata and indexes.
    const ids = run.tool.driver.rules.map((r: { id: string }) => r.id);
    for (const r of run.results) expect(ids[r.ruleIndex]).toBe(r.ruleId);
    const blocker = run.tool.driver.rules.find((r: { id: string }) => r.id === 'apiserver.example');
    expect(blocker).toMatchObject({
      shortDescription: { text: 'Apiserver example' },
      fullDescription: { text: 'Why it breaks.' },
      defaultConfiguration: { level: 'error' },
    });
    // File evidence becomes a physical location with its line; objects become logical locations.
    const issuer = run.results.find((r: { ruleId: string }) => r.ruleId === 'apiserver.example');
    expect(issuer.level).toBe('error');
    expect(issuer.locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'manifests/cp-1/kube-apiserver.yaml' },
      region: { startLine: 17 },
    });
    const web = run.results.find((r: { message: { text: string } }) => r.message.text.includes('shop/web'));
    expect(web.locations[0].logicalLocations[0]).toMatchObject({
      fullyQualifiedName: 'Deployment shop/web#spec.replicas',
      kind: 'resource',
    });
    // Skipped rules are said, not dropped.
    expect(
      run.invocations[0].toolConfigurationNotifications.some(
        (n: { descriptor?: { id: string } }) => n.descriptor?.id === 'etcd.skipped',
      ),
    ).toBe(true);
  });

  it('junit', () => {
    const xml = renderReport(report, 'junit');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    for (const fp of [...reported, ...suppressed]) expect(xml).toContain(fp);
    const suites = [
      ...xml.matchAll(
        /<testsuite name="([^"]+)" tests="(\d+)" failures="(\d+)" errors="(\d+)" skipped="(\d+)"/g,
      ),
    ];
    expect(suites.map((m) => m[1])).toEqual(['apiserver', 'workload', 'etcd', 'capi']);
    const suppressedSum = [...xml.matchAll(/name="ferry.suppressed" value="(\d+)"/g)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    expect(suppressedSum).toBe(1);
    // blocker and risk → one <failure> each; info findings do not fail the build.
    expect((xml.match(/<failure /g) ?? []).length).toBe(report.counts.blocker + report.counts.risk);
    expect(xml).toMatch(/<skipped message="missing etcd: [^"]+"\/>/);
    expect(xml).toMatch(/<skipped message="not applicable: Cluster API mode only"\/>/);
    expect(xml).not.toContain('<script>');
    expect(xml).toContain('&lt;script&gt;');
    // The summary comment must not contain "--" (invalid inside an XML comment).
    const comment = xml.split('\n')[1]!;
    expect(comment.slice(4, -3)).not.toContain('--');
    // Balanced elements.
    expect((xml.match(/<testcase /g) ?? []).length).toBe(report.rules.length);
    expect((xml.match(/<testsuite /g) ?? []).length).toBe((xml.match(/<\/testsuite>/g) ?? []).length);
  });

  it('md', () => {
    const md = renderReport(report, 'md');
    for (const fp of [...reported, ...suppressed]) expect(md).toContain(fp);
    expect(md).toMatch(/\| 1 \| 1 \| 2 \| 1 \| 0 \| 1 \| 1 \| \d+ \|/); // counts row: suppressed = 1
    expect(md).toContain('## Suppressed (1)');
    expect(md).not.toContain('<script>');
    expect(md).toContain('\\*bold\\*');
  });

  it('html (self-contained, escaped)', () => {
    const html = renderReport(report, 'html');
    const fps = [...html.matchAll(/<div class="f [a-z]+" data-fingerprint="([0-9a-f]+)"/g)]
      .map((m) => m[1])
      .sort();
    expect(fps).toEqual(reported);
    expect(
      [...html.matchAll(/<tr class="suppressed" [^>]*>.*?data-fingerprint="([0-9a-f]+)"/g)].map((m) => m[1]),
    ).toEqual(suppressed);
    expect(html).toMatch(/<div class="card suppressed" data-count="suppressed"><b>1<\/b>/);
    // One inline script, admitted by its hash and nothing else; nothing is fetched.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256').update(scripts[0]!).digest('base64');
    expect(html).toContain(
      `Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'"`,
    );
    expect(html).not.toMatch(/<link|<img|<iframe|\ssrc=|url\(|@import|innerHTML/i);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    // A section per rule, anchored by its id, listed in the table of contents.
    for (const id of ['apiserver.example', 'workload.example', 'etcd.example']) {
      expect(html).toContain(`<details class="rule `);
      expect(html).toMatch(
        new RegExp(`<details class="rule [a-z]+" id="${id.replace('.', '\\.')}" data-rule="`),
      );
      expect(html).toContain(`<li data-rule="${id}"><a href="#${id}">`);
    }
    // The rule's documentation, as an absolute URI (the file beside this ferry), anchored by the id.
    expect(html).toMatch(
      /href="file:\/\/\/[^"]*\/docs\/rules\.md#apiserver\.example">docs\/rules\.md#apiserver\.example</,
    );
    // A bar per family with findings.
    expect([...html.matchAll(/<div class="bar" data-family="([a-z]+)">/g)].map((m) => m[1]).sort()).toEqual([
      'apiserver',
      'etcd',
      'workload',
    ]);
  });

  it('table (grouped by rule, blockers first; colour only when asked)', () => {
    const plain = renderReport(report, 'table', { color: false });
    for (const fp of [...reported, ...suppressed]) expect(plain).toContain(fp.slice(0, 12));
    const order = [
      'BLOCKER: 1 rule, 1 finding',
      'RISK: 1 rule, 1 finding',
      'INFO: 1 rule, 2 findings',
      'Suppressed (1)',
      'Expired suppressions (1)',
      'Skipped rules (1)',
    ].map((h) => plain.indexOf(h));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // The rule once, then its findings.
    expect(plain.match(/^ {2}etcd\.example /gm)).toHaveLength(1);
    expect(plain).not.toContain('\x1b[');
    expect(plain).toContain('1 suppressed');
    expect(renderReport(report, 'table', { color: true })).toContain('\x1b[31m');
  });

  it('covers every format', () => {
    expect([...REPORT_FORMATS].sort()).toEqual(['html', 'json', 'junit', 'md', 'sarif', 'table', 'yaml']);
  });
});

describe('an untabled Talos patch as the target', () => {
  const snapshot = makeSnapshot({ resources: { nodes: [obj('Node', 'cp-1')] } });
  const assumedReport = (talosVersion: string) => {
    const facts = deriveFacts(snapshot, { talosVersion });
    const rule: Rule = {
      id: 'nodes.example',
      family: 'nodes',
      severity: 'info',
      title: 'Example',
      inputs: ['api'],
      reads: [],
      check: () => [{ message: 'm', evidence: [], remediation: 'r' }],
    };
    return runAudit({
      snapshot,
      facts,
      target: facts.target,
      rules: [rule],
      now: new Date('2026-08-20T10:00:00Z'),
    });
  };
  const NOTE = 'Talos v1.10.6 is not tabled; assumed the facts of v1.10.0 (etcd 3.5.21';

  it('every format says which tabled facts the rules assumed', () => {
    const r = assumedReport('v1.10.6');
    expect(r.target.assumed).toContain(NOTE);
    expect(r.findings[0]!.target.assumed).toContain(NOTE);
    for (const format of REPORT_FORMATS) expect(renderReport(r, format), format).toContain(NOTE);
  });

  it('a tabled patch carries no assumption', () => {
    const r = assumedReport('v1.10.9');
    expect(r.target).not.toHaveProperty('assumed');
    expect(renderReport(r, 'table')).not.toContain('not tabled');
  });
});

describe('a rule with many findings', () => {
  // 45 Deployments without a PDB over three namespaces: more than the 20 a reader is shown.
  const snapshot = makeSnapshot({ resources: { nodes: [obj('Node', 'cp-1')] } });
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  const many: Rule = {
    id: 'workload.many',
    family: 'workload',
    severity: 'risk',
    title: 'Many',
    inputs: ['api'],
    reads: [],
    check: () =>
      Array.from({ length: 45 }, (_, i) => ({
        message: `Deployment team-${i % 3}/svc-${i} has no PDB`,
        evidence: [
          {
            kind: 'object' as const,
            object: {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              namespace: `team-${i % 3}`,
              name: `svc-${i}`,
            },
          },
        ],
        remediation: 'add a PDB',
      })),
  };
  const big = runAudit({
    snapshot,
    facts,
    target: facts.target,
    rules: [many],
    now: new Date('2026-08-20T10:00:00Z'),
  });
  const names = (text: string) => new Set([...text.matchAll(/svc-\d+/g)].map((m) => m[0]));

  it('table and md: one entry, the fix once, the first 20 objects by namespace, the rest counted', () => {
    for (const format of ['table', 'md'] as const) {
      const text = renderReport(big, format);
      expect(names(text).size, format).toBe(20);
      expect(text.match(/add a PDB/g), format).toHaveLength(1);
      expect(text, format).toContain('… and 25 more (1 more namespace)');
      expect(text, format).toContain('--expand workload.many');
      expect(text, format).toMatch(/team-0\**\s\(15\):/);
    }
  });

  it('--expand RULE lists every object in table, md and html', () => {
    for (const format of ['table', 'md', 'html'] as const) {
      const text = renderReport(big, format, { color: false, expand: ['workload.many'] });
      expect(names(text).size, format).toBe(45);
      expect(text, format).not.toContain('… and 25 more');
      // Every finding on its own, with its fingerprint.
      for (const f of big.findings) expect(text, format).toContain(f.fingerprint.slice(0, 12));
    }
  });

  it('html: every object is in the page for the filter, the first 20 shown, the rest folded', () => {
    const html = renderReport(big, 'html');
    const objs = [...html.matchAll(/<li data-obj data-ns="(team-\d)" data-name="(svc-\d+)"/g)];
    expect(objs).toHaveLength(45);
    const folded = html.slice(html.indexOf('<details class="more">'));
    expect(html).toContain('<details class="more"><summary>… and 25 more (1 more namespace)</summary>');
    expect([...folded.matchAll(/<li data-obj /g)]).toHaveLength(25);
  });

  it('json and sarif stay complete, one entry per finding', () => {
    expect(JSON.parse(renderReport(big, 'json')).findings).toHaveLength(45);
    expect(JSON.parse(renderReport(big, 'sarif')).runs[0].results).toHaveLength(45);
  });
});
