/**
 * The labels and taints a Talos machine made from a Cluster API template gives its Node: what its
 * strategic patches set in `machine.nodeLabels` / `machine.nodeTaints` (or a KubeNodeConfig's
 * `labels` / `taints`). Talos writes a taint as `value:Effect` or `Effect`. Pure.
 */
import { parseAllDocuments } from 'yaml';
import { isPlainObject } from '../apiserver/object.js';
import type { Taint } from '../nodes/schedule.js';
import { machineConfigNodeLabels } from '../provisioner/machine-labels.js';

export type NodeShape = { labels: Record<string, string>; taints: Taint[] };

function taintsOf(text: string): Taint[] {
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

/** Labels and taints of a list of strategic patches (later patches win a label key). */
export function patchesNodeShape(patches: readonly string[]): NodeShape {
  const labels: Record<string, string> = {};
  const taints: Taint[] = [];
  for (const p of patches) {
    Object.assign(labels, machineConfigNodeLabels(p));
    for (const t of taintsOf(p)) {
      const i = taints.findIndex((x) => x.key === t.key && x.effect === t.effect);
      if (i >= 0) taints[i] = t;
      else taints.push(t);
    }
  }
  return { labels, taints };
}
