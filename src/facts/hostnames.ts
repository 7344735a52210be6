/**
 * The hostnames Talos nodes will take, decided once for `generate` (the per-node patches) and the
 * audit (etcd.member-name-collision, nodes.name-reuse), so both judge the same names.
 *
 * The rule (talos.md §4.8 "Join", blockers.md): a joining Talos control plane removes any etcd
 * member named like its hostname, and a node registering under the name of a live Node takes over
 * that Node. So no Talos node is named after a live etcd member or Node:
 * - control planes get an explicit name, "talos-<first label of the node they replace>", suffixed
 *   "-2", "-3"… until it is free;
 * - workers keep Talos's generated name (HostnameConfig `auto: stable`, "talos-…" from the machine
 *   id), which ferry cannot know in advance: only a Node already named "talos-…" can meet one;
 * - with Cluster API, every node is named after its infrastructure machine: "<template>-<5
 *   random characters>" (hostname.source InfrastructureName), ferry picks only the template names.
 */
import type { SourceRef } from '../snapshot/model.js';
import type { Facts } from './model.js';

export const HOSTNAME_PREFIX = 'talos-';

/** Names no Talos node may take while the migration runs (lower-cased), with where they come from. */
export interface ReservedNames {
  /** lower-cased name → the live object that holds it. */
  names: Map<string, { name: string; holder: 'etcd member' | 'Node' }>;
  sources: SourceRef[];
  /** False when the etcd member list is unknown: only Node names are reserved. */
  membersKnown: boolean;
}

/** Every etcd member name (when known) and every Node name (control planes and workers). */
export function reservedNames(facts: Facts): ReservedNames {
  const names: ReservedNames['names'] = new Map();
  const members = facts.etcd.members.value;
  for (const m of members ?? [])
    if (m.name) names.set(m.name.toLowerCase(), { name: m.name, holder: 'etcd member' });
  for (const n of [...(facts.nodes.controlPlane.value ?? []), ...(facts.nodes.workers.value ?? [])]) {
    const k = n.name.toLowerCase();
    if (!names.has(k)) names.set(k, { name: n.name, holder: 'Node' });
  }
  return {
    names,
    sources: [
      ...facts.etcd.members.provenance,
      ...facts.nodes.controlPlane.provenance,
      ...facts.nodes.workers.provenance,
    ],
    membersKnown: members !== undefined,
  };
}

/** The Talos hostname for the control plane replacing `oldName`: "talos-<old>", suffixed until unused. */
export function replacementHostname(
  oldName: string,
  reserved: ReadonlySet<string>,
  taken: Set<string>,
): string {
  const base = `${HOSTNAME_PREFIX}${firstLabel(oldName)}`.slice(0, 60).replace(/-+$/, '');
  let candidate = base;
  for (let i = 2; reserved.has(candidate) || taken.has(candidate); i++) candidate = `${base}-${i}`;
  taken.add(candidate);
  return candidate;
}

export interface PlannedHostname {
  /** The explicit Talos hostname. */
  hostname: string;
  /** The kubeadm control plane it replaces. */
  replaces: string;
}

/** The explicit hostnames of the Talos control planes, one per kubeadm control plane, in order. */
export function planControlPlaneHostnames(
  controlPlanes: readonly { name: string }[],
  reserved: ReadonlySet<string>,
): PlannedHostname[] {
  const taken = new Set<string>();
  return controlPlanes.map((cp) => ({
    hostname: replacementHostname(cp.name, reserved, taken),
    replaces: cp.name,
  }));
}

/** True when a name may be given to a Talos node under the rule. */
export function hostnameAllowed(name: string, reserved: ReadonlySet<string>): boolean {
  return !reserved.has(name.toLowerCase()) && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name);
}

/**
 * A live name a Talos-generated worker hostname ("talos-…", HostnameConfig auto: stable) could
 * equal: ferry cannot plan those names, so a Node already carrying the prefix is the only clash.
 */
export function mayEqualStableHostname(name: string): boolean {
  return name.toLowerCase().startsWith(HOSTNAME_PREFIX);
}

/** Names of the Cluster API objects ferry generates for a cluster (generate/capi uses them). */
export function capiNames(cluster: string) {
  return {
    tcp: `${cluster}-control-plane`,
    md: `${cluster}-workers`,
    cpTemplate: `${cluster}-control-plane`,
    workerTemplate: `${cluster}-worker`,
    talosConfigTemplate: `${cluster}-workers`,
    /** The objects of one worker pool; "" is the default pool (the names above). */
    pool(group: string) {
      const suffix = group === '' ? '' : `-${group}`;
      return {
        md: `${cluster}-workers${suffix}`,
        workerTemplate: `${cluster}-worker${suffix}`,
        talosConfigTemplate: `${cluster}-workers${suffix}`,
      };
    },
  };
}

/** A machine template's name and the role of the nodes Cluster API creates from it. */
export interface CapiTemplate {
  role: 'control plane' | 'worker';
  name: string;
}

/**
 * The names Cluster API gives the nodes it creates from ferry's templates: the infrastructure
 * machine name, "<template>-" + 5 random lower-case alphanumerics (CAPI's name generator).
 * `pools`: the worker groups that get their own template ("<cluster>-worker-<group>");
 * `templates`: further templates, e.g. those a management cluster's objects already reference.
 */
export function capiHostnamePatterns(
  cluster: string,
  pools: readonly string[] = [],
  templates: readonly CapiTemplate[] = [],
): { role: 'control plane' | 'worker'; prefix: string; re: RegExp }[] {
  const n = capiNames(cluster);
  const pattern = (t: CapiTemplate) => ({
    role: t.role,
    prefix: `${t.name}-`,
    re: new RegExp(`^${t.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[a-z0-9]{5}$`, 'i'),
  });
  const all: CapiTemplate[] = [
    { role: 'control plane', name: n.cpTemplate },
    { role: 'worker', name: n.workerTemplate },
    ...pools.map((g): CapiTemplate => ({ role: 'worker', name: n.pool(g).workerTemplate })),
    ...templates,
  ];
  const seen = new Set<string>();
  return all.filter((t) => !seen.has(t.name) && seen.add(t.name)).map(pattern);
}

function firstLabel(name: string): string {
  return (name.toLowerCase().split('.')[0] ?? name).replace(/[^a-z0-9-]/g, '-');
}
