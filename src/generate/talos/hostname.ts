/**
 * The hostname rule for the Talos generator: a joining Talos control plane removes any etcd member
 * named like its own hostname (talos.md §4.8 "Join", §10.7), and a Node name clash breaks the old
 * node (blockers.md etcd.member-name-collision, nodes.name-reuse). The names themselves come from
 * src/facts/hostnames.ts, which the audit uses too, so generate and audit judge the same names.
 */

import {
  hostnameAllowed as allowedUnder,
  replacementHostname as nextName,
  reservedNames,
} from '../../facts/hostnames.js';
import type { Facts } from '../../facts/model.js';
import { type Sourced, sourced } from '../../facts/sourced.js';
import type { SourceRef } from '../../snapshot/model.js';
import type { MissingInput } from '../artifact.js';
import { need } from '../context.js';

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
  if (!members) return undefined;
  const reserved = reservedNames(facts);
  const forbidden = new Set(reserved.names.keys());
  const names = [...forbidden].sort();
  return {
    forbidden,
    forbiddenSources: reserved.sources,
    rule: sourced(
      `never one of: ${names.join(', ')}`,
      reserved.sources,
      'hostname rule: a joining Talos control plane removes the etcd member named like itself (etcd.member-name-collision)',
    ),
  };
}

/** The Talos hostname for the node replacing `oldName`: "talos-<old>", suffixed until unused. */
export function replacementHostname(oldName: string, plan: HostnamePlan, taken: Set<string>): string {
  return nextName(oldName, plan.forbidden, taken);
}

/** True when a name may be given to a Talos node under the rule. */
export function hostnameAllowed(name: string, plan: HostnamePlan): boolean {
  return allowedUnder(name, plan.forbidden);
}
