/**
 * The node labels a Talos machine config gives its Node (talos.md: `machine.nodeLabels`, or the
 * `labels` of a KubeNodeConfig document in multi-document configs), so that a lab replacement
 * registers with the labels the kit carried over from the node it replaces (a pool label a
 * nodeSelector needs, say). Pure.
 */
import { parseAllDocuments } from 'yaml';
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
