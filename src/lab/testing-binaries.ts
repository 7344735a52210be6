/**
 * Test support: what a real-server suite (`*.real.test.ts`) does when a binary it needs is missing.
 * Locally it skips, loudly. Where real servers are required (CI set, or
 * FERRY_REQUIRE_REAL_SERVERS=1, which scripts/test.sh sets) the file fails instead, with the reason
 * (the binary and how to install it): a machine without etcd or kubectl must not go green.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** Whether `env` asks for every real-server suite to run. */
export function realServersRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const on = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
  return on(env['CI']) || on(env['FERRY_REQUIRE_REAL_SERVERS']);
}

/**
 * The argument for `describe.skipIf`: false when nothing is `missing`; true (after a warning) when
 * something is and skipping is allowed; otherwise it throws, which fails the file.
 */
export function skipFor(missing: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (missing === undefined) return false;
  if (realServersRequired(env))
    throw new Error(
      `${missing} (real-server suites may not skip here: CI or FERRY_REQUIRE_REAL_SERVERS is set)`,
    );
  console.warn(`SKIPPED: a real-server suite: ${missing}`);
  return true;
}

/** Why a kubectl suite would be skipped, or undefined when kubectl runs. */
export async function kubectlMissing(): Promise<string | undefined> {
  return promisify(execFile)('kubectl', ['version', '--client']).then(
    () => undefined,
    () =>
      'kubectl is not on PATH; no script in scripts/ installs it: install it from ' +
      'https://kubernetes.io/docs/tasks/tools/#kubectl',
  );
}
