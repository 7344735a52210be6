/**
 * Groups of snapshot inputs rules read together (Rule.reads). A rule that walks every pod template
 * (SnapshotIndex.workloads, topControllerOf) reads the pods and every controller kind.
 */
import type { SnapshotInput } from '../snapshot/model.js';

export const WORKLOADS = [
  'pods',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
] as const satisfies readonly SnapshotInput[];

export const CILIUM_CONFIG = 'configmap kube-system/cilium-config' satisfies SnapshotInput;
export const KUBE_PROXY_CONFIG = 'configmap kube-system/kube-proxy' satisfies SnapshotInput;
export const KUBELET_CONFIG = 'configmap kube-system/kubelet-config' satisfies SnapshotInput;
export const COREDNS_CONFIG = 'configmap kube-system/coredns' satisfies SnapshotInput;
export const CLUSTER_INFO = 'configmap kube-public/cluster-info' satisfies SnapshotInput;
