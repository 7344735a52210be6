/**
 * A directory, a dangling symbolic link or a loop where the loader expects a file (or a file where
 * it expects a directory) is bad input saying so: never "absent", never a fix about permissions.
 */
import { mkdir, rm, symlink, unlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSnapshot } from './load.js';
import { saveSnapshot } from './store.js';
import { copyExample, type ExampleCopy, loadError } from './testing-example-copy.js';

let ex: ExampleCopy;
beforeEach(async () => {
  ex = await copyExample();
});
afterEach(async () => {
  await ex.cleanup();
});

describe('loadSnapshot: paths that are not what the layout expects', () => {
  it('kubeadm-config.yaml as a directory is an error, not a missing part', async () => {
    await unlink(ex.path('kubeadm-config.yaml'));
    await mkdir(ex.path('kubeadm-config.yaml'));
    const err = await loadError(ex.dir);
    expect(err.message).toBe(`${ex.path('kubeadm-config.yaml')} is a directory, not a file`);
  });

  it('a dangling symbolic link for encryption-config.yaml', async () => {
    await unlink(ex.path('encryption-config.yaml'));
    await symlink('/nonexistent/config.yaml', ex.path('encryption-config.yaml'));
    const err = await loadError(ex.dir);
    expect(err.message).toBe(
      `${ex.path('encryption-config.yaml')} is a symbolic link to /nonexistent/config.yaml, which does not exist`,
    );
    expect(err.remediation).not.toMatch(/readable|permission/);
  });

  it('a symbolic link loop in place of a manifest', async () => {
    const m = ex.path('manifests/cp-2/kube-apiserver.yaml');
    await unlink(m);
    await symlink(m, m);
    const err = await loadError(ex.dir);
    expect(err.message).toBe(`${m} is a symbolic link loop (following it never reaches a file)`);
  });

  it('a file where manifests/ should be a directory', async () => {
    await rm(ex.path('manifests'), { recursive: true });
    await ex.write('manifests', 'not a directory\n');
    expect((await loadError(ex.dir)).message).toBe(`${ex.path('manifests')} is not a directory`);
  });

  it('follows a symbolic link to a real file (a copied manifest may be one)', async () => {
    const m = ex.path('manifests/cp-1/kube-scheduler.yaml');
    const moved = ex.path('kube-scheduler.yaml.orig');
    await ex.write('kube-scheduler.yaml.orig', await ex.read('manifests/cp-1/kube-scheduler.yaml'));
    await unlink(m);
    await symlink(moved, m);
    const s = await loadSnapshot(ex.dir, { strictPki: false });
    expect(s.staticPods.filter((p) => p.component === 'kube-scheduler').map((p) => p.node)).toContain('cp-1');
  });

  it('a dangling link ferry would not read anyway (not .yaml/.json) is ignored with a warning', async () => {
    await symlink('/nonexistent/notes', ex.path('resources/NOTES'));
    const s = await loadSnapshot(ex.dir, { strictPki: false });
    expect(s.manifest.warnings).toContain(
      `ignored ${ex.path('resources/NOTES')}: not a .yaml, .yml or .json file`,
    );
    await symlink('/nonexistent/more.yaml', ex.path('resources/more.yaml'));
    expect((await loadError(ex.dir)).message).toMatch(
      /more\.yaml is a symbolic link to \/nonexistent\/more\.yaml/,
    );
  });

  it('a missing snapshot directory, and a file given as one', async () => {
    expect((await loadError(ex.path('nope'))).message).toBe(`the snapshot ${ex.path('nope')} does not exist`);
    expect((await loadError(ex.path('kubeadm-config.yaml'))).message).toBe(
      `the snapshot ${ex.path('kubeadm-config.yaml')} is not a directory`,
    );
  });
});

describe('readSavedSnapshot: part files that are not files', () => {
  it('a saved snapshot whose kubeadm.json is a dangling link', async () => {
    const saved = ex.path('../saved');
    await saveSnapshot(await loadSnapshot(ex.dir, { strictPki: false }), saved);
    await unlink(`${saved}/kubeadm.json`);
    await symlink(`${saved}/gone.json`, `${saved}/kubeadm.json`);
    const err = await loadError(saved);
    expect(err.message).toBe(
      `${saved}/kubeadm.json is a symbolic link to ${saved}/gone.json, which does not exist`,
    );
  });

  it('a resources file that is a directory is not an empty list', async () => {
    const saved = ex.path('../saved');
    await saveSnapshot(await loadSnapshot(ex.dir, { strictPki: false }), saved);
    await unlink(`${saved}/resources/nodes.json`);
    await mkdir(`${saved}/resources/nodes.json`);
    expect((await loadError(saved)).message).toBe(`${saved}/resources/nodes.json is a directory, not a file`);
  });
});
