/**
 * The node labels a Talos machine config gives its Node (talos.md: `machine.nodeLabels`, or the
 * `labels` of a KubeNodeConfig document in multi-document configs), so that a lab replacement
 * registers with the labels the kit carried over from the node it replaces (a pool label a
 * nodeSelector needs, say). Pure.
 */
import { parseAllDocuments } from 'yaml';
import { CONTROL_PLANE_TAINT } from '../../knowledge/talos-config.js';
import { isPlainObject } from '../apiserver/object.js';

export function machineConfigNodeLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const doc of parseAllDocuments(text)) {
    const d: unknown = doc.toJS();
    if (!isPlainObject(d)) continue;
    const machine = d.machine;
    const labels = isPlainObject(machine)
      ? machine.nodeLabels
      : d.kind === 'KubeNodeConfig'
        ? d.labels
        : undefined;
    if (!isPlainObject(labels)) continue;
    for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/**
 * Whether a control plane's machine config lets workloads schedule on it, as the kit carries it
 * from untainted kubeadm control planes: v1alpha1 `cluster.allowSchedulingOnControlPlanes`, or a
 * KubeNodeConfig that deletes the control-plane taint (`$patch: delete`). Undefined when the
 * config does not say (Talos then taints its control planes).
 */
export function machineConfigAllowsScheduling(text: string): boolean | undefined {
  for (const doc of parseAllDocuments(text)) {
    const d: unknown = doc.toJS();
    if (!isPlainObject(d)) continue;
    if (isPlainObject(d.cluster) && typeof d.cluster.allowSchedulingOnControlPlanes === 'boolean')
      return d.cluster.allowSchedulingOnControlPlanes;
    if (d.kind === 'KubeNodeConfig' && isPlainObject(d.taints)) {
      const t = d.taints[CONTROL_PLANE_TAINT];
      if (isPlainObject(t) && t.$patch === 'delete') return true;
    }
  }
  return undefined;
}
