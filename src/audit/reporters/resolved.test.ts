import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deriveFacts } from '../../facts/derive.js';
import { sarifValidator } from '../../lab/testing-sarif.js';
import { type AuditReport, runAudit } from '../engine.js';
import type { Rule } from '../rule.js';
import { makeSnapshot, memoryKit } from '../testing.js';
import { REPORT_FORMATS, renderReport } from './index.js';

const PATCH = 'talos/controlplane-patch.yaml';
const rules: Rule[] = [
  {
    id: 'addons.example',
    family: 'addons',
    severity: 'blocker',
    title: 'Talos would start kube-proxy',
    inputs: ['api'],
    reads: [],
    check: () => [
      {
        message: 'the cluster runs no kube-proxy <b>',
        evidence: [{ kind: 'target', field: 'proxy' }],
        remediation: 'set cluster.proxy.disabled: true',
        kitChecks: [
          {
            kind: 'value',
            file: PATCH,
            path: ['cluster', 'proxy', 'disabled'],
            test: { op: 'equals', value: true },
          },
        ],
      },
    ],
  },
  {
    id: 'workload.example',
    family: 'workload',
    severity: 'blocker',
    title: 'PDB blocks a drain',
    inputs: ['api'],
    reads: [],
    check: () => [{ message: 'pdb', evidence: [{ kind: 'node', node: 'w-1' }], remediation: 'scale up' }],
  },
];

function report(withKit: boolean): AuditReport {
  const snapshot = makeSnapshot();
  const facts = deriveFacts(snapshot, { talosVersion: 'v1.13.9' });
  const kit = memoryKit({ [PATCH]: 'cluster:\n  proxy:\n    disabled: true\n' }, [], 'out/kit');
  return runAudit({
    snapshot,
    facts,
    target: facts.target,
    rules,
    ...(withKit ? { kit } : {}),
    now: new Date('2026-08-20T10:00:00Z'),
  });
}

const r = report(true);
const plain = report(false);
const resolved = r.resolved[0]!;
const open = r.findings[0]!;
const HOW = `${PATCH} sets cluster.proxy.disabled: true`;

describe('the fixture', () => {
  it('has one finding resolved by the kit and one open', () => {
    expect(r.resolved.map((f) => f.ruleId)).toEqual(['addons.example']);
    expect(r.findings.map((f) => f.ruleId)).toEqual(['workload.example']);
    expect(resolved.resolution).toEqual({ kit: 'out/kit', files: [PATCH], how: HOW });
  });
});

describe('a finding resolved by the kit, in every format', () => {
  it('json and yaml: in `resolved`, with its resolution as a field, not in `findings`', () => {
    for (const doc of [JSON.parse(renderReport(r, 'json')), parseYaml(renderReport(r, 'yaml'))]) {
      expect(doc.findings.map((f: { fingerprint: string }) => f.fingerprint)).toEqual([open.fingerprint]);
      expect(doc.resolved).toHaveLength(1);
      expect(doc.resolved[0]).toMatchObject({
        ruleId: 'addons.example',
        fingerprint: resolved.fingerprint,
        resolution: { kit: 'out/kit', files: [PATCH], how: HOW },
      });
      expect(doc.counts).toMatchObject({ blocker: 1, resolved: 1, total: 1 });
      expect(doc.kit).toMatchObject({ path: 'out/kit' });
    }
    expect(JSON.parse(renderReport(plain, 'json')).resolved).toEqual([]);
  });

  it('sarif: a result with an external suppression whose justification names the kit file (schema-valid)', () => {
    const log = JSON.parse(renderReport(r, 'sarif'));
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const results = log.runs[0].results as {
      partialFingerprints: Record<string, string>;
      suppressions?: Record<string, unknown>[];
    }[];
    const byFp = (fp: string) => results.find((x) => x.partialFingerprints['ferry/v1'] === fp)!;
    expect(byFp(open.fingerprint).suppressions).toBeUndefined();
    expect(byFp(resolved.fingerprint).suppressions).toEqual([
      {
        kind: 'external',
        status: 'accepted',
        justification: `resolved by the kit out/kit: ${HOW}`,
        location: { physicalLocation: { artifactLocation: { uri: `out/kit/${PATCH}` } } },
        properties: { kit: 'out/kit', files: [PATCH] },
      },
    ]);
    expect(log.runs[0].properties.counts.resolved).toBe(1);
  });

  it('junit: the testcase passes, its output says which kit file resolves it', () => {
    const xml = renderReport(r, 'junit');
    const testcase = (id: string) =>
      new RegExp(`<testcase classname="ferry\\.[a-z]+" name="${id}:[^"]*"(/>|>[\\s\\S]*?</testcase>)`).exec(
        xml,
      )?.[0] ?? '';
    const fixed = testcase('addons.example');
    expect(fixed).not.toContain('<failure');
    expect(fixed).toContain(
      `<system-out>resolved by the kit out/kit ${resolved.fingerprint} Target target (${PATCH}): ${HOW}</system-out>`,
    );
    expect(testcase('workload.example')).toContain('<failure type="blocker"');
    expect(xml).toMatch(/<testsuite name="addons" tests="1" failures="0"/);
    expect(xml).toContain('<property name="ferry.resolved" value="1"/>');
    expect(renderReport(plain, 'junit')).toMatch(/name="addons.example:[^"]*">\s*<failure/);
    expect(renderReport(plain, 'junit')).not.toContain('ferry.resolved');
  });

  it('table, md and html: its own "Resolved by the kit" section, apart from the findings', () => {
    const table = renderReport(r, 'table');
    const section = table.slice(table.indexOf('Resolved by the kit out/kit (1)'));
    expect(table.indexOf('Resolved by the kit out/kit (1)')).toBeGreaterThan(
      table.indexOf('BLOCKER: 1 rule, 1 finding'),
    );
    // Grouped by rule like the findings: the rule once, then its object with the fingerprint.
    expect(section).toMatch(/\n {2}addons\.example {2}BLOCKER [^\n]*\(1 finding\)\n/);
    expect(section).toContain(`    Target target  [${resolved.fingerprint.slice(0, 12)}]`);
    expect(section).toContain(`resolved: ${HOW}`);
    expect(table.slice(0, table.indexOf('Resolved by'))).not.toContain(resolved.fingerprint.slice(0, 12));
    expect(table).toContain('1 resolved by the kit');

    const md = renderReport(r, 'md');
    expect(md).toContain('## Resolved by the kit out/kit (1)');
    const mdSection = md.slice(md.indexOf('## Resolved by the kit'));
    expect(mdSection).toContain('### `addons.example`');
    expect(mdSection).toContain(`| Target target | \`${resolved.fingerprint}\` | \`${PATCH}\` | ${HOW} |`);
    expect(md.slice(0, md.indexOf('## Resolved'))).not.toContain(resolved.fingerprint);

    const html = renderReport(r, 'html');
    expect(html).toContain('<section class="group" id="resolved"><h2>Resolved by the kit out/kit (1)</h2>');
    const htmlSection = html.slice(html.indexOf('id="resolved"'));
    expect(htmlSection).toContain('<details class="rule blocker" id="resolved:addons.example"');
    expect(htmlSection).toMatch(
      new RegExp(
        `<tr class="resolved" [^>]*><td>Target target</td><td class="fp" data-fingerprint="${resolved.fingerprint}"`,
      ),
    );
    expect(
      [...html.matchAll(/<div class="f [a-z]+" data-fingerprint="([0-9a-f]+)"/g)].map((m) => m[1]),
    ).toEqual([open.fingerprint]);
  });

  it('without a kit no format has the section or the count', () => {
    for (const format of REPORT_FORMATS)
      expect(renderReport(plain, format)).not.toMatch(/resolved by the kit/i);
  });
});
