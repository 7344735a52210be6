import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FerryError } from '../../errors.js';
import { childEnv } from './process.js';

/** The etcd minor versions the lab can run (test-infra.md: 3.4 from Debian 12, 3.5 from sid). */
export type EtcdMinor = '3.4' | '3.5';

export type EtcdBinaries = {
  minor: EtcdMinor;
  /** Full version reported by `etcd --version`, e.g. "3.5.30". */
  version: string;
  etcd: string;
  etcdctl: string;
};

const INSTALL_HINT = 'run `bash scripts/install-etcd.sh` (as root) from the repository root';

/**
 * The repository root: this file sits at src/lab/etcd/ (or dist/lab/etcd/ when built), three levels
 * below it either way.
 */
export function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
}

/**
 * Where each minor's binaries are expected, most specific first. FERRY_LAB_ETCD_<minor> (a directory
 * holding `etcd` and `etcdctl`) overrides; names never start with ETCD_, which etcd would read as flags.
 */
export function candidateDirs(
  minor: EtcdMinor,
  env: NodeJS.ProcessEnv = process.env,
  root: string = repoRoot(),
): string[] {
  const dirs: string[] = [];
  const override = env[`FERRY_LAB_ETCD_${minor.replace('.', '_')}`];
  if (override) dirs.push(override);
  const cache = env['FERRY_CACHE_DIR'] ?? join(root, '.ferry-cache');
  if (minor === '3.4') dirs.push('/usr/bin');
  dirs.push(join(cache, 'etcd', minor, 'usr', 'bin'));
  return dirs;
}

/** Extracts the server version from `etcd --version` output ("etcd Version: 3.4.23"). */
export function parseEtcdVersion(output: string): string | undefined {
  return /^etcd Version:\s*(\d+\.\d+\.\d+\S*)\s*$/m.exec(output)?.[1];
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function probeVersion(etcd: string): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)(etcd, ['--version'], { env: childEnv(), timeout: 10_000 });
    return parseEtcdVersion(stdout);
  } catch {
    return undefined;
  }
}

/** Where to look: the process environment and this repository unless a test says otherwise. */
export type LocateOptions = { env?: NodeJS.ProcessEnv; root?: string };

const found = new Map<EtcdMinor, Promise<EtcdBinaries | undefined>>();

/**
 * The binaries for `minor`, or undefined when none are installed (for tests that skip visibly).
 * Results for the default locations are cached for the life of the process.
 */
export function findEtcd(minor: EtcdMinor, opts: LocateOptions = {}): Promise<EtcdBinaries | undefined> {
  if (opts.env || opts.root) return search(minor, candidateDirs(minor, opts.env, opts.root));
  let p = found.get(minor);
  if (!p) {
    p = search(minor, candidateDirs(minor));
    found.set(minor, p);
  }
  return p;
}

async function search(minor: EtcdMinor, dirs: string[]): Promise<EtcdBinaries | undefined> {
  for (const dir of dirs) {
    const etcd = join(dir, 'etcd');
    const etcdctl = join(dir, 'etcdctl');
    if (!(await executable(etcd)) || !(await executable(etcdctl))) continue;
    const version = await probeVersion(etcd);
    // /usr/bin/etcd may be some other release on a non-Debian-12 machine: only the right minor counts.
    if (version?.startsWith(`${minor}.`)) return { minor, version, etcd, etcdctl };
  }
  return undefined;
}

/** Like findEtcd, but a missing binary is an error that says how to install it. */
export async function locateEtcd(minor: EtcdMinor, opts: LocateOptions = {}): Promise<EtcdBinaries> {
  const bins = await findEtcd(minor, opts);
  if (bins) return bins;
  const looked = candidateDirs(minor, opts.env, opts.root).join(', ');
  throw new FerryError('input', `etcd ${minor} binaries not found (looked in ${looked})`, {
    location: { object: `etcd ${minor}` },
    remediation: INSTALL_HINT,
  });
}

/** Why a test for `minor` would be skipped, or undefined when the binaries are there. */
export async function missingReason(minor: EtcdMinor): Promise<string | undefined> {
  return (await findEtcd(minor)) ? undefined : `etcd ${minor} is not installed; ${INSTALL_HINT}`;
}
