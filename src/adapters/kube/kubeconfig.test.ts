import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { loadKubeconfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, currentContext: string | undefined): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://10.0.0.10:6443/
    insecure-skip-tls-verify: true
- name: lab
  cluster:
    server: https://127.0.0.1:16443
users:
- name: admin
  user:
    token: not-a-real-token
contexts:
- name: prod-admin
  context: {cluster: prod, user: admin}
- name: lab-admin
  context: {cluster: lab, user: admin}
- name: broken
  context: {cluster: nowhere, user: admin}
${currentContext ? `current-context: ${currentContext}\n` : ''}`,
  );
  return file;
}

function caught(fn: () => unknown): FerryError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(FerryError);
    return err as FerryError;
  }
  throw new Error('expected an error');
}

describe('loadKubeconfig', () => {
  it('uses current-context, or --context when given', () => {
    const file = kubeconfig('a.yaml', 'prod-admin');
    expect(loadKubeconfig(file)).toMatchObject({ context: 'prod-admin', server: 'https://10.0.0.10:6443' });
    const lab = loadKubeconfig(file, 'lab-admin');
    expect(lab).toMatchObject({ context: 'lab-admin', server: 'https://127.0.0.1:16443' });
    expect(lab.kc.getCurrentContext()).toBe('lab-admin');
  });

  it('a context that does not exist is bad input listing the contexts there are', () => {
    const file = kubeconfig('b.yaml', 'prod-admin');
    const err = caught(() => loadKubeconfig(file, 'staging'));
    expect(err.kind).toBe('input');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('"staging"');
    expect(err.message).toContain('prod-admin, lab-admin, broken');
    expect(err.location?.file).toBe(file);
    expect(err.remediation).toMatch(/--context/);
  });

  it('no current-context and no --context is bad input', () => {
    const err = caught(() => loadKubeconfig(kubeconfig('c.yaml', undefined)));
    expect(err.message).toMatch(/no current-context/);
    expect(err.remediation).toContain('prod-admin');
  });

  it('a context naming a missing cluster is bad input', () => {
    const err = caught(() => loadKubeconfig(kubeconfig('d.yaml', 'broken')));
    expect(err.message).toMatch(/cluster "nowhere"/);
  });

  it('a missing or unreadable file is bad input naming it', () => {
    const missing = join(dir, 'nope.yaml');
    expect(caught(() => loadKubeconfig(missing)).location?.file).toBe(missing);
    const garbage = join(dir, 'garbage.yaml');
    writeFileSync(garbage, 'clusters: [ {name: x, cluster: {}} ]\ncontexts: 5\n');
    const err = caught(() => loadKubeconfig(garbage));
    expect(err.kind).toBe('input');
    expect(err.location?.file).toBe(garbage);
  });
});
