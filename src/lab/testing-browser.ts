/**
 * Debian's headless chromium (scripts/install-chromium.sh) as the HTML reports' browser tests use
 * it: a page opened from a file:// URL, its DOM dumped after the inline script ran. No network:
 * DNS mapped to nothing and every proxied request sent to a closed loopback port.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { scaled } from '../util/testing-slowness.js';

const run = promisify(execFile);
export const CHROMIUM = '/usr/bin/chromium';

/** A browser test's work directory; a missing chromium fails the suite, never skips it. */
export async function browserWork(prefix: string): Promise<string> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/install-chromium.sh (scripts/test.sh does)`);
  return mkdtemp(join(tmpdir(), prefix));
}

/** Headless, its own profile, and no network: DNS maps to nothing, requests go to a closed port. */
const isolated = (profile: string) => [
  '--headless',
  '--no-sandbox', // root in CI containers
  '--disable-gpu',
  `--user-data-dir=${profile}`,
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--proxy-server=http://127.0.0.1:9',
];

/** The page's DOM after its script ran (`?filter=` set when given); a fresh profile under `work` per call. */
export async function dumpDom(work: string, page: string, filter?: string): Promise<string> {
  const profile = await mkdtemp(join(work, 'profile-'));
  const url = pathToFileURL(page);
  if (filter !== undefined) url.searchParams.set('filter', filter);
  try {
    const { stdout } = await run(
      CHROMIUM,
      [
        ...isolated(profile),
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-extensions',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--virtual-time-budget=${scaled(10_000)}`,
        '--dump-dom',
        url.href,
      ],
      { maxBuffer: 256 * 1024 * 1024, timeout: scaled(180_000) },
    );
    return stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

/** A PNG screenshot of the page as chromium lays it out in a window of that size; its path. */
export async function screenshot(work: string, page: string, size: { width: number; height: number }) {
  const profile = await mkdtemp(join(work, 'shot-profile-'));
  const png = join(work, `shot-${Date.now()}-${Math.random().toString(36).slice(2)}.png`);
  try {
    await run(
      CHROMIUM,
      [
        ...isolated(profile),
        '--hide-scrollbars',
        `--screenshot=${png}`,
        `--window-size=${size.width},${size.height}`,
        pathToFileURL(page).href,
      ],
      { timeout: scaled(180_000) },
    );
    return png;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}
