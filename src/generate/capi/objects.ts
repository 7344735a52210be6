/**
 * Cluster API objects that adopt the running cluster without touching it (capi.md §1, §8):
 * Cluster on the existing endpoint and CIDRs; TalosControlPlane with replicas 0, paused, the
 * control-plane patch of item 2 as its strategic patch, OnDelete rollouts; TalosConfigTemplate and
 * MachineDeployment with replicas 0 and the MachineSet preflight skip; ProxmoxCluster and
 * ProxmoxMachineTemplates from flags and the sizes of the nodes being replaced.
 */
import { capiNames } from '../../facts/hostnames.js';
import type { SourceRef } from '../../snapshot/model.js';
import type { TalosValues } from '../talos/model.js';
import { CLUSTER_NAME_LABEL } from './secrets.js';

export const API = {
  cluster: 'cluster.x-k8s.io/v1beta2',
  controlPlane: 'controlplane.cluster.x-k8s.io/v1alpha3',
  bootstrap: 'bootstrap.cluster.x-k8s.io/v1alpha3',
  infra: 'infrastructure.cluster.x-k8s.io/v1alpha2',
} as const;

export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';
export const SKIP_PREFLIGHT_ANNOTATION = 'machineset.cluster.x-k8s.io/skip-preflight-checks';

export interface MachineSize {
  cores: number;
  memoryMiB: number;
  diskGb: number;
}

export interface CapiInputs {
  namespace: string;
  values: TalosValues;
  controlPlanePatch: string;
  workerPatch: string;
  proxmox: {
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
    controlPlane: MachineSize;
    worker: MachineSize;
  };
}

export interface CapiObjects {
  objects: Record<string, unknown>[];
  tcpName: string;
  provenance: Record<string, SourceRef[]>;
}

/** The object names; shared with the audit, which checks the node names CAPI derives from them. */
export function names(cluster: string) {
  return capiNames(cluster);
}

export function capiObjects(i: CapiInputs): CapiObjects {
  const v = i.values;
  const cluster = v.clusterName.value;
  const n = names(cluster);
  const ns = i.namespace;
  const labels = { [CLUSTER_NAME_LABEL]: cluster };
  const meta = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    namespace: ns,
    labels: { ...labels },
    ...extra,
  });
  const endpoint = { host: v.endpointHost, port: Number(new URL(v.endpoint.value).port || 443) };
  const talosVersion = `v${v.release.minor}`;
  const k8s = v.kubernetesVersion.value;
  const hostname = { source: 'InfrastructureName' };

  const clusterObj = {
    apiVersion: API.cluster,
    kind: 'Cluster',
    metadata: meta(cluster),
    spec: {
      clusterNetwork: {
        pods: { cidrBlocks: [...v.podSubnets.value] },
        services: { cidrBlocks: [...v.serviceSubnets.value] },
        serviceDomain: v.dnsDomain.value,
      },
      controlPlaneEndpoint: endpoint,
      controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'TalosControlPlane', name: n.tcp },
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'ProxmoxCluster',
        name: cluster,
      },
    },
  };
  const p = i.proxmox;
  const proxmoxCluster = {
    apiVersion: API.infra,
    kind: 'ProxmoxCluster',
    metadata: meta(cluster),
    spec: {
      controlPlaneEndpoint: endpoint,
      ipv4Config: { addresses: [...p.ipv4Addresses], prefix: p.ipv4Prefix, gateway: p.ipv4Gateway },
      dnsServers: [...p.dnsServers],
      ...(p.allowedNodes ? { allowedNodes: [...p.allowedNodes] } : {}),
      ...(p.credentialsSecret ? { credentialsRef: { name: p.credentialsSecret, namespace: ns } } : {}),
    },
  };
  const template = (name: string, size: MachineSize) => ({
    apiVersion: API.infra,
    kind: 'ProxmoxMachineTemplate',
    metadata: meta(name),
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
  });
  const tcp = {
    apiVersion: API.controlPlane,
    kind: 'TalosControlPlane',
    // Paused until no kubeadm etcd member remains: CACPPT's etcd audit removes members it does not own (H1).
    metadata: meta(n.tcp, { annotations: { [PAUSED_ANNOTATION]: 'true' } }),
    spec: {
      replicas: 0,
      version: k8s,
      infrastructureTemplate: {
        apiVersion: API.infra,
        kind: 'ProxmoxMachineTemplate',
        name: n.cpTemplate,
        namespace: ns,
      },
      controlPlaneConfig: {
        controlplane: {
          generateType: 'controlplane',
          talosVersion,
          hostname,
          strategicPatches: [i.controlPlanePatch],
        },
      },
      // ferry replaces control planes itself, one etcd member at a time; no automatic rollout of all of them (H7, H8).
      rolloutStrategy: { type: 'OnDelete' },
    },
  };
  const tct = {
    apiVersion: API.bootstrap,
    kind: 'TalosConfigTemplate',
    metadata: meta(n.talosConfigTemplate, {
      annotations: { [SKIP_PREFLIGHT_ANNOTATION]: 'ControlPlaneIsStable' },
    }),
    spec: {
      template: {
        spec: { generateType: 'worker', talosVersion, hostname, strategicPatches: [i.workerPatch] },
      },
    },
  };
  const selector = { [CLUSTER_NAME_LABEL]: cluster, 'cluster.x-k8s.io/deployment-name': n.md };
  const md = {
    apiVersion: API.cluster,
    kind: 'MachineDeployment',
    // No control-plane Machine exists while the control plane is kubeadm: MachineSets would wait forever (H5).
    metadata: meta(n.md, { annotations: { [SKIP_PREFLIGHT_ANNOTATION]: 'ControlPlaneIsStable' } }),
    spec: {
      clusterName: cluster,
      replicas: 0,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: selector },
        spec: {
          clusterName: cluster,
          version: k8s,
          bootstrap: {
            configRef: {
              apiGroup: 'bootstrap.cluster.x-k8s.io',
              kind: 'TalosConfigTemplate',
              name: n.talosConfigTemplate,
            },
          },
          infrastructureRef: {
            apiGroup: 'infrastructure.cluster.x-k8s.io',
            kind: 'ProxmoxMachineTemplate',
            name: n.workerTemplate,
          },
        },
      },
    },
  };
  return {
    tcpName: n.tcp,
    objects: [
      clusterObj,
      proxmoxCluster,
      template(n.cpTemplate, p.controlPlane),
      template(n.workerTemplate, p.worker),
      tcp,
      tct,
      md,
    ],
    provenance: {
      'Cluster.spec.controlPlaneEndpoint': v.endpoint.sources,
      'Cluster.spec.clusterNetwork.pods': v.podSubnets.sources,
      'Cluster.spec.clusterNetwork.services': v.serviceSubnets.sources,
      'Cluster.spec.clusterNetwork.serviceDomain': v.dnsDomain.sources,
      'TalosControlPlane.spec.version': v.kubernetesVersion.sources,
      'TalosControlPlane.spec.controlPlaneConfig.controlplane.strategicPatches': [
        {
          kind: 'derived',
          from: [],
          note: 'talos/controlplane-patch.yaml (without its hostname document: CAPMOX names the VMs)',
        },
      ],
    },
  };
}

/** The status patch that stops CACPPT from bootstrapping a second etcd cluster (H2). */
export function tcpStatusPatch(): Record<string, unknown> {
  return { status: { bootstrapped: true } };
}
