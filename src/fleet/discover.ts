/**
 * The fleet members a management cluster adds: its Cluster API Clusters, named and labelled. Pure:
 * the listing is app/fleet-discover.ts's.
 *
 * A Cluster keeps its own name when that is free in the fleet; two Clusters of one name (in two
 * namespaces, or on two management clusters) or a name the file already uses get their namespace,
 * then their management cluster's name, in front, so every member has one directory under OUT.
 */
import type { KubeObject } from '../snapshot/model.js';
import type { FleetCluster, FleetManagement } from './config.js';

/** A Cluster found on a management cluster. */
export interface FoundCluster {
  management: FleetManagement;
  namespace: string;
  name: string;
  labels: Record<string, string>;
}

export function foundClusters(management: FleetManagement, listed: readonly KubeObject[]): FoundCluster[] {
  return listed
    .map((c) => ({
      management,
      namespace: c.metadata.namespace ?? 'default',
      name: c.metadata.name,
      labels: c.metadata.labels ?? {},
    }))
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The fleet's members: the file's clusters first, then each management cluster's (in the file's
 * order), or, for a management cluster whose Clusters could not be listed, one member saying so.
 */
export function fleetMembers(
  listed: readonly FleetCluster[],
  discovered: readonly (
    | { kind: 'found'; clusters: FoundCluster[] }
    | { kind: 'unlisted'; management: FleetManagement; reason: string }
  )[],
): FleetCluster[] {
  const taken = new Set(listed.map((c) => c.name));
  for (const d of discovered) if (d.kind === 'unlisted') taken.add(d.management.name);
  const all = discovered.flatMap((d) => (d.kind === 'found' ? d.clusters : []));
  const count = new Map<string, number>();
  for (const f of all) count.set(f.name, (count.get(f.name) ?? 0) + 1);
  const members: FleetCluster[] = [...listed];
  for (const d of discovered) {
    if (d.kind === 'unlisted') {
      members.push({
        name: d.management.name,
        source: { kind: 'unlisted', management: d.management, reason: d.reason },
        labels: d.management.labels,
      });
      continue;
    }
    for (const f of d.clusters) {
      const name = nameFor(f, count.get(f.name)! > 1, taken);
      taken.add(name);
      members.push({
        name,
        source: { kind: 'capi', management: f.management, namespace: f.namespace, cluster: f.name },
        labels: { ...f.management.labels, ...f.labels },
      });
    }
  }
  return members;
}

function nameFor(f: FoundCluster, shared: boolean, taken: ReadonlySet<string>): string {
  const candidates = [
    ...(shared ? [] : [f.name]),
    `${f.namespace}-${f.name}`,
    `${f.management.name}-${f.namespace}-${f.name}`,
  ];
  const free = candidates.find((n) => DNS_LABEL.test(n) && !taken.has(n));
  if (free) return free;
  // Too long or still taken: a numbered name that is both a DNS label and free.
  const stem = f.name.slice(0, 50).replace(/-+$/, '');
  for (let i = 2; ; i++) if (!taken.has(`${stem}-${i}`)) return `${stem}-${i}`;
}
