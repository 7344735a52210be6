import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { skipFor } from '../testing-binaries.js';
import { candidateDirs, findEtcd, locateEtcd, parseEtcdVersion, repoRoot } from './binaries.js';

describe('parseEtcdVersion', () => {
  it('reads the server version from both releases’ output', () => {
    const v34 =
      'etcd Version: 3.4.23\nGit SHA: Not provided (use ./build instead of go build)\nGo Version: go1.19.8\n';
    const v35 =
      'etcd Version: 3.5.30\nGit SHA: Not provided\nGo Version: go1.24.4\nGo OS/Arch: linux/amd64\n';
    expect(parseEtcdVersion(v34)).toBe('3.4.23');
    expect(parseEtcdVersion(v35)).toBe('3.5.30');
    expect(parseEtcdVersion('etcdctl version: 3.5.30\nAPI version: 3.5\n')).toBeUndefined();
  });
});

describe('locating binaries', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-bin-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A stand-in `etcd` that reports `version`, plus an `etcdctl` next to it. */
  async function fakeEtcd(at: string, version: string): Promise<void> {
    await mkdir(at, { recursive: true });
    await writeFile(join(at, 'etcd'), `#!/bin/sh\necho "etcd Version: ${version}"\necho "Go Version: go1"\n`);
    await writeFile(join(at, 'etcdctl'), '#!/bin/sh\nexit 0\n');
    await chmod(join(at, 'etcd'), 0o755);
    await chmod(join(at, 'etcdctl'), 0o755);
  }

  it('looks in the override, then /usr/bin (3.4 only), then the repository cache', () => {
    const root = '/repo';
    expect(candidateDirs('3.4', {}, root)).toEqual(['/usr/bin', '/repo/.ferry-cache/etcd/3.4/usr/bin']);
    expect(candidateDirs('3.5', { FERRY_LAB_ETCD_3_5: '/opt/e35' }, root)).toEqual([
      '/opt/e35',
      '/repo/.ferry-cache/etcd/3.5/usr/bin',
    ]);
    expect(candidateDirs('3.5', { FERRY_CACHE_DIR: '/c' }, root)).toEqual(['/c/etcd/3.5/usr/bin']);
  });

  it('finds the cached 3.5 layout that scripts/install-etcd.sh writes', async () => {
    await fakeEtcd(join(dir, '.ferry-cache', 'etcd', '3.5', 'usr', 'bin'), '3.5.77');
    const bins = await findEtcd('3.5', { env: {}, root: dir });
    expect(bins).toEqual({
      minor: '3.5',
      version: '3.5.77',
      etcd: join(dir, '.ferry-cache/etcd/3.5/usr/bin/etcd'),
      etcdctl: join(dir, '.ferry-cache/etcd/3.5/usr/bin/etcdctl'),
    });
  });

  it('skips a binary of another minor version', async () => {
    await fakeEtcd(join(dir, 'wrong'), '3.4.1');
    await fakeEtcd(join(dir, '.ferry-cache', 'etcd', '3.5', 'usr', 'bin'), '3.5.2');
    const bins = await findEtcd('3.5', { env: { FERRY_LAB_ETCD_3_5: join(dir, 'wrong') }, root: dir });
    expect(bins?.version).toBe('3.5.2');
  });

  it('says to run the install script when nothing is found', async () => {
    const err = await locateEtcd('3.5', { env: {}, root: dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).exitCode).toBe(2);
    expect((err as FerryError).message).toContain(join(dir, '.ferry-cache/etcd/3.5/usr/bin'));
    expect((err as FerryError).remediation).toContain('scripts/install-etcd.sh');
  });

  it('finds the real installation when there is one', async (ctx) => {
    const bins = await findEtcd('3.4');
    if (!bins && skipFor('etcd 3.4 is not installed; run `bash scripts/install-etcd.sh`'))
      ctx.skip('etcd 3.4 not installed: run scripts/install-etcd.sh');
    expect(bins?.version).toMatch(/^3\.4\.\d+/);
  });

  it('resolves the repository root from its own location', () => {
    expect(repoRoot()).toBe(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'));
  });
});
