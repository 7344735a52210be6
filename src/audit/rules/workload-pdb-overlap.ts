/**
 * workload.pdb-overlap: a pod that two PodDisruptionBudgets select cannot be evicted at all — the
 * eviction subresource answers HTTP 500 "This pod has more than one PodDisruptionBudget, which the
 * eviction subresource does not support." (test-infra.md, the real kube-apiserver's eviction
 * behaviour). Every drain of its node stops there, so it is found before a date is set.
 */
import type { KubeObject } from '../../snapshot/model.js';
import type { Rule, RuleFinding } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import type { IndexedPdb } from '../snapshot-index.js';
import { pdbModel } from './workload-pdb.js';
import { isFinished, isMirrorPod, listSome, objectEvidence } from './workload-pods.js';

const pdbName = (b: IndexedPdb) => `${b.namespace}/${b.pdb.metadata.name}`;

/** Drain leaves DaemonSet pods alone: their budgets never meet an eviction. */
function drainEvicts(pod: KubeObject): boolean {
  if (isMirrorPod(pod) || isFinished(pod)) return false;
  return !(pod.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller !== false);
}

export const pdbOverlap: Rule = {
  id: 'workload.pdb-overlap',
  family: 'workload',
  severity: 'blocker',
  title: 'Pods selected by more than one PodDisruptionBudget',
  inputs: ['api'],
  reads: [...WORKLOADS, 'poddisruptionbudgets'],
  description:
    'The Eviction API refuses (HTTP 500) to evict a pod that more than one PodDisruptionBudget selects, whatever the budgets allow: the drain of every node running such a pod cannot finish.',
  docs: 'docs/rules.md#workload.pdb-overlap',
  check(ctx) {
    const model = pdbModel(ctx.index);
    // One finding per set of overlapping budgets, with the pods they share.
    const groups = new Map<string, { pdbs: IndexedPdb[]; pods: KubeObject[] }>();
    for (const b of model.all) {
      for (const pod of model.podsOf(b)) {
        if (!drainEvicts(pod)) continue;
        const pdbs = model.pdbsFor(b.namespace, pod.metadata.labels);
        if (pdbs.length < 2 || pdbs[0] !== b) continue; // counted once, under its first budget
        const key = pdbs.map(pdbName).sort().join(' ');
        const g = groups.get(key) ?? {
          pdbs: [...pdbs].sort((x, y) => pdbName(x).localeCompare(pdbName(y))),
          pods: [],
        };
        groups.set(key, g);
        g.pods.push(pod);
      }
    }
    const out: RuleFinding[] = [];
    for (const g of groups.values()) {
      const names = g.pdbs.map(pdbName);
      const pods = g.pods.map((p) => `${p.metadata.name}${p.spec?.nodeName ? ` on ${p.spec.nodeName}` : ''}`);
      const nodes = [
        ...new Set(g.pods.flatMap((p) => (p.spec?.nodeName ? [p.spec.nodeName as string] : []))),
      ].sort();
      out.push({
        message: `PodDisruptionBudgets ${names.join(' and ')} select the same ${g.pods.length} pod(s) (${listSome(pods)}): the Eviction API refuses to evict them (HTTP 500, more than one PodDisruptionBudget), so ${nodes.length ? `the drain of ${listSome(nodes)} cannot finish` : 'no drain can move them'}.`,
        evidence: g.pdbs.map((b) =>
          objectEvidence(b.pdb, 'spec.selector', {
            observed: JSON.stringify(b.pdb.spec?.selector ?? null),
            note: `also selected by ${names.filter((n) => n !== pdbName(b)).join(', ')}`,
          }),
        ),
        remediation: `Change the selectors of ${names.join(' and ')} so that each pod is selected by one budget (merge them, or narrow one with a label only its own pods carry); ferry's drain stops at these pods otherwise.`,
        field: 'spec.selector',
      });
    }
    return out;
  },
};
