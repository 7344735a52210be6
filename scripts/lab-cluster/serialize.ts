/** Serialization as kubectl and kubeadm write it. */
import { stringify } from 'yaml';
import type { K8s } from './objects.js';

/** Go's YAML marshaller sorts keys and does not indent sequences under their key. */
export function toYaml(doc: unknown): string {
  // kubectl never writes anchors: shared objects are written out in full.
  return stringify(doc, {
    sortMapEntries: true,
    indentSeq: false,
    lineWidth: 0,
    aliasDuplicateObjects: false,
  });
}

export function kubectlYamlList(items: K8s[]): string {
  return toYaml({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } });
}

export function kubectlJsonList(items: K8s[]): string {
  return `${JSON.stringify({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }, null, 4)}\n`;
}

export function multiDoc(items: K8s[]): string {
  return items.map((i) => `---\n${toYaml(i)}`).join('');
}
