/**
 * Rule.reads is true: a rule whose answer changes when one snapshot input is emptied reads that
 * input (directly, through the index, or through the facts derived from it), so it must declare
 * it; otherwise a refused list of that input would leave the rule answering from nothing.
 * Checked over examples/lab-cluster and the small generate fixture, with KubePrism off and on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveFacts } from '../../facts/derive.js';
import type { TargetInput } from '../../facts/target.js';
import { loadSnapshot } from '../../snapshot/load.js';
import { SNAPSHOT_INPUTS, type Snapshot, type SnapshotInput } from '../../snapshot/model.js';
import { EXAMPLE_DIR } from '../../snapshot/testing-example.js';
import { writeFixture } from '../../snapshot/testing-small-cluster.js';
import { inputsOf } from '../engine.js';
import { buildIndex } from '../snapshot-index.js';
import { ALL_RULES } from './index.js';

/** The snapshot as it would be had `input`'s list come back empty. */
function without(s: Snapshot, input: SnapshotInput): Snapshot {
  const c = structuredClone(s);
  if (input.startsWith('configmap ')) {
    const [ns, name] = input.slice('configmap '.length).split('/') as [string, string];
    c.resources.configmaps = c.resources.configmaps.filter(
      (o) =>
        o.metadata.namespace !== ns ||
        !(o.metadata.name === name || o.metadata.name.startsWith(`${name}-1.`)),
    );
  } else if (input === 'bootstrapTokens') c.resources.bootstrapTokens = [];
  else c.resources[input as Exclude<SnapshotInput, 'bootstrapTokens' | `configmap ${string}`>] = [];
  return c;
}

function answers(s: Snapshot, target: TargetInput): Map<string, string> {
  const facts = deriveFacts(s, target);
  const index = buildIndex(s);
  const out = new Map<string, string>();
  for (const rule of ALL_RULES) {
    let result: unknown;
    try {
      result = rule.check({ snapshot: s, facts, target: facts.target, index });
    } catch (err) {
      result = `error: ${(err as Error).message}`;
    }
    out.set(rule.id, JSON.stringify(result));
  }
  return out;
}

let dir: string;
const fixtures: [string, Snapshot][] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-rule-reads-'));
  await writeFixture(dir);
  fixtures.push(
    ['examples/lab-cluster', await loadSnapshot(EXAMPLE_DIR, { strictPki: false })],
    ['small cluster', await loadSnapshot(dir, { strictPki: false })],
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Rule.reads', () => {
  it('names every input a rule answers from', () => {
    const undeclared: string[] = [];
    let sensitive = 0;
    for (const [name, snapshot] of fixtures)
      for (const target of [{}, { kubeprism: 'on' }] as TargetInput[]) {
        const base = answers(snapshot, target);
        for (const input of SNAPSHOT_INPUTS) {
          const other = answers(without(snapshot, input), target);
          for (const rule of ALL_RULES) {
            if (other.get(rule.id) === base.get(rule.id)) continue;
            sensitive++;
            if (!inputsOf(rule).includes(input))
              undeclared.push(
                `${rule.id} answers differently without ${input} (${name}) but does not declare it`,
              );
          }
        }
      }
    expect([...new Set(undeclared)]).toEqual([]);
    // The fixtures must make rules depend on their inputs, or this test could not fail.
    expect(sensitive).toBeGreaterThan(20);
  });

  it('holds only inputs a snapshot has, each once', () => {
    for (const rule of ALL_RULES) {
      expect(
        rule.reads.every((i) => SNAPSHOT_INPUTS.includes(i)),
        rule.id,
      ).toBe(true);
      expect(new Set(rule.reads).size, rule.id).toBe(rule.reads.length);
    }
  });
});
