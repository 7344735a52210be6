import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { applyBaseline, loadBaseline, parseBaseline, writeBaseline } from './baseline.js';
import type { Finding } from './findings.js';

function finding(ruleId: string, fp: string): Finding {
  return {
    ruleId,
    family: ruleId.split('.')[0]!,
    severity: 'blocker',
    title: 't',
    message: 'm',
    evidence: [],
    remediation: 'r',
    fingerprint: fp,
    artifacts: [],
    subject: { kind: 'Node', name: fp, node: fp },
    target: { talosVersion: 'v1.13.9', kubeprism: true, provisioner: 'manual' },
  };
}

const A = finding('nodes.name-reuse', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
const B = finding('bootstrap.token-ttl', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');
const C = finding('etcd.unhealthy', 'cccccccccccccccccccccccccccccccc');

describe('baseline', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-baseline-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('round-trips through a file and reports only new findings', async () => {
    const file = join(dir, 'sub', 'baseline.json');
    await writeBaseline(file, [A, B], new Date('2026-08-20T00:00:00Z'));
    const doc = JSON.parse(await readFile(file, 'utf8'));
    expect(doc.kind).toBe('ferry-baseline');
    // Sorted by rule id for clean diffs.
    expect(doc.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual([
      'bootstrap.token-ttl',
      'nodes.name-reuse',
    ]);
    const known = await loadBaseline(file);
    const split = applyBaseline([A, B, C], known);
    expect(split.fresh).toEqual([C]);
    expect(split.known).toEqual([A, B]);
  });

  it('accepts a JSON audit report as a baseline', () => {
    const report = JSON.stringify({ kind: 'ferry-audit-report', formatVersion: 1, findings: [A] });
    expect([...parseBaseline(report, 'report.json')]).toEqual([A.fingerprint]);
    // A report of `audit --kit`: the findings the kit resolves are known as well.
    const withKit = JSON.stringify({
      kind: 'ferry-audit-report',
      formatVersion: 1,
      findings: [],
      resolved: [A],
    });
    expect([...parseBaseline(withKit, 'report.json')]).toEqual([A.fingerprint]);
  });

  it('rejects broken files naming file, line or field', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{\n  "findings": [\n    {"fingerprint": "abc",}\n  ]\n}\n');
    const err = await loadBaseline(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).location).toMatchObject({ file: bad, line: 3 });
    expect(() => parseBaseline('{"findings": [{"fingerprint": "XYZ"}]}', 'b.json')).toThrow(
      /findings\[0\]\.fingerprint/,
    );
    expect(() =>
      parseBaseline('{"kind": "ferry-baseline", "formatVersion": 9, "findings": []}', 'b.json'),
    ).toThrow(/format version 9/);
    expect(() => parseBaseline('[]', 'b.json')).toThrow(/no "findings" list/);
    await expect(loadBaseline(join(dir, 'missing.json'))).rejects.toThrow(
      /--baseline .*missing.json does not exist/,
    );
  });
});
