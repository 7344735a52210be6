/**
 * Running the built CLI as a benchmark child: build it as it ships (tsc into dist/), and run a
 * command under /usr/bin/time for its wall time (this process's clock) and peak RSS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TIME = '/usr/bin/time';

export interface Sample {
  wallMs: number;
  rssKiB: number;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Builds the CLI as it ships (tsc, dist/) into `dir`, which then resolves packages through a symlink. */
export async function buildFerry(dir: string): Promise<void> {
  const res = spawnSync(
    process.execPath,
    [
      join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      join(dir, 'dist'),
    ],
    { cwd: REPO, stdio: 'inherit' },
  );
  if (res.status !== 0) throw new Error(`tsc exited with ${res.status ?? res.signal}`);
  await writeFile(join(dir, 'package.json'), await readFile(join(REPO, 'package.json')));
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  await symlink(join(REPO, 'schemas'), join(dir, 'schemas'));
}

/** Runs `argv` under /usr/bin/time (peak RSS) with stdout to `stdoutFile`; the wall time is this process's clock. */
export async function measure(
  argv: string[],
  stdoutFile: string,
  env: NodeJS.ProcessEnv,
  okCodes: readonly number[] = [0],
): Promise<Sample> {
  const timeFile = `${stdoutFile}.time`;
  const { open } = await import('node:fs/promises');
  const out = await open(stdoutFile, 'w');
  const t0 = performance.now();
  const code = await new Promise<number | null>((ok, fail) => {
    const child = spawn(TIME, ['-f', '%M', '-o', timeFile, ...argv], {
      env,
      stdio: ['ignore', out.fd, 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', fail);
    child.on('exit', (c) => {
      if (c === null || !okCodes.includes(c)) process.stderr.write(err);
      ok(c);
    });
  });
  const wallMs = performance.now() - t0;
  await out.close();
  if (code === null || !okCodes.includes(code)) throw new Error(`${argv.join(' ')} exited with ${code}`);
  const rssKiB = Number((await readFile(timeFile, 'utf8')).trim().split('\n').pop());
  if (!Number.isFinite(rssKiB) || rssKiB <= 0) throw new Error(`${TIME} reported no peak RSS for ${argv[0]}`);
  return { wallMs, rssKiB };
}
