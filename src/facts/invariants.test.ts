import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../snapshot/load.js';
import { sameValue } from './decide.js';
import { deriveFacts } from './derive.js';
import { type Facts, listFacts } from './model.js';
import { emptySnapshot, labCluster } from './testing-builders.js';

function checkInvariants(facts: Facts) {
  const all = listFacts(facts);
  expect(new Set(all.map((f) => f.key)).size).toBe(all.length);
  for (const f of all) {
    expect(f.key).toMatch(/^[a-zA-Z]+\.[a-zA-Z0-9]+$/);
    if (f.value === undefined) {
      expect(f.missing, f.key).toBeTruthy();
      expect(f.provenance, f.key).toEqual([]);
    } else {
      // a known value always says where it came from
      expect(f.provenance.length, f.key).toBeGreaterThan(0);
      expect(f.missing, f.key).toBeUndefined();
    }
    if (f.conflict) {
      expect(sameValue(f.conflict.believed, f.value), f.key).toBe(true);
      const distinct = f.conflict.candidates.filter(
        (c, i, cs) => cs.findIndex((d) => sameValue(d.value, c.value)) === i,
      );
      expect(distinct.length, f.key).toBeGreaterThan(1);
      expect(f.conflict.reason.length, f.key).toBeGreaterThan(20);
    }
  }
}

describe('fact invariants', () => {
  it('hold for a full cluster, an empty snapshot and the bundled example', async () => {
    checkInvariants(deriveFacts(labCluster()));
    const empty = deriveFacts(emptySnapshot());
    checkInvariants(empty);
    // an empty snapshot derives nothing, and every fact says what to provide
    expect(
      listFacts(empty)
        .filter((f) => f.value !== undefined)
        .map((f) => f.key),
    ).toEqual([]);
    const example = deriveFacts(await loadSnapshot('examples/lab-cluster', { strictPki: false }));
    checkInvariants(example);
    expect(listFacts(example).filter((f) => f.value === undefined)).toEqual([]);
  });
});
