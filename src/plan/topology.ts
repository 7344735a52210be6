/**
 * The plan swaps control planes by adding a Talos etcd member beside each kubeadm one and removing
 * the kubeadm member of that node: it needs etcd stacked on the control planes. An external etcd has
 * no member there, and Talos can neither use nor join it (etcd.external; talos.md §4.1, §4.8, §10.8),
 * so no plan exists: exit 2 naming the topology, whatever the audit's blockers or suppressions say.
 * `ferry generate` refuses the same way: its machine configs would start a Talos etcd of their own
 * beside the external one, so a kit for this cluster can only do harm.
 */
import { inputError, type Location } from '../errors.js';
import type { Facts } from '../facts/model.js';
import { describeSource, type SourceRef } from '../snapshot/model.js';

export function refuseExternalEtcd(facts: Facts, command: 'plan' | 'generate' = 'plan'): void {
  const topology = facts.etcd.topology;
  if (topology.value?.mode !== 'external') return;
  const what =
    command === 'plan'
      ? 'ferry plans control-plane swaps for stacked etcd only, where each kubeadm control plane runs the member a Talos member replaces'
      : 'ferry generates Talos control planes for stacked etcd only: each runs an etcd member that joins the kubeadm members, and with no member on the kubeadm control planes it would start an etcd cluster of its own; nothing was written';
  throw inputError(
    `etcd topology is external (the apiservers use ${topology.value.servers.join(', ') || 'etcd off their nodes'}): ${what} (etcd.external)`,
    locationOf(topology.provenance[0]),
    `move etcd onto the kubeadm control planes first (the etcd.external finding of \`ferry audit\` says how), take a new snapshot and run ferry ${command} again; Talos control planes cannot keep using an external etcd`,
  );
}

/** Where the believed topology was read: the first --etcd-servers flag (its manifest), or kubeadm-config. */
function locationOf(ref: SourceRef | undefined): Location {
  if (ref === undefined) return { object: 'etcd topology' };
  switch (ref.kind) {
    case 'flag':
      // A manifest file gives file and line; a mirror pod is named in the object.
      return ref.from.kind === 'file'
        ? {
            ...fileLocation(ref.from),
            object: `${ref.component}${ref.node ? `@${ref.node}` : ''} --${ref.flag}`,
          }
        : { object: describeSource(ref) };
    case 'file':
      return { ...fileLocation(ref), ...(ref.field ? { field: ref.field } : {}) };
    default:
      return { object: describeSource(ref) };
  }
}

function fileLocation(ref: { path: string; line?: number }): Location {
  return ref.line === undefined ? { file: ref.path } : { file: ref.path, line: ref.line };
}
