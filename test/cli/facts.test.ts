import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFactsCommand } from '../../src/cli/facts.js';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { FerryError, inputError } from '../../src/errors.js';
import { labCluster } from '../../src/facts/testing-builders.js';
import type { Snapshot } from '../../src/snapshot/model.js';

function command(snapshot: Snapshot = labCluster()) {
  const seen: { path: string; cwd: string }[] = [];
  const cmd = makeFactsCommand(async (path, cwd) => {
    seen.push({ path, cwd });
    return snapshot;
  });
  return { cmd, seen };
}

async function failure(p: Promise<unknown>): Promise<FerryError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FerryError) return e;
    throw e;
  }
  throw new Error('expected a FerryError');
}

describe('ferry facts', () => {
  it('prints the table by default, loading the path as typed from cwd', async () => {
    const { cmd, seen } = command();
    const io = memoryIo({ cwd: '/work/here' });
    expect(await cmd.run(['snap'], io)).toBe(0);
    expect(seen).toEqual([{ path: 'snap', cwd: '/work/here' }]);
    expect(io.out).toContain('TARGET');
    expect(io.out).toContain('  network.podSubnets  10.244.0.0/16');
    expect(io.err).toBe('');
  });

  it('-o json / -o yaml with target flags', async () => {
    const { cmd } = command();
    const io = memoryIo();
    expect(await cmd.run(['snap', '-o', 'json', '--talos-version', 'v1.14', '--kubeprism', 'off'], io)).toBe(
      0,
    );
    const doc = JSON.parse(io.out);
    expect(doc.target).toMatchObject({
      talosVersion: 'v1.14.0-rc.1',
      kubeprism: 'off',
      kubernetesVersion: 'v1.32.4',
    });
    const yamlIo = memoryIo();
    expect(await cmd.run(['snap', '--output=yaml'], yamlIo)).toBe(0);
    expect(yamlIo.out).toMatch(/^formatVersion: 1\n/);
  });

  it('an untabled Talos patch: table and json say which tabled facts were assumed', async () => {
    const { cmd } = command();
    const io = memoryIo();
    expect(await cmd.run(['snap', '--talos-version', 'v1.10.6'], io)).toBe(0);
    expect(io.out).toContain(
      '  talosVersion       v1.10.6  (Talos v1.10.6 is not tabled; assumed the facts of v1.10.0 (etcd 3.5.21, default Kubernetes 1.33.0; the v1.10 line supports Kubernetes 1.28.0 – 1.33.x))',
    );
    expect(io.out).toContain('Talos v1.10.6: etcd 3.5.21, Kubernetes 1.28.0 – 1.33.x');
    const json = memoryIo();
    expect(await cmd.run(['snap', '-o', 'json', '--talos-version', 'v1.10.6'], json)).toBe(0);
    expect(JSON.parse(json.out).target.talosRelease).toMatchObject({
      version: 'v1.10.6',
      assumedFrom: 'v1.10.0',
      etcdVersion: '3.5.21',
    });
  });

  it('bad usage is exit 2 with a remediation', async () => {
    const { cmd } = command();
    expect((await failure(cmd.run([], memoryIo()))).exitCode).toBe(2);
    expect((await failure(cmd.run(['snap', '-o', 'sarif'], memoryIo()))).message).toMatch(
      /--output must be one of table, json, yaml/,
    );
    const bad = await failure(cmd.run(['snap', '--talos-version', 'v2.0'], memoryIo()));
    expect(bad.exitCode).toBe(2);
    expect(bad.remediation).toMatch(/v1.13.9/);
    expect(bad.remediation).toContain('known Talos lines: v1.10, v1.11, v1.12, v1.13, v1.14');
    expect((await failure(cmd.run(['a', 'b'], memoryIo()))).message).toMatch(/unexpected argument "b"/);
  });

  it('a loader input error passes through unchanged (exit 2, location kept)', async () => {
    const cmd = makeFactsCommand(async () => {
      throw inputError('no such directory', { file: 'nowhere' }, 'give a snapshot directory');
    });
    const err = await failure(cmd.run(['nowhere'], memoryIo()));
    expect(err.exitCode).toBe(2);
    expect(err.location?.file).toBe('nowhere');
  });

  it('end to end through runCli on a files directory', async () => {
    const io = memoryIo();
    const code = await runCli(['facts', 'src/snapshot/fixtures/files-cluster', '-o', 'json'], io);
    expect(io.err).toBe('');
    expect(code).toBe(0);
    const doc = JSON.parse(io.out);
    expect(doc.snapshot.source).toBe('files src/snapshot/fixtures/files-cluster');
    expect(doc.facts.length).toBeGreaterThan(50);
    const missing = await runCli(['facts', 'src/snapshot/fixtures/does-not-exist'], memoryIo());
    expect(missing).toBe(2);
  });

  it('provenance names files as the user typed them, relative to the working directory', async () => {
    const io = memoryIo({ cwd: resolve('src/snapshot/fixtures') });
    expect(await runCli(['facts', 'files-cluster', '-o', 'json'], io)).toBe(0);
    const paths = new Set<string>();
    const walk = (o: unknown): void => {
      if (Array.isArray(o)) o.forEach(walk);
      else if (o && typeof o === 'object')
        for (const [k, v] of Object.entries(o)) {
          if (k === 'path' && typeof v === 'string') paths.add(v);
          walk(v);
        }
    };
    walk(JSON.parse(io.out));
    expect(paths).toContain(join('files-cluster', 'kubeadm-config.yaml'));
    expect(paths).toContain(join('files-cluster', 'manifests', 'cp-1', 'kube-apiserver.yaml'));
    for (const p of paths) expect(p.startsWith('files-cluster/'), p).toBe(true);
  });
});
