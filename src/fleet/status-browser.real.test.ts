/**
 * The fleet status page in Debian's headless chromium, as a person sees it: a screenshot read
 * back pixel by pixel. A stopped run puts the red "needs attention" box and a red badge on the
 * page, a completed one a green badge; with nothing to look at, the box is green and no red is
 * drawn at all. The page runs no script: its DOM is what ferry wrote.
 */

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserWork, dumpDom, screenshot } from '../lab/testing-browser.js';
import { countColour, readPng } from '../lab/testing-png.js';
import type { FleetStatus } from './status.js';
import { renderFleetStatus } from './status-render.js';

let work: string;

const observed = (talos: number) => ({
  kind: 'observed' as const,
  nodes: 8,
  kubernetes: [{ version: 'v1.32.4', nodes: 8 }],
  talos: talos > 0 ? [{ version: 'v1.9.5', nodes: talos }] : [],
  notTalos: 8 - talos,
});
const probes = (failures: number) => ({
  runId: 'r1',
  startedAt: '2026-12-04T10:00:00.000Z',
  unreadable: 0,
  probes: [
    { name: 'api', attempts: 1200, failures: 0, longestFailureWindowMs: 0, longestGapMs: 180 },
    {
      name: 'etcd-write',
      attempts: 600,
      failures,
      longestFailureWindowMs: failures * 400,
      longestGapMs: 950,
      lost: 0,
    },
  ],
});

const troubled: FleetStatus = {
  generatedAt: '2026-12-07T06:00:00.000Z',
  clusters: [
    {
      name: 'staging-eu-1',
      labels: { wave: '1', canary: 'true' },
      adoption: { kind: 'listed' },
      state: {
        kind: 'completed',
        planFile: 'p/staging-eu-1/plan.json',
        steps: 41,
        since: '2026-12-05T14:10:00Z',
      },
      versions: observed(8),
      lastProbes: probes(0),
    },
    {
      name: 'prod-eu-1',
      labels: { wave: '2' },
      adoption: { kind: 'capi', management: 'mgmt-eu', namespace: 'fleet', cluster: 'prod-eu-1' },
      state: {
        kind: 'stopped',
        planFile: 'p/prod-eu-1/plan.json',
        done: 17,
        steps: 41,
        at: '3.02 replace cp-2',
        message: 'gate: etcd has 2 voters, expected 3',
        remediation: 'ferry run --resume once etcd has its third member',
        since: '2026-12-06T09:12:00Z',
      },
      versions: observed(3),
      lastProbes: probes(4),
    },
    {
      name: 'prod-eu-2',
      labels: { wave: '2' },
      adoption: { kind: 'listed' },
      state: { kind: 'not-started', planFile: 'p/prod-eu-2/plan.json', steps: 44 },
      versions: observed(0),
    },
  ],
  management: [
    {
      name: 'mgmt-eu',
      backup: {
        kind: 'read',
        backup: {
          url: 's3://fleet/mgmt',
          versions: 9,
          newest: { versionId: 'v9', createdAt: '2026-12-05T01:00:00Z', ageSeconds: 190_000, verified: true },
        },
      },
    },
  ],
};

const calm: FleetStatus = {
  ...troubled,
  clusters: [troubled.clusters[0]!, troubled.clusters[2]!],
  management: [],
};

const RED = '#c62828';
const GREEN = '#2e7d32';
const PINK = '#fdf1f1';

async function page(name: string, s: FleetStatus, maxAgeSeconds?: number): Promise<string> {
  const file = join(work, `${name}.html`);
  await writeFile(file, renderFleetStatus(s, 'html', { fleetFile: 'fleet.yaml', maxAgeSeconds }));
  return file;
}

beforeAll(async () => {
  work = await browserWork('ferry-fleet-status-browser-');
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the fleet status page in headless chromium', () => {
  it('lists what needs attention first: the stopped run and the stale backup, each linked', async () => {
    const dom = await dumpDom(work, await page('troubled', troubled, 26 * 3600));
    const box = /<div class="attention-box" id="attention">(.*?)<\/div>/s.exec(dom)?.[1] ?? '';
    expect(box).toContain('Needs attention (2)');
    expect(box).toContain(
      '<a href="#c-prod-eu-1">prod-eu-1</a>: stopped 2026-12-06T09:12:00Z at 3.02 replace cp-2',
    );
    expect(box).toMatch(
      /management cluster mgmt-eu: backup s3:\/\/fleet\/mgmt: newest 2d old \(older than --max-age 26h\)/,
    );
    expect(box).not.toContain('staging-eu-1');
    expect(dom).toMatch(/<tr id="c-prod-eu-1" data-state="stopped" class="attention">/);
    expect(dom).not.toContain('<script');
  });

  it('shows red where a run stopped and green where one completed, as a person sees it', async () => {
    const shot = readPng(
      await readFile(
        await screenshot(work, await page('shot', troubled, 26 * 3600), { width: 1400, height: 900 }),
      ),
    );
    expect(shot.width).toBe(1400);
    // The box behind what needs attention, and the stopped badge and progress bar.
    expect(countColour(shot, PINK)).toBeGreaterThan(20_000);
    expect(countColour(shot, RED)).toBeGreaterThan(300);
    expect(countColour(shot, GREEN)).toBeGreaterThan(300);
  });

  it('with nothing to look at: a green line, and no red anywhere on the page', async () => {
    const file = await page('calm', calm, 26 * 3600);
    const dom = await dumpDom(work, file);
    expect(dom).toContain('Nothing needs attention.');
    const shot = readPng(await readFile(await screenshot(work, file, { width: 1400, height: 900 })));
    expect(countColour(shot, PINK)).toBe(0);
    expect(countColour(shot, RED, 10)).toBe(0);
    expect(countColour(shot, GREEN)).toBeGreaterThan(300);
  });
});
