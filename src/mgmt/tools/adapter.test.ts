import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejected } from '../../testing-errors.js';
import { Tools } from './adapter.js';
import { Standins } from './testing-standins.js';
import { TOOLS } from './versions.js';

describe('version output of each tool, as the real tools print it (mgmt.md §1–3)', () => {
  it.each([
    ['kind', 'kind v0.32.0 go1.24.4 linux/amd64\n', '0.32.0'],
    ['clusterctl', 'v1.14.0\n', '1.14.0'],
    [
      'kubectl',
      '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1"},"kustomizeVersion":"v5.7.1"}',
      '1.36.1',
    ],
    ['helm', 'v3.21.4+g5e2f4a1\n', '3.21.4'],
    ['helm', 'v4.2.4\n', '4.2.4'],
    ['docker', 'Docker version 27.3.1, build ce12230\n', '27.3.1'],
    ['podman', 'podman version 5.2.4\n', '5.2.4'],
  ] as const)('%s: %j', (tool, stdout, want) => {
    const v = TOOLS[tool].parse(stdout);
    expect(v && `${v.major}.${v.minor}.${v.patch}`).toBe(want);
  });

  it.each([
    ['kind', '0.32.0'], // `kind version -q`, not what ferry asks for
    ['clusterctl', '{"clusterctl":{"gitVersion":"v1.14.0"}}'],
    ['kubectl', 'Client Version: v1.36.1'],
    ['helm', 'version.BuildInfo{Version:"v3.21.4"}'],
    ['docker', 'podman version 5.2.4'],
  ] as const)('%s does not accept %j', (tool, stdout) => {
    expect(TOOLS[tool].parse(stdout)).toBeUndefined();
  });
});

describe('Tools', () => {
  let dir: string;
  let s: Standins;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ferry-tools-'));
    s = new Standins(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a call with a secret in an argument or the environment, spawning nothing', async () => {
    s.script([{ tool: 'kubectl', match: '', stdout: 'x' }]);
    const lines: string[] = [];
    const t = new Tools({ env: s.env(), sink: (_t, _s, l) => lines.push(l) });
    t.secrets.add('hunter2-secret-value');
    await rejected(t.run({ tool: 'kubectl', args: ['--token', 'hunter2-secret-value'] }), 4);
    await rejected(
      t.run({ tool: 'kubectl', args: ['get'], env: { PROXMOX_SECRET: 'hunter2-secret-value' } }),
      4,
    );
    expect(s.calls()).toHaveLength(0);
  });

  it('streams output lines to the sink with secrets masked; secret output is returned, not streamed', async () => {
    s.script([
      { tool: 'helm', match: '^echo', stdout: 'one\ntoken=hunter2-secret-value\nlast', stderr: 'warn\n' },
      { tool: 'kubectl', match: '^kubeconfig', stdout: 'client-key-data: hunter2-secret-value\n' },
    ]);
    const lines: string[] = [];
    const t = new Tools({ env: s.env(), sink: (tool, stream, l) => lines.push(`${tool} ${stream} ${l}`) });
    t.secrets.add('hunter2-secret-value');
    const r = await t.run({ tool: 'helm', args: ['echo'], stdin: 'values: 1\n' });
    expect(r).toMatchObject({ code: 0, stdout: 'one\ntoken=hunter2-secret-value\nlast' });
    expect(lines).toEqual([
      'helm stdout one',
      'helm stdout token=<redacted>',
      'helm stderr warn',
      'helm stdout last',
    ]);
    expect(s.calls()[0]?.stdin).toBe('values: 1\n');
    lines.length = 0;
    const k = await t.run({ tool: 'kubectl', args: ['kubeconfig'], secretOutput: true });
    expect(k.stdout).toContain('hunter2-secret-value');
    expect(lines).toEqual([]);
  });

  it('drops the environment variable that holds a secret', async () => {
    s.script([{ tool: 'kind', match: '' }]);
    const t = new Tools({
      env: s.env({ PVE_SECRET: 'abc', KEEP: '1' }),
      sink: () => {},
      dropEnv: ['PVE_SECRET'],
    });
    await t.run({ tool: 'kind', args: ['get', 'clusters'] });
    const env = s.calls()[0]?.env ?? {};
    expect(env['PVE_SECRET']).toBeUndefined();
    expect(env['KEEP']).toBe('1');
  });

  it('neither docker nor podman: one error naming both', async () => {
    rmSync(join(s.bin, 'docker'));
    const t = new Tools({ env: { ...s.env(), PATH: s.bin }, sink: () => {} });
    await rejected(t.version('docker'), 2);
    const e = await rejected(t.runtime(), 2);
    expect(e.message).toMatch(/neither docker nor podman/);
  });

  it.for([
    ['kubectl', '/usr/bin/kubectl'],
    ['docker', '/usr/local/bin/docker'],
  ] as const)('the real %s on this machine: its version output parses', async ([tool, path], ctx) => {
    if (!existsSync(path)) ctx.skip(`${path} is not installed here`);
    const t = new Tools({ env: { PATH: path.slice(0, path.lastIndexOf('/')) }, sink: () => {} });
    const v = await t.version(tool);
    expect(v.major).toBeGreaterThan(0);
  });
});
