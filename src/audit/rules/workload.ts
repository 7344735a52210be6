/**
 * The `workload` family (blockers.md "Workloads and storage"): what pod templates and volumes
 * expect of a node, and what blocks or hurts the drains a migration performs. The rules live in
 * topic files (hostPath, host needs, drains); this module assembles them.
 */
import type { Rule } from '../rule.js';
import { nodePinned, pdbBlocking, pdbMissing, undrainablePods } from './workload-drain.js';
import { csiDriver, hostBinaries, kernelModules } from './workload-host.js';
import { flexvolume, hostpathAbsent, hostpathReadonlyRoot } from './workload-hostpath.js';
import { pdbOverlap } from './workload-pdb-overlap.js';

export { nodePinned, pdbBlocking, pdbMissing, undrainablePods } from './workload-drain.js';
export { csiDriver, hostBinaries, kernelModules } from './workload-host.js';
export { flexvolume, hostpathAbsent, hostpathReadonlyRoot } from './workload-hostpath.js';

export const WORKLOAD_RULES: Rule[] = [
  hostpathReadonlyRoot,
  hostpathAbsent,
  flexvolume,
  csiDriver,
  kernelModules,
  hostBinaries,
  pdbBlocking,
  pdbOverlap,
  pdbMissing,
  undrainablePods,
  nodePinned,
];
