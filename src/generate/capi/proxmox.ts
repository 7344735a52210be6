/**
 * CAPMOX v0.9 objects (capi.md §7): a ProxmoxCluster on the existing endpoint with the VM
 * addresses CAPMOX may hand out, and ProxmoxMachineTemplates cloned from the Talos template.
 */
import type { InfraObjects, MachineSize } from './infra.js';

export const PROXMOX_API = 'infrastructure.cluster.x-k8s.io/v1alpha2';

export interface ProxmoxInputs {
  sourceNode: string;
  templateId: number;
  bridge: string;
  vlan?: number;
  ipv4Addresses: string[];
  ipv4Prefix: number;
  ipv4Gateway: string;
  dnsServers: string[];
  allowedNodes?: string[];
  credentialsSecret?: string;
  bootDisk: string;
  storage?: string;
}

export function proxmoxInfra(
  p: ProxmoxInputs,
  cluster: string,
  namespace: string,
  endpoint: { host: string; port: number },
): InfraObjects {
  return {
    kind: 'proxmox',
    apiVersion: PROXMOX_API,
    clusterKind: 'ProxmoxCluster',
    templateKind: 'ProxmoxMachineTemplate',
    endpoint,
    clusterObjects: (meta) => [
      {
        apiVersion: PROXMOX_API,
        kind: 'ProxmoxCluster',
        metadata: meta(cluster),
        spec: {
          controlPlaneEndpoint: endpoint,
          ipv4Config: { addresses: [...p.ipv4Addresses], prefix: p.ipv4Prefix, gateway: p.ipv4Gateway },
          dnsServers: [...p.dnsServers],
          ...(p.allowedNodes ? { allowedNodes: [...p.allowedNodes] } : {}),
          ...(p.credentialsSecret ? { credentialsRef: { name: p.credentialsSecret, namespace } } : {}),
        },
      },
    ],
    machineTemplate: (meta, size: MachineSize) => ({
      apiVersion: PROXMOX_API,
      kind: 'ProxmoxMachineTemplate',
      metadata: meta,
      spec: {
        template: {
          spec: {
            sourceNode: p.sourceNode,
            templateID: p.templateId,
            full: true,
            ...(p.storage ? { storage: p.storage } : {}),
            ...(p.allowedNodes ? { allowedNodes: [...p.allowedNodes] } : {}),
            numSockets: 1,
            numCores: size.cores,
            memoryMiB: size.memoryMiB,
            disks: { bootVolume: { disk: p.bootDisk, sizeGb: size.diskGb } },
            network: {
              networkDevices: [
                {
                  name: 'net0',
                  bridge: p.bridge,
                  model: 'virtio',
                  defaultIPv4: true,
                  ...(p.vlan ? { vlan: p.vlan } : {}),
                },
              ],
            },
            // Talos images carry no cloud-init and no guest agent unless built with the extension (capi.md §7, §8).
            checks: { skipCloudInitStatus: true, skipQemuGuestAgent: true },
            // Talos never sets spec.providerID itself (H11); a CCM reads the injected one.
            metadataSettings: { providerIDInjection: true },
          },
        },
      },
    }),
  };
}
