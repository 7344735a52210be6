/**
 * One control plane at a time (capi.md §2, recipe (c)): the next control-plane Machine is added
 * only once every earlier one has its Node. Pure.
 */
import type { KubeObject } from '../snapshot/model.js';
import { nodeRefName } from './view.js';

/** Names of the control-plane Machines that have no nodeRef yet, oldest first. */
export function withoutNode(machines: KubeObject[]): string[] {
  return machines
    .filter((m) => nodeRefName(m) === undefined)
    .sort((a, b) =>
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
    )
    .map((m) => m.metadata.name);
}
