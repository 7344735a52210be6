import { describe, expect, it } from 'vitest';
import { pinnedNodes, pinsOf } from './node-pins.js';

const AFFINITY = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';
const affinity = (...nodeSelectorTerms: unknown[]) => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } },
});
const host = (operator: string, ...values: string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/hostname', operator, values }],
});

describe('pinnedNodes: the nodes a pod spec may only run on', () => {
  it('a kubernetes.io/hostname nodeSelector pins to that node; other selectors do not', () => {
    expect(pinnedNodes({ nodeSelector: { 'kubernetes.io/hostname': 'w1' } })).toEqual(['w1']);
    expect(pinnedNodes({ nodeSelector: { pool: 'a' } })).toBeUndefined();
    expect(pinnedNodes({})).toBeUndefined();
  });

  it('required affinity kubernetes.io/hostname In [w1] pins to w1', () => {
    expect(pinnedNodes(affinity(host('In', 'w1')))).toEqual(['w1']);
    expect(pinsOf(affinity(host('In', 'w1', 'w2')), 'spec', false)).toEqual([
      { field: AFFINITY, nodes: ['w1', 'w2'] },
    ]);
  });

  it('NotIn pins nothing (every other node matches), but narrows an In in the same term', () => {
    expect(pinnedNodes(affinity(host('NotIn', 'w1')))).toBeUndefined();
    expect(
      pinnedNodes(
        affinity({
          matchExpressions: [
            { key: 'kubernetes.io/hostname', operator: 'In', values: ['w1', 'w2'] },
            { key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['w2'] },
          ],
        }),
      ),
    ).toEqual(['w1']);
  });

  it('matchFields metadata.name In [w1] pins to w1', () => {
    expect(
      pinnedNodes(affinity({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['w1'] }] })),
    ).toEqual(['w1']);
  });

  it('terms are ORed: pinned only when every term names nodes, to the union of their names', () => {
    expect(pinnedNodes(affinity(host('In', 'w1'), host('In', 'w2')))).toEqual(['w1', 'w2']);
    expect(
      pinnedNodes(
        affinity(host('In', 'w1'), { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }),
      ),
    ).toBeUndefined();
  });

  it('requirements in a term are ANDed: two In lists allow only the names in both', () => {
    expect(
      pinnedNodes(
        affinity({
          matchExpressions: [
            { key: 'kubernetes.io/hostname', operator: 'In', values: ['w1', 'w2'] },
            { key: 'pool', operator: 'In', values: ['a'] },
          ],
          matchFields: [{ key: 'metadata.name', operator: 'In', values: ['w2', 'w3'] }],
        }),
      ),
    ).toEqual(['w2']);
  });

  it('a nodeSelector and affinity together allow only the names both allow', () => {
    expect(
      pinnedNodes({ nodeSelector: { 'kubernetes.io/hostname': 'w2' }, ...affinity(host('In', 'w1', 'w2')) }),
    ).toEqual(['w2']);
  });

  it('spec.nodeName says where a pod runs, not where a replacement may go: reported only when asked', () => {
    expect(pinnedNodes({ nodeName: 'w1' })).toBeUndefined();
    expect(pinsOf({ nodeName: 'w1' }, 'spec.template.spec', true)).toEqual([
      { field: 'spec.template.spec.nodeName', nodes: ['w1'] },
    ]);
  });
});
