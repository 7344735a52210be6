/**
 * The fuzz suite's own checks can fail: truncation really breaks the syntax, the secret scan finds
 * keys and tokens (and not label keys), the naming check wants a path, not a flag, and a
 * well-formed input run through the harness is reported (exit 0, output written, stdout).
 */
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { EXAMPLE, LAYOUT } from './bases.js';
import { type FuzzCase, fuzzCases } from './cases.js';
import { argvFor, namingProblems, runCase, treeChanges } from './harness.js';
import { junk, seedOf, truncate } from './mutate.js';
import { leaks, secretsInText } from './secrets.js';

describe('mutations', () => {
  const yaml = 'a:\n  b: "quoted value"\n  c:\n  - one\n  - two\nd: plain\n';

  it('truncate cuts where the text no longer parses, as a prefix of it', () => {
    for (const f of [0.1, 0.3, 0.5]) {
      const cut = truncate(yaml, f, 'yaml');
      expect(yaml.startsWith(cut)).toBe(true);
      expect(cut.length).toBeGreaterThanOrEqual(Math.floor(yaml.length * f));
      const docs = parseAllDocuments(cut);
      expect(Array.isArray(docs) && docs.some((d) => d.errors.length > 0), cut).toBe(true);
    }
    const json = JSON.stringify({ a: [1, 2, { b: 'c' }] });
    expect(() => JSON.parse(truncate(json, 0.99, 'json'))).toThrow();
    expect(() => truncate('a: b\n', 0.5, 'yaml')).toThrow(/no cut/);
  });

  it('junk is the same for the same seed and binary from its first byte', () => {
    expect(junk(64, seedOf('x')).equals(junk(64, seedOf('x')))).toBe(true);
    expect(junk(64, seedOf('x')).equals(junk(64, seedOf('y')))).toBe(false);
    expect(junk(8, 1)[0]).toBe(0);
  });
});

describe('secret scan', () => {
  const pem = [
    '-----BEGIN RSA PRIVATE KEY-----',
    'MIIEpQIBAAKCAQEA0N5n1U4iwTRlCVakhf6guWeJeiRSgsFDyVsJMzExU9pdeH9G',
    'VAFrMUl/hfLDml9C6OFPvF2hcNIev8EygtdYfiuxdLAT4ZKAsAK18AIIZ3bbB+TT',
    '-----END RSA PRIVATE KEY-----',
  ].join('\n');

  it('finds private keys (also base64-wrapped), encryption secrets and bootstrap tokens', () => {
    const text = [
      pem,
      'secret: FiH2EO3mUEeFSvSpWdwtL/yFDKLNLh6ddKcbwSNLUv4=',
      'token-secret: amkxMDdpbWZ0azRuNWUybA==',
      'bootstraptoken: q1w2e3.a1s2d3f4g5h6j7k8',
      `client-key-data: ${Buffer.from(pem).toString('base64')}`,
    ].join('\n');
    const secrets = secretsInText(text, 'f');
    expect(leaks('…VAFrMUl/hfLDml9C6OFPvF2hcNIev8Ey…', secrets)).toEqual(['key material from f']);
    expect(leaks('key FiH2EO3mUEeFSvSpWdwtL/yFDKLNLh6ddKcbwSNLUv4= is bad', secrets)).toHaveLength(1);
    expect(leaks('secret ji107imftk4n5e2l', secrets)).toHaveLength(1);
    expect(leaks('token a1s2d3f4g5h6j7k8', secrets)).toHaveLength(1);
    expect(leaks('error: pki/ca.key: not a PEM key', secrets)).toEqual([]);
    expect(leaks('-----BEGIN CERTIFICATE-----', new Map())).toEqual(['a PEM block (-----BEGIN)']);
  });

  it('does not take label keys and names for secrets', () => {
    const secrets = secretsInText(
      '- key: node-role.kubernetes.io/control-plane\n  effect: NoSchedule\nname: key-2023\nkey: dedicated\n',
      'f',
    );
    expect([...secrets.keys()]).toEqual([]);
  });
});

describe('naming', () => {
  const expectation = { file: 'kubeconfig', line: true as const };

  it('wants the file as a path, with its line when asked', () => {
    expect(namingProblems('error: missing --kubeconfig', expectation)).toEqual([
      'the error does not name kubeconfig',
    ]);
    expect(namingProblems('error: /tmp/x/kubeconfig: cannot be read', expectation)).toEqual([
      'the error names kubeconfig but not the line',
    ]);
    expect(namingProblems('error: kubeconfig:4:2: bad mapping', expectation)).toEqual([]);
  });

  it('takes any one of alternatives, and wants every object', () => {
    const e = { file: ['pki/sa.key', 'pki/sa.pub'], object: [['cp-2', 'members[1]'], 'ID'] };
    expect(namingProblems('error: pki/sa.pub, members[1], field ID', e)).toEqual([]);
    expect(namingProblems('error: pki/sa.pub, field ID', e)).toEqual([
      'the error does not name cp-2 or members[1]',
    ]);
  });

  it('summarises what a command wrote', () => {
    const before = new Map([['a', '1']]);
    const after = new Map([
      ['a', '2'],
      ['out/', 'dir'],
      ['out/kit/', 'dir'],
      ['out/kit/x', '3'],
    ]);
    expect(treeChanges(before, after)).toEqual(['wrote out/', 'changed a']);
  });
});

describe('the cases', () => {
  it('have unique names and name files inside the case directory', () => {
    const cases = fuzzCases();
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    for (const c of cases) {
      const files = typeof c.expect.file === 'string' ? [c.expect.file] : c.expect.file;
      for (const f of files) expect(f.startsWith('/') || f.includes('..'), c.name).toBe(false);
    }
  });
});

describe('the harness on a well-formed input', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-fuzz-harness-'));
    await cp(EXAMPLE, join(dir, LAYOUT.cluster), { recursive: true });
    await mkdir(join(dir, LAYOUT.out));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reports the exit code, the output written and what went to stdout', async () => {
    const control: FuzzCase = {
      name: 'control: the example as it is',
      category: 'truncated',
      base: 'files',
      commands: ['audit'],
      expect: { file: `${LAYOUT.cluster}/kubeadm-config.yaml` },
      mutate: async () => {},
    };
    expect(argvFor(control, 'audit')).toEqual([
      'audit',
      'cluster',
      '-o',
      'json',
      '--output-file',
      'out/audit.json',
    ]);
    const o = await runCase(control, 'audit', dir, { timeoutMs: 60_000, secrets: new Map() });
    expect(o.code).toBe(1);
    expect(o.problems).toEqual([
      'exit 1, not 2',
      'wrote out/audit.json',
      expect.stringMatching(/^printed on stdout: json report written to out\/audit\.json/),
    ]);
  });
});
