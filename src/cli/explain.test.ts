import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

describe('ferry explain', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-explain-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const run = async (...argv: string[]) => {
    const io = memoryIo({ cwd: dir });
    const code = await runCli(['explain', ...argv], io);
    return { code, out: io.out, err: io.err };
  };

  it('explains a pasted error with its rule, cause and fix', async () => {
    const r = await run('x509: certificate is valid for 10.96.0.1, 10.20.0.11, not 127.0.0.1');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^apiserver\.san-loopback: /);
    expect(r.out).toContain('cause: Talos nodes reach every apiserver through KubePrism');
    expect(r.out).toContain('fix:');
    expect(r.out).toContain('check: ferry audit reports this as apiserver.san-loopback');
    // Sources a user has: the rule's section of docs/rules.md and the upstream threads.
    expect(r.out).toContain(
      'source: docs/rules.md#apiserver.san-loopback; siderolabs/talos#11105; siderolabs/talos#8254',
    );
    expect(r.out).not.toMatch(/blockers\.md|talos\.md/);
    const j = JSON.parse((await run('etcdserver: not leader', '-o', 'json')).out);
    expect(j.matches[0].sources).toEqual(['docs/rules.md#etcd-not-leader']);
  });

  it('says when it does not know the text and points to ferry audit', async () => {
    const r = await run('something', 'else', 'entirely');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/No known migration error matches/);
    expect(r.out).toContain('ferry audit');
    const j = JSON.parse((await run('nothing here', '-o', 'json')).out);
    expect(j).toMatchObject({ matched: false, matches: [] });
  });

  it('says a binary or compressed file is not a log (exit 2) instead of finding nothing in it', async () => {
    await writeFile(join(dir, 'core'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x41]));
    const bin = await run('--log', 'core');
    expect(bin.code).toBe(2);
    expect(bin.out).toBe('');
    expect(bin.err).toContain('not a text log: it holds a NUL byte at character 7');
    await writeFile(join(dir, 'kubelet.log.gz'), gzipSync('E0814 etcdserver: not leader\n'));
    const gz = await run('--log', 'kubelet.log.gz', '-o', 'json');
    expect(gz.code).toBe(2);
    expect(gz.out).toBe('');
    expect(gz.err).toContain('gzip-compressed');
    expect(gz.err).toContain('zcat kubelet.log.gz > log.txt && ferry explain --log log.txt');
    // A log with a NUL past its first 64 KiB is still scanned.
    await writeFile(join(dir, 'long.log'), `${'I0814 ok\n'.repeat(8_000)}\0\netcdserver: not leader\n`);
    expect((await run('--log', 'long.log')).code).toBe(0);
  });

  it('scans a log and reports matching lines with their numbers', async () => {
    await writeFile(
      join(dir, 'apiserver.log'),
      [
        'I0814 10:00:00.000 1 server.go:1] starting',
        'E0814 10:12:03.118 1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"',
        'W0814 10:15:22.401 1 reflector.go:561] failed to list *core.Secret: unable to transform key "/registry/secrets/a/b": no matching prefix found',
      ].join('\n'),
    );
    const r = await run('--log', 'apiserver.log');
    expect(r.out).toContain('apiserver.log: 2 matching line(s), 2 known error(s)');
    expect(r.out).toContain('line 2: apiserver.sa-issuer');
    expect(r.out).toContain('line 3: encryption.key-name');
    const j = JSON.parse((await run('--log', 'apiserver.log', '-o', 'json')).out);
    expect(j.matched).toBe(true);
    expect(j.lines.map((l: { line: number }) => l.line)).toEqual([2, 3]);
    expect(j.matches.map((m: { ruleId: string; lines: number[] }) => [m.ruleId, m.lines])).toEqual([
      ['apiserver.sa-issuer', [2]],
      ['encryption.key-name', [3]],
    ]);
  });

  it('lists what it knows and rejects bad usage', async () => {
    expect((await run('--list')).out).toContain('x509-san-loopback');
    expect((await run()).code).toBe(2);
    expect((await run('--log', 'missing.log')).code).toBe(2);
    expect((await run('text', '--log', 'x.log')).code).toBe(2);
  });
});
