/**
 * The node labels and taints a Talos machine config gives its Node (talos.md: `machine.nodeLabels`
 * / `nodeTaints`, or the `labels` / `taints` of a KubeNodeConfig document in multi-document
 * configs), so that a lab replacement registers with what the kit carried over from the node it
 * replaces (a pool label a nodeSelector needs, a pool's taint). Pure.
 */
import { parseAllDocuments } from 'yaml';
import { CONTROL_PLANE_TAINT } from '../../knowledge/talos-config.js';
import { isPlainObject } from '../apiserver/object.js';
import type { Taint } from '../nodes/schedule.js';

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
 * The taints a machine config gives its Node: `machine.nodeTaints`, or a KubeNodeConfig's `taints`;
 * Talos writes a taint as `value:Effect` or `Effect` (a `$patch: delete` entry is no taint).
 */
export function machineConfigNodeTaints(text: string): Taint[] {
  const out: Taint[] = [];
  for (const doc of parseAllDocuments(text)) {
    const d: unknown = doc.toJS();
    if (!isPlainObject(d)) continue;
    const map = isPlainObject(d.machine)
      ? d.machine.nodeTaints
      : d.kind === 'KubeNodeConfig'
        ? d.taints
        : undefined;
    if (!isPlainObject(map)) continue;
    for (const [key, v] of Object.entries(map)) {
      if (typeof v !== 'string') continue;
      const i = v.lastIndexOf(':');
      out.push(i < 0 ? { key, effect: v } : { key, value: v.slice(0, i), effect: v.slice(i + 1) });
    }
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
