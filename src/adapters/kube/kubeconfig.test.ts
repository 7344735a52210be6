import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeError } from '../../errors.js';
import { thrown } from '../../testing-errors.js';
import { kubeconfigFromText, loadKubeconfig } from './kubeconfig.js';

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
    const err = thrown(() => loadKubeconfig(file, 'staging'));
    expect(err.kind).toBe('input');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('"staging"');
    expect(err.message).toContain('prod-admin, lab-admin, broken');
    expect(err.location?.file).toBe(file);
    expect(err.remediation).toMatch(/--context/);
  });

  it('no current-context and no --context is bad input', () => {
    const err = thrown(() => loadKubeconfig(kubeconfig('c.yaml', undefined)));
    expect(err.message).toMatch(/no current-context/);
    expect(err.remediation).toContain('prod-admin');
  });

  it('a context naming a missing cluster is bad input', () => {
    const err = thrown(() => loadKubeconfig(kubeconfig('d.yaml', 'broken')));
    expect(err.message).toMatch(/cluster "nowhere"/);
  });

  it('a missing or unreadable file is bad input naming it', () => {
    const missing = join(dir, 'nope.yaml');
    expect(thrown(() => loadKubeconfig(missing)).location?.file).toBe(missing);
    const garbage = join(dir, 'garbage.yaml');
    writeFileSync(garbage, 'clusters: [ {name: x, cluster: {}} ]\ncontexts: 5\n');
    const err = thrown(() => loadKubeconfig(garbage));
    expect(err.kind).toBe('input');
    expect(err.location?.file).toBe(garbage);
    const empty = join(dir, 'empty.yaml');
    for (const text of ['', '# nothing\n']) {
      writeFileSync(empty, text);
      expect(thrown(() => loadKubeconfig(empty)).message, text).toBe(
        `kubeconfig ${empty} is not a kubeconfig: it is empty`,
      );
    }
  });

  it('a server that is not a URL is bad input naming the file, its line, the cluster entry and the field', () => {
    for (const server of ['https://[::::]:6443', '10.0.0.10:6443', 'k8s.example:6443']) {
      const file = join(dir, 'bad-server.yaml');
      writeFileSync(
        file,
        readFileSync(kubeconfig('e.yaml', 'lab-admin'), 'utf8').replace('https://127.0.0.1:16443', server),
      );
      const err = thrown(() => loadKubeconfig(file));
      expect(err.exitCode, server).toBe(2);
      expect(err.location, server).toEqual({
        file,
        line: 10,
        object: 'cluster lab',
        field: 'cluster.server',
      });
      expect(err.message).toBe(
        `cluster "lab" in kubeconfig ${file} has server "${server}", which is not an https:// or http:// URL`,
      );
    }
    // Another cluster's server is not this context's business.
    const other = join(dir, 'other-server.yaml');
    writeFileSync(
      other,
      readFileSync(kubeconfig('f.yaml', 'lab-admin'), 'utf8').replace('https://10.0.0.10:6443/', 'nonsense'),
    );
    expect(loadKubeconfig(other).server).toBe('https://127.0.0.1:16443');
  });

  it('a YAML syntax error names the file with line and column, and quotes none of the file', () => {
    const file = join(dir, 'cut.yaml');
    const keyData = Buffer.from(
      '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFakeFakeFakeFakeFakeFake\n',
    ).toString('base64');
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
users:
- name: admin
  user:
    client-key-data: ${keyData}
  use
`,
    );
    const err = thrown(() => loadKubeconfig(file));
    expect(err.exitCode).toBe(2);
    expect(err.location).toMatchObject({ file, line: 7 });
    expect(err.message).toMatch(new RegExp(`^kubeconfig ${file} is not valid YAML: `));
    expect(describeError(err)).not.toContain(keyData.slice(0, 32));
  });
});

describe('a kubeconfig held in memory (a Cluster API kubeconfig Secret)', () => {
  const text = (server: string) =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "${server}"}\nusers:\n- name: u\n  user: {token: secret-token-value}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n`;

  it('is checked as a file is, and named as given', () => {
    const loaded = kubeconfigFromText(text('https://10.0.0.10:6443/'), 'Secret fleet/a-kubeconfig');
    expect(loaded).toMatchObject({
      file: 'Secret fleet/a-kubeconfig',
      context: 'x',
      server: 'https://10.0.0.10:6443',
    });
  });

  it('names the Secret, the line and never the value when the server is no URL or the YAML is broken', () => {
    const bad = thrown(() => kubeconfigFromText(text('10.0.0.10:6443'), 'Secret fleet/a-kubeconfig'));
    expect(describeError(bad)).toContain('cluster "c" in kubeconfig Secret fleet/a-kubeconfig has server');
    expect(bad).toMatchObject({
      location: { file: 'Secret fleet/a-kubeconfig', line: 5, field: 'cluster.server' },
    });
    const broken = thrown(() =>
      kubeconfigFromText(
        'users:\n- name: u\n  user: {token: secret-token-value\n',
        'Secret fleet/b-kubeconfig',
      ),
    );
    expect(describeError(broken)).toContain(
      'Secret fleet/b-kubeconfig:4:1: kubeconfig Secret fleet/b-kubeconfig is not valid YAML',
    );
    expect(describeError(broken)).not.toContain('secret-token-value');
    expect(describeError(thrown(() => kubeconfigFromText('', 'Secret fleet/c-kubeconfig')))).toContain(
      'kubeconfig Secret fleet/c-kubeconfig is not a kubeconfig: it is empty',
    );
  });
});
