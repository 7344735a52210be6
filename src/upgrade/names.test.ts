import { describe, expect, it } from 'vitest';
import { REMOVED_APIS } from '../knowledge/removed-apis.js';
import { canonicalJson, derivedName } from './names.js';
import { removalsBetween } from './removed-apis.js';

describe('derived template names', () => {
  it('the same spec gives the same name whatever its key order; another spec another name', () => {
    const a = derivedName('lab-worker', { b: 1, a: { d: [1, 2], c: 'x' } });
    expect(a).toMatch(/^lab-worker-[0-9a-f]{8}$/);
    expect(derivedName('lab-worker', { a: { c: 'x', d: [1, 2] }, b: 1 })).toBe(a);
    expect(derivedName('lab-worker', { b: 2, a: { d: [1, 2], c: 'x' } })).not.toBe(a);
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('a template derived before keeps one suffix, and the name stays a DNS label', () => {
    const once = derivedName('lab-worker', { x: 1 });
    expect(derivedName(once, { x: 2 })).toMatch(/^lab-worker-[0-9a-f]{8}$/);
    const long = derivedName('a'.repeat(70), {});
    expect(long.length).toBeLessThanOrEqual(63);
    expect(derivedName(`${'b'.repeat(53)}-x`, {})).toMatch(/^b{53}-[0-9a-f]{8}$/);
  });
});

describe('the removed-API table', () => {
  it('every row names a minor, a group version and a kind; only PodSecurityPolicy has no replacement', () => {
    for (const r of REMOVED_APIS) {
      expect(r.removedIn).toMatch(/^1\.\d+$/);
      expect(r.apiVersion).toMatch(/^[a-z0-9.]+\/v\d+(alpha|beta)?\d*$/);
      expect(r.kind).toMatch(/^[A-Z]\w+$/);
      if (r.replacement === null) expect(r.kind).toBe('PodSecurityPolicy');
    }
  });

  it('removals between two versions are those of the minors after the first, up to the second', () => {
    expect(removalsBetween('v1.24.9', 'v1.25.0').every((r) => r.removedIn === '1.25')).toBe(true);
    expect(new Set(removalsBetween('v1.25.0', 'v1.32.0').map((r) => r.removedIn))).toEqual(
      new Set(['1.26', '1.27', '1.29', '1.32']),
    );
    expect(removalsBetween('v1.32.4', 'v1.36.0')).toEqual([]);
    expect(removalsBetween('v1.32.4', 'v1.32.9')).toEqual([]);
  });
});
