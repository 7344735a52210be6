import { describe, expect, it } from 'vitest';
import { audit, contextOf, merge, node, pdb, workload } from './testing-workload.js';
import { pdbOverlap } from './workload-pdb-overlap.js';

const spec = { containers: [{ name: 'c', image: 'c:1' }] };
const web = workload('Deployment', 'shop', 'web', spec, {
  pods: ['w1', 'w2'],
  labels: { app: 'web', tier: 'front' },
});
const agents = workload('DaemonSet', 'shop', 'agent', spec, {
  pods: ['w1'],
  labels: { app: 'agent', tier: 'front' },
});
const nodes = { nodes: [node('w1'), node('w2')] };
const byApp = pdb('shop', 'web', { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } });
const byTier = pdb('shop', 'front', { minAvailable: 1, selector: { matchLabels: { tier: 'front' } } });

describe('workload.pdb-overlap', () => {
  it('reports two budgets over the same pods as a blocker, naming both, the pods and their nodes', () => {
    const fs = audit(contextOf(merge(nodes, web.objects, { poddisruptionbudgets: [byApp, byTier] })), [
      pdbOverlap,
    ]);
    expect(fs).toHaveLength(1);
    const f = fs[0]!;
    expect(f.severity).toBe('blocker');
    expect(f.message).toContain('PodDisruptionBudgets shop/front and shop/web select the same 2 pod(s)');
    expect(f.message).toContain('on w1');
    expect(f.message).toContain('the drain of w1, w2 cannot finish');
    expect(f.evidence.map((e) => (e.kind === 'object' ? e.field : e.kind))).toEqual([
      'spec.selector',
      'spec.selector',
    ]);
    expect(f.remediation).toContain('one budget');
  });

  it('is quiet for one budget per pod, and for DaemonSet pods (drain does not evict them)', () => {
    const other = pdb('shop', 'agent', { minAvailable: 1, selector: { matchLabels: { app: 'agent' } } });
    expect(
      audit(contextOf(merge(nodes, web.objects, agents.objects, { poddisruptionbudgets: [byApp, other] })), [
        pdbOverlap,
      ]),
    ).toEqual([]);
    // Only the DaemonSet's pods are under two budgets here.
    expect(
      audit(contextOf(merge(nodes, agents.objects, { poddisruptionbudgets: [byTier, other] })), [pdbOverlap]),
    ).toEqual([]);
  });
});
