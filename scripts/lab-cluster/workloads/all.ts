/** Every workload of the dump, built in the order the cluster created them. */
import type { Allocator } from '../allocator.js';
import type { K8s } from '../objects.js';
import { addApps } from './apps.js';
import { addCiliumAgent } from './cilium-agent.js';
import { addCiliumOperator } from './cilium-operator.js';
import { addCinderCsi } from './cinder-csi.js';
import { addCoreDns } from './coredns.js';
import { addDbBackup } from './db-backup.js';
import { addMirrorPods } from './mirror-pods.js';
import { addNetshoot } from './netshoot.js';
import { addPostgres } from './postgres.js';
import { emptyWorkloads, type Workloads } from './workloads.js';

/** `nodes` are the Node objects by name (mirror pods are owned by their Node). */
export function buildWorkloads(alloc: Allocator, nodes: Map<string, K8s>): Workloads {
  const w = emptyWorkloads(alloc);
  // The order fixes resourceVersions, pod IPs and list order in the output.
  addMirrorPods(w, nodes);
  addCoreDns(w);
  addCiliumAgent(w);
  addCiliumOperator(w);
  addCinderCsi(w);
  addApps(w);
  addPostgres(w);
  addDbBackup(w);
  addNetshoot(w);
  return w;
}
