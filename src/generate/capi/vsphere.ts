/**
 * CAPV v1.16 objects (api v1beta2, mgmt.md §5): a VSphereClusterIdentity for the credentials
 * Secret in capv-system (when given), the VSphereCluster on the existing endpoint, an
 * InClusterIPPool when the VMs get static addresses (CAPV claims them through IPAM), and
 * VSphereMachineTemplates cloned from the Talos vmware template.
 */

import { CLUSTER_NAME_LABEL } from '../../capi/view.js';
import type { InfraObjects, MachineSize } from './infra.js';

export const VSPHERE_API = 'infrastructure.cluster.x-k8s.io/v1beta2';
export const IPAM_API = 'ipam.cluster.x-k8s.io/v1alpha2';

export interface VsphereInputs {
  server: string;
  thumbprint?: string;
  credentialsSecret?: string;
  datacenter: string;
  datastore?: string;
  folder?: string;
  resourcePool?: string;
  template: string;
  network: string;
  /** Static addresses; absent: DHCP. */
  ipPool?: { addresses: string[]; prefix: number; gateway: string; dnsServers: string[] };
}

export function vsphereInfra(
  p: VsphereInputs,
  cluster: string,
  namespace: string,
  endpoint: { host: string; port: number },
): InfraObjects {
  const poolName = `${cluster}-vms`;
  const optional = {
    ...(p.thumbprint ? { thumbprint: p.thumbprint } : {}),
  };
  return {
    kind: 'vsphere',
    apiVersion: VSPHERE_API,
    clusterKind: 'VSphereCluster',
    templateKind: 'VSphereMachineTemplate',
    endpoint,
    clusterObjects: (meta) => {
      const out: Record<string, unknown>[] = [];
      if (p.credentialsSecret)
        out.push({
          apiVersion: VSPHERE_API,
          kind: 'VSphereClusterIdentity',
          // Cluster-scoped: the Secret lives in capv-system; only this cluster's namespace may use it.
          metadata: { name: cluster, labels: { [CLUSTER_NAME_LABEL]: cluster } },
          spec: {
            secretName: p.credentialsSecret,
            allowedNamespaces: { selector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } },
          },
        });
      out.push({
        apiVersion: VSPHERE_API,
        kind: 'VSphereCluster',
        metadata: meta(cluster),
        spec: {
          server: p.server,
          ...optional,
          controlPlaneEndpoint: endpoint,
          ...(p.credentialsSecret ? { identityRef: { kind: 'VSphereClusterIdentity', name: cluster } } : {}),
        },
      });
      if (p.ipPool)
        out.push({
          apiVersion: IPAM_API,
          kind: 'InClusterIPPool',
          metadata: meta(poolName),
          spec: { addresses: [...p.ipPool.addresses], prefix: p.ipPool.prefix, gateway: p.ipPool.gateway },
        });
      return out;
    },
    machineTemplate: (meta, size: MachineSize) => ({
      apiVersion: VSPHERE_API,
      kind: 'VSphereMachineTemplate',
      metadata: meta,
      spec: {
        template: {
          spec: {
            server: p.server,
            ...optional,
            datacenter: p.datacenter,
            ...(p.datastore ? { datastore: p.datastore } : {}),
            ...(p.folder ? { folder: p.folder } : {}),
            ...(p.resourcePool ? { resourcePool: p.resourcePool } : {}),
            template: p.template,
            // A linked clone needs a snapshot and cannot grow its disk (mgmt.md §5).
            cloneMode: 'fullClone',
            os: 'Linux',
            numCPUs: size.cores,
            memoryMiB: size.memoryMiB,
            diskGiB: size.diskGb,
            // CAPV sets no disk.enableUUID; the vSphere CSI driver needs it (mgmt.md §5).
            customVMXKeys: { 'disk.enableUUID': 'TRUE' },
            network: {
              devices: [
                p.ipPool
                  ? {
                      networkName: p.network,
                      addressesFromPools: [
                        { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: poolName },
                      ],
                      nameservers: [...p.ipPool.dnsServers],
                    }
                  : { networkName: p.network, dhcp4: true },
              ],
            },
          },
        },
      },
    }),
  };
}
