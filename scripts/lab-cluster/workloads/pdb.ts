/** PodDisruptionBudgets with the status the disruption controller computes for healthy pods. */
import type { K8s } from '../objects.js';
import { plus } from '../seed.js';
import type { Workloads } from './workloads.js';

export type Budget = { minAvailable: number } | { maxUnavailable: number };

export interface PdbDef {
  namespace: string;
  name: string;
  selector: Record<string, string>;
  budget: Budget;
  /** Pods the selector matches, all healthy. */
  expected: number;
  created: string;
}

export function addPdb(w: Workloads, d: PdbDef): K8s {
  const desired = 'minAvailable' in d.budget ? d.budget.minAvailable : d.expected - d.budget.maxUnavailable;
  const allowed = Math.max(0, d.expected - desired);
  const pdb: K8s = {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: w.alloc.meta('PodDisruptionBudget', d.name, d.namespace, d.created, { generation: 1 }),
    spec: { ...d.budget, selector: { matchLabels: d.selector } },
    status: {
      conditions: [
        {
          lastTransitionTime: plus(d.created, 45),
          message: '',
          observedGeneration: 1,
          reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
          status: allowed > 0 ? 'True' : 'False',
          type: 'DisruptionAllowed',
        },
      ],
      currentHealthy: d.expected,
      desiredHealthy: desired,
      disruptionsAllowed: allowed,
      expectedPods: d.expected,
      observedGeneration: 1,
    },
  };
  w.pdbs.push(pdb);
  return pdb;
}
