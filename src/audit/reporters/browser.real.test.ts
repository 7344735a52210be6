import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticSnapshot } from '../../../bench/lib/write-snapshot.js';
import { deriveFacts } from '../../facts/derive.js';
import { browserWork, dumpDom } from '../../lab/testing-browser.js';
import { loadSnapshot } from '../../snapshot/load.js';
import { scaled } from '../../util/testing-slowness.js';
import { type AuditReport, runAudit } from '../engine.js';
import { ALL_RULES } from '../rules/index.js';
import { renderReport } from './index.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/lab-cluster', import.meta.url));
const MAX_PAGE_BYTES = 10 * 1024 * 1024;

let work: string;

beforeAll(async () => {
  work = await browserWork('ferry-browser-');
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

interface Seen {
  scriptRan: boolean;
  objects: number;
  visibleObjects: number;
  visibleRules: number;
  shownObjectsAttr: number;
}

function inspect(dom: string): Seen {
  const body = /<body([^>]*)>/.exec(dom)?.[1] ?? '';
  const objs = [...dom.matchAll(/<(?:li|div|tr) [^>]*\bdata-obj(?:="")?[^>]*>/g)].map((m) => m[0]);
  const rules = [...dom.matchAll(/<details class="rule [^>]*>/g)].map((m) => m[0]);
  return {
    scriptRan: /data-script="ran"/.test(body),
    objects: objs.length,
    visibleObjects: objs.filter((t) => !/\shidden(=""|\s|>)/.test(t)).length,
    visibleRules: rules.filter((t) => !/\shidden(=""|\s|>)/.test(t)).length,
    shownObjectsAttr: Number(/data-shown-objects="(\d+)"/.exec(body)?.[1] ?? 'NaN'),
  };
}

/** What the filter should leave: every object of a rule whose id matches, or that matches itself. */
function expected(r: AuditReport, q: string): { objects: number; rules: number } {
  const all = [...r.findings, ...r.resolved, ...r.suppressed.map((s) => s.finding)];
  const hit = all.filter(
    (f) => f.ruleId.includes(q) || (f.subject.namespace ?? '').includes(q) || f.subject.name.includes(q),
  );
  return { objects: hit.length, rules: new Set(hit.map((f) => f.ruleId)).size };
}

async function audit(dir: string): Promise<AuditReport> {
  const snapshot = await loadSnapshot(dir, { strictPki: false });
  const facts = deriveFacts(snapshot);
  return runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date() });
}

describe('the HTML report in headless chromium', () => {
  it('the example: loads, runs its script, and the filter narrows the list', async () => {
    const report = await audit(EXAMPLE);
    const page = join(work, 'example.html');
    await writeFile(page, renderReport(report, 'html'));

    const all = inspect(await dumpDom(work, page));
    expect(all.scriptRan).toBe(true);
    expect(all.objects).toBe(report.findings.length + report.suppressed.length + report.resolved.length);
    expect(all.visibleObjects).toBe(all.objects);
    expect(all.shownObjectsAttr).toBe(all.objects);

    // A namespace of one of the findings: fewer entries, exactly the ones that match.
    const ns = report.findings.find((f) => f.subject.namespace && f.subject.namespace !== 'kube-system')
      ?.subject.namespace;
    expect(ns).toBeDefined();
    const narrowed = inspect(await dumpDom(work, page, ns));
    const want = expected(report, ns!);
    expect(narrowed.visibleObjects).toBe(want.objects);
    expect(narrowed.visibleRules).toBe(want.rules);
    expect(narrowed.visibleObjects).toBeLessThan(all.objects);
    expect(narrowed.visibleObjects).toBeGreaterThan(0);

    // A rule id shows that rule whole, and nothing else.
    const rule = report.findings[0]!.ruleId;
    const byRule = inspect(await dumpDom(work, page, rule));
    expect(byRule.visibleRules).toBe(expected(report, rule).rules);
    expect(byRule.visibleObjects).toBe(expected(report, rule).objects);
  });

  it(
    '5,000 nodes / 150,000 pods: under 10 MB, loads, and the filter narrows 17,000 findings',
    async () => {
      const dir = join(work, 'synthetic');
      await writeSyntheticSnapshot(EXAMPLE, dir, {
        nodes: 5000,
        pods: 150_000,
        namespaces: 300,
        controlPlanes: ['cp-1', 'cp-2', 'cp-3'],
      });
      const report = await audit(dir);
      expect(report.findings.length).toBeGreaterThan(15_000);
      const page = join(work, 'synthetic.html');
      await writeFile(page, renderReport(report, 'html'));
      expect((await stat(page)).size).toBeLessThan(MAX_PAGE_BYTES);

      const all = inspect(await dumpDom(work, page));
      expect(all.scriptRan).toBe(true);
      expect(all.visibleObjects).toBe(report.findings.length);

      const q = 'team-001';
      const narrowed = inspect(await dumpDom(work, page, q));
      const want = expected(report, q);
      expect(narrowed.visibleObjects).toBe(want.objects);
      expect(narrowed.visibleRules).toBe(want.rules);
      expect(narrowed.visibleObjects).toBeLessThan(report.findings.length / 50);
    },
    scaled(900_000),
  );
});
