/**
 * The management cluster's Cluster API manifests, from ferry's CAPI generator (capiObjects). That
 * generator writes objects that *adopt* a running kubeadm cluster: replicas 0, a paused
 * TalosControlPlane, OnDelete rollouts, MachineSet preflight skips, no guest agent. A management
 * cluster is new, so this wrapper turns those off again: the replicas of mgmt.yaml, an unpaused
 * TalosControlPlane with rolling updates, preflight checks on, and the guest agent the template was
 * built with (Image Factory schematic with qemu-guest-agent: proxmox.ts).
 */
import { stringify } from 'yaml';
import { MOVE_LABEL, PAUSED_ANNOTATION, SKIP_PREFLIGHT_ANNOTATION } from '../../capi/view.js';
import { FerryError } from '../../errors.js';
import { capiObjects, REPLACES_ANNOTATION } from '../../generate/capi/objects.js';
import { proxmoxInfra } from '../../generate/capi/proxmox.js';
import { vsphereInfra } from '../../generate/capi/vsphere.js';
import type { TalosValues } from '../../generate/talos/model.js';
import type { SourceRef } from '../../snapshot/model.js';
import { endpointHost, type MgmtConfig, type ProxmoxInfra, type VsphereInfra } from './config.js';

export const CAPI_POOL = 'capi';
export const TEMPLATE_POOL = 'templates';

export const PROXMOX_SECRET_LABEL = { 'platform.ionos.com/secret-type': 'proxmox-credentials' } as const;

/** The namespace CAPV's controller runs in: a VSphereClusterIdentity's Secret must live there (mgmt.md §5). */
export const CAPV_NAMESPACE = 'capv-system';

export function credentialsSecretName(c: MgmtConfig): string {
  return `${c.cluster.name}-${c.infrastructure.kind}-credentials`;
}

/** Where the credentials Secret lives: the cluster's namespace (CAPMOX credentialsRef) or CAPV's. */
export function credentialsNamespace(c: MgmtConfig): string {
  return c.infrastructure.kind === 'proxmox' ? c.cluster.namespace : CAPV_NAMESPACE;
}

type Obj = Record<string, unknown> & {
  kind: string;
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
};

/** The fields of TalosValues that capiObjects reads (objects.ts); the rest describe an adopted cluster. */
type CapiValues = Pick<
  TalosValues,
  | 'release'
  | 'kubernetesVersion'
  | 'clusterName'
  | 'endpoint'
  | 'endpointHost'
  | 'podSubnets'
  | 'serviceSubnets'
  | 'dnsDomain'
>;

function values(c: MgmtConfig): CapiValues {
  const from: SourceRef[] = [{ kind: 'file', path: c.file, field: 'cluster' }];
  const s = <T>(value: T, field: string) => ({
    value,
    sources: [{ kind: 'file' as const, path: c.file, field }],
  });
  const minor = c.cluster.talosVersion.replace(/^v/, '').split('.').slice(0, 2).join('.');
  const host = endpointHost(c.cluster);
  return {
    release: {
      version: c.cluster.talosVersion,
      minor,
      stable: !c.cluster.talosVersion.includes('-'),
    } as TalosValues['release'],
    kubernetesVersion: s(c.cluster.kubernetesVersion, 'cluster.kubernetesVersion'),
    clusterName: s(c.cluster.name, 'cluster.name'),
    endpoint: { value: `https://${host}:${c.cluster.endpoint.port}`, sources: from },
    endpointHost: host,
    podSubnets: s([c.cluster.podSubnet], 'cluster.podSubnet'),
    serviceSubnets: s([c.cluster.serviceSubnet], 'cluster.serviceSubnet'),
    dnsDomain: { value: 'cluster.local', sources: [] },
  };
}

/** Machine-config patch for every node: no CNI/kube-proxy (Cilium replaces it), external CCM (mgmt.md §9). */
function patch(c: MgmtConfig, role: 'controlplane' | 'worker'): string {
  const ccm = c.ccm.kind === 'talos-ccm';
  const machine: Record<string, unknown> = {
    install: { disk: '/dev/sda' },
    kubelet: ccm ? { extraArgs: { 'cloud-provider': 'external', 'rotate-server-certificates': 'true' } } : {},
  };
  if (role === 'controlplane') {
    if (c.cluster.endpoint.kind === 'vip')
      machine['network'] = {
        interfaces: [{ deviceSelector: { busPath: '0*' }, vip: { ip: c.cluster.endpoint.vip } }],
      };
    if (ccm)
      machine['features'] = {
        kubernetesTalosAPIAccess: {
          enabled: true,
          allowedRoles: ['os:reader'],
          allowedKubernetesNamespaces: ['kube-system'],
        },
      };
  }
  const cluster: Record<string, unknown> = { network: { cni: { name: 'none' } }, proxy: { disabled: true } };
  if (role === 'controlplane' && c.cluster.workers === 0) cluster['allowSchedulingOnControlPlanes'] = true;
  if (ccm) cluster['externalCloudProvider'] = { enabled: true };
  return stringify({ machine, cluster });
}

/** The infrastructure objects of the management cluster, Proxmox or vSphere. */
function infraObjects(c: MgmtConfig, host: string) {
  const endpoint = { host, port: c.cluster.endpoint.port };
  const a = c.cluster.addressing;
  const infra = c.infrastructure;
  switch (infra.kind) {
    case 'proxmox': {
      if (a.kind !== 'pool') throw new FerryError('internal', 'Proxmox config without an IP pool');
      const p: ProxmoxInfra = infra;
      return proxmoxInfra(
        {
          sourceNode: p.node,
          templateId: p.templateId,
          bridge: p.bridge,
          ...(p.vlan !== undefined ? { vlan: p.vlan } : {}),
          ipv4Addresses: a.addresses,
          ipv4Prefix: a.prefix,
          ipv4Gateway: a.gateway,
          dnsServers: c.cluster.dns,
          allowedNodes: [p.node],
          credentialsSecret: credentialsSecretName(c),
          bootDisk: p.bootDisk,
          ...(p.storage !== undefined ? { storage: p.storage } : {}),
        },
        c.cluster.name,
        c.cluster.namespace,
        endpoint,
      );
    }
    case 'vsphere': {
      const v: VsphereInfra = infra;
      return vsphereInfra(
        {
          server: v.server,
          thumbprint: v.thumbprint,
          // A VSphereClusterIdentity (cluster-scoped) naming a Secret in capv-system, usable only from
          // this cluster's namespace (vsphere.ts: allowedNamespaces).
          credentialsSecret: credentialsSecretName(c),
          datacenter: v.datacenter,
          datastore: v.datastore,
          template: v.template,
          network: v.network,
          ...(a.kind === 'pool'
            ? {
                ipPool: {
                  addresses: a.addresses,
                  prefix: a.prefix,
                  gateway: a.gateway,
                  dnsServers: c.cluster.dns,
                },
              }
            : {}),
        },
        c.cluster.name,
        c.cluster.namespace,
        endpoint,
      );
    }
  }
}

export function managementManifests(c: MgmtConfig): Obj[] {
  const v = values(c);
  const built = capiObjects({
    namespace: c.cluster.namespace,
    // capiObjects reads only the CapiValues fields (objects.ts); the others describe an adopted cluster.
    values: v as TalosValues,
    controlPlanePatches: [patch(c, 'controlplane')],
    controlPlaneSize: c.cluster.controlPlane,
    // One pool: the management cluster's workers are all alike.
    pools: [{ group: '', size: c.cluster.worker, patches: [patch(c, 'worker')], replaces: [] }],
    infra: infraObjects(c, v.endpointHost),
  });
  const objs = built.objects as Obj[];
  for (const o of objs) {
    const ann = o.metadata['annotations'] as Record<string, string> | undefined;
    if (ann) {
      delete ann[PAUSED_ANNOTATION];
      delete ann[SKIP_PREFLIGHT_ANNOTATION];
      // A new cluster replaces no kubeadm workers.
      delete ann[REPLACES_ANNOTATION];
      if (Object.keys(ann).length === 0) delete o.metadata['annotations'];
    }
    switch (o.kind) {
      case 'TalosControlPlane':
        o.spec['replicas'] = c.cluster.controlPlanes;
        o.spec['rolloutStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } };
        break;
      case 'MachineDeployment':
        o.spec['replicas'] = c.cluster.workers;
        break;
      case 'ProxmoxMachineTemplate': {
        const spec = (o.spec['template'] as { spec: Record<string, unknown> }).spec;
        // The template carries qemu-guest-agent (proxmox.ts): CAPMOX may wait for it; cloud-init it has not.
        spec['checks'] = { skipCloudInitStatus: true, skipQemuGuestAgent: false };
        // The token's VM rights hold on this pool only (proxmox.ts, least privilege).
        spec['pool'] = CAPI_POOL;
        break;
      }
    }
  }
  return objs;
}

/**
 * The credentials Secret: CAPMOX's (read through credentialsRef, moved with the cluster), or the
 * username/password Secret CAPV's VSphereClusterIdentity names, in capv-system (mgmt.md §5; CAPV sets
 * the identity as its owner, so clusterctl move carries it along with the identity).
 */
export function credentialsSecret(c: MgmtConfig, secret: string): Record<string, unknown> {
  const infra = c.infrastructure;
  const metadata = (labels: Record<string, string>) => ({
    name: credentialsSecretName(c),
    namespace: credentialsNamespace(c),
    labels: { ...labels, [MOVE_LABEL]: '' },
  });
  switch (infra.kind) {
    case 'proxmox':
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: metadata(PROXMOX_SECRET_LABEL),
        type: 'Opaque',
        stringData: {
          url: infra.url,
          token: infra.tokenId,
          secret,
          // Unset means insecure TLS in CAPMOX (capi.md §7): always say it.
          insecure: String(infra.insecure),
        },
      };
    case 'vsphere':
      return {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: metadata({}),
        type: 'Opaque',
        stringData: { username: infra.username, password: secret },
      };
  }
}

export function namespaceObject(c: MgmtConfig): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: c.cluster.namespace } };
}

export function toYamlStream(objs: Record<string, unknown>[]): string {
  // No anchors: kubectl reads them, but an operator reading the file should not have to.
  return objs.map((o) => stringify(o, { aliasDuplicateObjects: false })).join('---\n');
}
