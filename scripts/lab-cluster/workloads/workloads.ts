/** The workload objects of the dump, one list per output file, and the allocator that numbers them. */
import type { Allocator } from '../allocator.js';
import type { K8s } from '../objects.js';

/**
 * Objects are appended in creation order: resourceVersions and pod IPs come from `alloc` as they are
 * built, so the order of the add* calls is part of the output.
 */
export interface Workloads {
  alloc: Allocator;
  deployments: K8s[];
  replicasets: K8s[];
  daemonsets: K8s[];
  statefulsets: K8s[];
  jobs: K8s[];
  cronjobs: K8s[];
  pods: K8s[];
  pdbs: K8s[];
}

export function emptyWorkloads(alloc: Allocator): Workloads {
  return {
    alloc,
    deployments: [],
    replicasets: [],
    daemonsets: [],
    statefulsets: [],
    jobs: [],
    cronjobs: [],
    pods: [],
    pdbs: [],
  };
}
