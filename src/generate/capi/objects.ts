/**
 * Cluster API objects that adopt the running cluster without touching it (capi.md §1, §8):
 * Cluster on the existing endpoint and CIDRs; TalosControlPlane with replicas 0, paused, the
 * control-plane patches as its strategic patches, OnDelete rollouts; per worker pool a
 * TalosConfigTemplate and a MachineDeployment with replicas 0 and the MachineSet preflight skip;
 * the infrastructure objects (Proxmox or vSphere) from infra.ts.
 */
import { CLUSTER_NAME_LABEL, PAUSED_ANNOTATION, SKIP_PREFLIGHT_ANNOTATION } from '../../capi/view.js';
import { capiNames } from '../../facts/hostnames.js';
import type { SourceRef } from '../../snapshot/model.js';
import type { TalosValues } from '../talos/model.js';
import type { InfraObjects, MachineSize } from './infra.js';

export const API = {
  cluster: 'cluster.x-k8s.io/v1beta2',
  controlPlane: 'controlplane.cluster.x-k8s.io/v1alpha3',
  bootstrap: 'bootstrap.cluster.x-k8s.io/v1alpha3',
} as const;

/** On each MachineDeployment: the kubeadm workers its Machines replace (comma-separated). */
export const REPLACES_ANNOTATION = 'ferry.dev/replaces';

export interface PoolInputs {
  /** "" for the default pool. */
  group: string;
  size: MachineSize;
  /** Strategic patches of the pool's TalosConfigTemplate, in order (role, CAPI, group). */
  patches: string[];
  replaces: string[];
}

export interface CapiInputs {
  namespace: string;
  values: TalosValues;
  /** Strategic patches of the TalosControlPlane, in order (role patch, CAPI patch). */
  controlPlanePatches: string[];
  controlPlaneSize: MachineSize;
  pools: PoolInputs[];
  infra: InfraObjects;
}

export interface CapiObjects {
  objects: Record<string, unknown>[];
  tcpName: string;
  mdNames: string[];
  provenance: Record<string, SourceRef[]>;
}

/** The object names; shared with the audit, which checks the node names CAPI derives from them. */
export function names(cluster: string) {
  return capiNames(cluster);
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
}

export function capiObjects(i: CapiInputs): CapiObjects {
  const v = i.values;
  const cluster = v.clusterName.value;
  const n = names(cluster);
  const ns = i.namespace;
  const labels = { [CLUSTER_NAME_LABEL]: cluster };
  const meta = (name: string, annotations?: Record<string, string>): ObjectMeta => ({
    name,
    namespace: ns,
    labels: { ...labels },
    ...(annotations ? { annotations } : {}),
  });
  const talosVersion = `v${v.release.minor}`;
  const k8s = v.kubernetesVersion.value;
  // The Talos hostname is the infrastructure machine's name, the name CACPPT's etcd audit compares (H1).
  const hostname = { source: 'InfrastructureName' };
  const infra = i.infra;

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
      controlPlaneEndpoint: infra.endpoint,
      controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'TalosControlPlane', name: n.tcp },
      infrastructureRef: {
        apiGroup: infra.apiVersion.split('/')[0]!,
        kind: infra.clusterKind,
        name: cluster,
      },
    },
  };
  const tcp = {
    apiVersion: API.controlPlane,
    kind: 'TalosControlPlane',
    // Paused until no kubeadm etcd member remains: CACPPT's etcd audit removes members it does not own (H1).
    metadata: meta(n.tcp, { [PAUSED_ANNOTATION]: 'true' }),
    spec: {
      replicas: 0,
      version: k8s,
      infrastructureTemplate: {
        apiVersion: infra.apiVersion,
        kind: infra.templateKind,
        name: n.cpTemplate,
        namespace: ns,
      },
      controlPlaneConfig: {
        controlplane: {
          generateType: 'controlplane',
          talosVersion,
          hostname,
          strategicPatches: [...i.controlPlanePatches],
        },
      },
      // ferry replaces control planes itself, one etcd member at a time; no automatic rollout of all of them (H7, H8).
      rolloutStrategy: { type: 'OnDelete' },
    },
  };
  const templates = [infra.machineTemplate(meta(n.cpTemplate), i.controlPlaneSize)];
  const poolObjects: Record<string, unknown>[] = [];
  const mdNames: string[] = [];
  for (const pool of i.pools) {
    const pn = n.pool(pool.group);
    mdNames.push(pn.md);
    templates.push(infra.machineTemplate(meta(pn.workerTemplate), pool.size));
    poolObjects.push({
      apiVersion: API.bootstrap,
      kind: 'TalosConfigTemplate',
      metadata: meta(pn.talosConfigTemplate, { [SKIP_PREFLIGHT_ANNOTATION]: 'ControlPlaneIsStable' }),
      spec: {
        template: {
          spec: { generateType: 'worker', talosVersion, hostname, strategicPatches: [...pool.patches] },
        },
      },
    });
    const selector = { [CLUSTER_NAME_LABEL]: cluster, 'cluster.x-k8s.io/deployment-name': pn.md };
    poolObjects.push({
      apiVersion: API.cluster,
      kind: 'MachineDeployment',
      // No control-plane Machine exists while the control plane is kubeadm: MachineSets would wait forever (H5).
      metadata: meta(pn.md, {
        [SKIP_PREFLIGHT_ANNOTATION]: 'ControlPlaneIsStable',
        [REPLACES_ANNOTATION]: pool.replaces.join(','),
      }),
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
                name: pn.talosConfigTemplate,
              },
            },
            infrastructureRef: {
              apiGroup: infra.apiVersion.split('/')[0]!,
              kind: infra.templateKind,
              name: pn.workerTemplate,
            },
          },
        },
      },
    });
  }
  return {
    tcpName: n.tcp,
    mdNames,
    objects: [clusterObj, ...infra.clusterObjects(meta), ...templates, tcp, ...poolObjects],
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
          note: 'talos/controlplane-patch.yaml (without its hostname document: the infrastructure names the VMs), then the Cluster API patch (talos-patch.ts)',
        },
      ],
    },
  };
}

/** The status patch that stops CACPPT from bootstrapping a second etcd cluster (H2). */
export function tcpStatusPatch(): Record<string, unknown> {
  return { status: { bootstrapped: true } };
}
