/**
 * The fleet report's HTML page in Debian's headless chromium, opened from a file:// URL: its
 * script runs, the filter (from `?filter=`) narrows the matrix and the cluster sections by rule id
 * or cluster name, and a cluster that was not audited shows "?" in the matrix, never an empty cell.
 */

import { rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { deriveFacts } from '../facts/derive.js';
import { browserWork, dumpDom, screenshot } from '../lab/testing-browser.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { renderFleetReport } from './render.js';
import { assembleFleetReport, type FleetReport } from './report.js';

let work: string;
let page: string;
let report: FleetReport;

beforeAll(async () => {
  work = await browserWork('ferry-fleet-browser-');
  const snapshot = await exampleSnapshot();
  const facts = deriveFacts(snapshot);
  const audit = runAudit({ snapshot, facts, target: facts.target, rules: ALL_RULES, now: new Date(0) });
  const audited = (name: string, wave: string) => ({
    cluster: {
      name,
      labels: { wave },
      source: { kind: 'snapshot' as const, dir: `/f/${name}`, shown: name },
    },
    outcome: { kind: 'audited' as const, report: audit, reportFile: `out/clusters/${name}/report.json` },
  });
  report = assembleFleetReport({
    fleet: 'fleet.yaml',
    failOn: 'blocker',
    now: new Date(0),
    sortBy: 'wave',
    results: [
      audited('staging-eu-1', '1'),
      audited('prod-eu-1', '2'),
      {
        cluster: { name: 'lost', labels: {}, source: { kind: 'snapshot', dir: '/nope', shown: 'nope' } },
        outcome: { kind: 'unreadable', reason: 'the snapshot nope does not exist' },
      },
    ],
  });
  page = join(work, 'fleet.html');
  await writeFile(page, renderFleetReport(report, 'html'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const attr = (dom: string, name: string) =>
  Number(new RegExp(`<body[^>]*\\b${name}="(\\d+)"`).exec(dom)?.[1] ?? 'NaN');
const visible = (dom: string, re: RegExp) =>
  [...dom.matchAll(re)].map((m) => m[0]).filter((t) => !/\shidden(=""|\s|>)/.test(t)).length;

describe('the fleet HTML report in headless chromium', () => {
  it('runs its script and shows every rule and cluster', async () => {
    const dom = await dumpDom(work, page);
    expect(dom).toMatch(/<body[^>]*data-script="ran"/);
    expect(attr(dom, 'data-shown-rules')).toBe(report.rules.length);
    expect(attr(dom, 'data-shown-clusters')).toBe(3);
    // The unread cluster: a "?" in each rule's row.
    expect([...dom.matchAll(/<td class="c unknown"[^>]*>\?<\/td>/g)]).toHaveLength(report.rules.length);
  });

  it('narrows to one cluster by its name, and to one rule by its id', async () => {
    const one = await dumpDom(work, page, 'prod-eu');
    expect(attr(one, 'data-shown-clusters')).toBe(1);
    expect(visible(one, /<section class="cluster"[^>]*>/g)).toBe(1);
    expect(attr(one, 'data-shown-rules')).toBe(report.rules.length);
    const rule = report.rules[0]!.ruleId;
    const byRule = await dumpDom(work, page, rule);
    expect(attr(byRule, 'data-shown-rules')).toBe(report.rules.filter((g) => g.ruleId.includes(rule)).length);
    // Both audited clusters have it; the unread one has nothing to show.
    expect(attr(byRule, 'data-shown-clusters')).toBe(2);
  });

  it('renders as a person sees it (a screenshot with content)', async () => {
    const png = await screenshot(work, page, { width: 1300, height: 1400 });
    // A blank page compresses to a few kilobytes; the matrix does not.
    expect((await stat(png)).size).toBeGreaterThan(50_000);
  });
});
