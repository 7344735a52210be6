import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { Finding, Subject } from './findings.js';
import {
  applySuppressions,
  DEFAULT_SUPPRESSIONS_FILE,
  parseExpiry,
  parseSuppressions,
  readSuppressions,
} from './suppressions.js';

const KNOWN = ['workload.pdb-missing', 'workload.node-pinned', 'bootstrap.token-ttl'];
const FILE = '.ferry/suppressions.yaml';
const NOW = new Date('2026-08-20T12:00:00Z');

function finding(ruleId: string, subject: Subject, fp: string): Finding {
  return {
    ruleId,
    family: ruleId.split('.')[0]!,
    severity: 'risk',
    title: 't',
    message: 'm',
    evidence: [],
    remediation: 'r',
    fingerprint: fp,
    artifacts: [],
    subject,
    target: { talosVersion: 'v1.13.9', kubeprism: true, provisioner: 'manual' },
  };
}

function parseError(text: string): FerryError {
  try {
    parseSuppressions(text, FILE, KNOWN);
  } catch (err) {
    expect(err).toBeInstanceOf(FerryError);
    return err as FerryError;
  }
  throw new Error('expected an error');
}

describe('suppressions file', () => {
  it('parses entries with their line numbers', () => {
    const list = parseSuppressions(
      `# accepted risks
suppressions:
  - rule: workload.pdb-missing
    scope:
      namespace: batch
      kind: Deployment
      name: "report-*"
    reason: nightly reports, a short outage on drain is accepted
    expires: 2026-12-31
  - rule: "workload.*"
    scope: { labelSelector: "team=data,tier in (etl, batch)" }
    reason: owned by the data team
`,
      FILE,
      KNOWN,
    );
    expect(list).toHaveLength(2);
    expect(list[0]).toEqual({
      rule: 'workload.pdb-missing',
      scope: { namespace: 'batch', kind: 'Deployment', name: 'report-*' },
      reason: 'nightly reports, a short outage on drain is accepted',
      expires: '2026-12-31',
      file: FILE,
      line: 3,
    });
    expect(list[1]!.line).toBe(10);
    expect(parseSuppressions('', FILE, KNOWN)).toEqual([]);
    expect(parseSuppressions('- rule: bootstrap.token-ttl\n  reason: x\n', FILE, KNOWN)).toHaveLength(1);
  });

  it.each([
    ['missing reason', 'suppressions:\n  - rule: workload.pdb-missing\n', 2, /missing "reason"/],
    [
      'unknown rule (typo)',
      'suppressions:\n  - rule: workload.pdb-mising\n    reason: x\n',
      2,
      /matches no rule/,
    ],
    [
      'unknown key',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    expire: 2026-01-01\n',
      4,
      /unknown key "expire"/,
    ],
    [
      'unknown scope key',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    scope:\n      nmespace: a\n',
      5,
      /unknown scope key "nmespace"/,
    ],
    [
      'bad expiry',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    expires: next week\n',
      4,
      /"expires" must be a date/,
    ],
    [
      'impossible date',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    expires: 2026-02-30\n',
      4,
      /"expires"/,
    ],
    [
      'bad selector',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    scope: {labelSelector: "a in b"}\n',
      4,
      /labelSelector/,
    ],
    [
      'empty labelSelector',
      'suppressions:\n  - rule: workload.pdb-missing\n    reason: x\n    scope: {labelSelector: ""}\n',
      4,
      /scope.labelSelector is empty/,
    ],
    ['bad YAML', 'suppressions:\n  - rule: [workload\n', 3, /invalid YAML/],
    ['not a list', 'suppressions: yes\n', 1, /expected a list/],
  ])('rejects %s naming file and line', (_name, text, line, message) => {
    const err = parseError(text);
    expect(err.exitCode).toBe(2);
    expect(err.location?.file).toBe(FILE);
    expect(err.location?.line).toBe(line);
    expect(err.message).toMatch(message);
    expect(err.remediation).toBeTruthy();
  });

  it('reads the file a command names, else the default one when it exists, else none', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ferry-suppressions-'));
    try {
      const entry = (rule: string) => `suppressions:\n  - rule: ${rule}\n    reason: accepted\n`;
      expect(await readSuppressions(undefined, cwd, KNOWN)).toEqual([]);
      await mkdir(join(cwd, '.ferry'));
      await writeFile(join(cwd, DEFAULT_SUPPRESSIONS_FILE), entry('bootstrap.token-ttl'));
      await writeFile(join(cwd, 'other.yaml'), entry('workload.pdb-missing'));
      const dflt = await readSuppressions(undefined, cwd, KNOWN);
      expect(dflt.map((x) => [x.rule, x.file])).toEqual([
        ['bootstrap.token-ttl', join(cwd, DEFAULT_SUPPRESSIONS_FILE)],
      ]);
      // A named file replaces the default one.
      expect((await readSuppressions('other.yaml', cwd, KNOWN)).map((x) => x.rule)).toEqual([
        'workload.pdb-missing',
      ]);
      // A named file must exist; a default one that cannot be read is an error too, not "none".
      const missing = await readSuppressions('missing.yaml', cwd, KNOWN).catch((e: FerryError) => e);
      expect(missing).toBeInstanceOf(FerryError);
      expect((missing as FerryError).exitCode).toBe(2);
      expect((missing as FerryError).location?.file).toBe('missing.yaml');
      await rm(join(cwd, DEFAULT_SUPPRESSIONS_FILE));
      await mkdir(join(cwd, DEFAULT_SUPPRESSIONS_FILE));
      await expect(readSuppressions(undefined, cwd, KNOWN)).rejects.toThrow(
        /the default suppressions file .ferry\/suppressions.yaml is a directory/,
      );
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('reads a bare date as valid through that day (UTC)', () => {
    expect(parseExpiry('2026-08-20')!.toISOString()).toBe('2026-08-20T23:59:59.999Z');
    expect(parseExpiry('2026-08-20T10:00:00Z')!.toISOString()).toBe('2026-08-20T10:00:00.000Z');
    expect(parseExpiry('tomorrow')).toBeUndefined();
  });
});

describe('applying suppressions', () => {
  const webBatch = finding(
    'workload.pdb-missing',
    { kind: 'Deployment', namespace: 'batch', name: 'report-daily', labels: { team: 'data' } },
    'f1',
  );
  const webShop = finding(
    'workload.pdb-missing',
    { kind: 'Deployment', namespace: 'shop', name: 'report-daily' },
    'f2',
  );
  const pinned = finding(
    'workload.node-pinned',
    { kind: 'Pod', namespace: 'batch', name: 'etl-0', node: 'worker-3' },
    'f3',
  );
  const token = finding(
    'bootstrap.token-ttl',
    { kind: 'BootstrapToken', namespace: 'kube-system', name: 'talos-join' },
    'f4',
  );

  it('honours rule, namespace, kind, name glob, node and label selector', () => {
    const sups = parseSuppressions(
      `- rule: workload.pdb-missing
  scope: {namespace: batch, kind: deployment, name: "report-*"}
  reason: accepted
- rule: "workload.*"
  scope: {node: "worker-?"}
  reason: node pinned on purpose
- rule: workload.pdb-missing
  scope: {labelSelector: "team=web"}
  reason: never matches
`,
      FILE,
      KNOWN,
    );
    const r = applySuppressions([webBatch, webShop, pinned, token], sups, NOW);
    expect(r.active.map((f) => f.fingerprint)).toEqual(['f2', 'f4']);
    expect(r.suppressed.map((s) => [s.finding.fingerprint, s.by.line])).toEqual([
      ['f1', 1],
      ['f3', 4],
    ]);
    expect(r.unused.map((s) => s.line)).toEqual([7]);
    expect(r.expired).toEqual([]);
  });

  it('stops applying expired entries and reports what came back', () => {
    const sups = parseSuppressions(
      `- rule: workload.pdb-missing
  reason: until the rewrite
  expires: 2026-08-19
- rule: bootstrap.token-ttl
  reason: still valid today
  expires: 2026-08-20
`,
      FILE,
      KNOWN,
    );
    const r = applySuppressions([webBatch, webShop, token], sups, NOW);
    expect(r.active.map((f) => f.fingerprint)).toEqual(['f1', 'f2']);
    expect(r.suppressed.map((s) => s.finding.fingerprint)).toEqual(['f4']);
    expect(r.expired).toEqual([{ suppression: sups[0], wouldMatch: 2 }]);
  });

  it('a namespace scope never matches cluster-scoped subjects', () => {
    const node = finding('workload.node-pinned', { kind: 'Node', name: 'worker-1', node: 'worker-1' }, 'f5');
    const sups = parseSuppressions(
      '- rule: workload.node-pinned\n  scope: {namespace: "*"}\n  reason: x\n',
      FILE,
      KNOWN,
    );
    expect(applySuppressions([node], sups, NOW).active).toHaveLength(1);
  });
});
