/**
 * The hostname rule: a joining Talos control plane removes any etcd member named like its own
 * hostname (talos.md §4.8 "Join", §10.7), and a Node name clash breaks the old node
 * (blockers.md etcd.member-name-collision, nodes.name-reuse). So a Talos node is never named after a
 * live kubeadm etcd member or Node: control planes get an explicit name, workers a Talos stable one.
 */
import type { Facts } from '../../facts/model.js';
import type { SourceRef } from '../../snapshot/model.js';
import type { MissingInput } from '../artifact.js';
import { need } from '../context.js';
import { type Sourced, sourced } from './model.js';

export const HOSTNAME_PREFIX = 'talos-';

export interface HostnamePlan {
  /** Names no Talos node may take while the migration runs. */
  forbidden: Set<string>;
  forbiddenSources: SourceRef[];
  rule: Sourced<string>;
}

export function hostnamePlan(facts: Facts, missing: MissingInput[]): HostnamePlan | undefined {
  const members = need(
    facts.etcd.members,
    'a Talos control plane must never take the name of a live etcd member',
    missing,
  );
  const cps = facts.nodes.controlPlane.value ?? [];
  const workers = facts.nodes.workers.value ?? [];
  if (!members) return undefined;
  const forbidden = new Set<string>();
  for (const m of members) forbidden.add(m.name.toLowerCase());
  for (const n of [...cps, ...workers]) forbidden.add(n.name.toLowerCase());
  const sources = [
    ...facts.etcd.members.provenance,
    ...facts.nodes.controlPlane.provenance,
    ...facts.nodes.workers.provenance,
  ];
  const names = [...forbidden].sort();
  return {
    forbidden,
    forbiddenSources: sources,
    rule: sourced(
      `never one of: ${names.join(', ')}`,
      sources,
      'hostname rule: a joining Talos control plane removes the etcd member named like itself (etcd.member-name-collision)',
    ),
  };
}

/** The Talos hostname for the node replacing `oldName`: "talos-<old>", suffixed until unused. */
export function replacementHostname(oldName: string, plan: HostnamePlan, taken: Set<string>): string {
  const base = `${HOSTNAME_PREFIX}${firstLabel(oldName)}`.slice(0, 60).replace(/-+$/, '');
  let candidate = base;
  for (let i = 2; plan.forbidden.has(candidate) || taken.has(candidate); i++) candidate = `${base}-${i}`;
  taken.add(candidate);
  return candidate;
}

/** True when a name may be given to a Talos node under the rule. */
export function hostnameAllowed(name: string, plan: HostnamePlan): boolean {
  return !plan.forbidden.has(name.toLowerCase()) && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name);
}

function firstLabel(name: string): string {
  return (name.toLowerCase().split('.')[0] ?? name).replace(/[^a-z0-9-]/g, '-');
}
