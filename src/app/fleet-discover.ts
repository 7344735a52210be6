/**
 * The fleet's members, the management clusters' Clusters among them: each management entry's
 * Clusters are listed (side by side); one that cannot be listed becomes a member that says why, so
 * a fleet command reports it as unreachable and never counts it as a fleet without those clusters.
 */
import { listCapiClusters } from '../adapters/capi/fleet-clusters.js';
import { createKubeClient } from '../adapters/kube/client.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import type { Fleet, FleetCluster, FleetManagement } from '../fleet/config.js';
import { type FoundCluster, fleetMembers, foundClusters } from '../fleet/discover.js';
import { reasonOf } from './fleet-audit.js';

export async function discoverFleet(fleet: Fleet, progress: (line: string) => void): Promise<FleetCluster[]> {
  if (fleet.management.length === 0) return fleet.clusters;
  const discovered = await Promise.all(
    fleet.management.map(async (m) => {
      try {
        const clusters = await listOne(m);
        progress(`${m.name}: ${clusters.length} Cluster(s) found`);
        return { kind: 'found' as const, clusters };
      } catch (err) {
        const reason = reasonOf(err);
        progress(`${m.name}: cannot list its Clusters: ${reason}`);
        return { kind: 'unlisted' as const, management: m, reason };
      }
    }),
  );
  return fleetMembers(fleet.clusters, discovered);
}

async function listOne(m: FleetManagement): Promise<FoundCluster[]> {
  const client = createKubeClient(loadKubeconfig(m.kubeconfig.path, m.kubeconfig.context), {
    connectTimeoutMs: 5_000,
  });
  const listed = await listCapiClusters(client, {
    ...(m.namespace !== undefined && { namespace: m.namespace }),
    ...(m.selector !== undefined && { selector: m.selector }),
  });
  return foundClusters(m, listed);
}
