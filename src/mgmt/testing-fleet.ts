/**
 * Test and benchmark support: a management cluster as Cluster API would leave it, on a lab API
 * server serving the repository's CAPI CRDs (schemas/capi): per workload cluster a Cluster,
 * TalosControlPlane, ProxmoxCluster, templates, MachineDeployment → MachineSet → Machines with
 * nodeRefs and providerIDs, TalosConfigs, and its Secrets (owned, soft-owned, the unowned
 * `<cluster>-talos` of H14, and one that belongs to no cluster), with the statuses controllers write.
 */
import { readdir, readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { LoadedKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { MgmtKube } from './kube.js';
import type { KubeObject } from './model.js';

const SPECS = new URL('../../schemas/capi/', import.meta.url);

export function labKube(kc: KubeConfig, server: string): MgmtKube {
  const loaded: LoadedKubeconfig = { kc, file: '(lab)', context: kc.getCurrentContext(), server };
  return new MgmtKube(createRequester(loaded, { keepAlive: true }));
}

export async function installCapiCrds(kube: MgmtKube): Promise<void> {
  for (const f of (await readdir(SPECS)).filter((n) => n.endsWith('.yaml')).sort()) {
    const crd = parse(await readFile(new URL(f, SPECS), 'utf8')) as KubeObject;
    await kube.req.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  }
  await kube.discoverKinds();
}

export const PROVIDERS = [
  {
    ns: 'capi-system',
    name: 'cluster-api',
    providerName: 'cluster-api',
    type: 'CoreProvider',
    version: 'v1.14.0',
  },
  {
    ns: 'cabpt-system',
    name: 'bootstrap-talos',
    providerName: 'talos',
    type: 'BootstrapProvider',
    version: 'v0.6.12',
  },
  {
    ns: 'cacppt-system',
    name: 'control-plane-talos',
    providerName: 'talos',
    type: 'ControlPlaneProvider',
    version: 'v0.5.13',
  },
  {
    ns: 'capmox-system',
    name: 'infrastructure-proxmox',
    providerName: 'proxmox',
    type: 'InfrastructureProvider',
    version: 'v0.9.0',
  },
  {
    ns: 'capi-ipam-in-cluster-system',
    name: 'ipam-in-cluster',
    providerName: 'in-cluster',
    type: 'IPAMProvider',
    version: 'v1.1.0',
  },
];

async function ensureNamespace(kube: MgmtKube, name: string): Promise<void> {
  if (!(await kube.get({ apiVersion: 'v1', kind: 'Namespace', name })))
    await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** The clusterctl inventory as `clusterctl init` writes it (capi.md §5.2). */
export async function seedProviders(
  kube: MgmtKube,
  versions: Partial<Record<string, string>> = {},
): Promise<void> {
  for (const p of PROVIDERS) {
    await ensureNamespace(kube, p.ns);
    await kube.create({
      apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
      kind: 'Provider',
      metadata: { name: p.name, namespace: p.ns, labels: { 'clusterctl.cluster.x-k8s.io': '' } },
      providerName: p.providerName,
      type: p.type,
      version: versions[p.name] ?? p.version,
    });
  }
}

const owner = (o: KubeObject, controller = true) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  uid: o.metadata.uid!,
  ...(controller && { controller: true, blockOwnerDeletion: true }),
});

const T = '2026-11-30T12:00:00Z';
const cond = (type: string) => ({ type, status: 'True', reason: type, lastTransitionTime: T });
const b64 = (s: string) => Buffer.from(s).toString('base64');

export interface SeededCluster {
  namespace: string;
  name: string;
  objects: KubeObject[];
}

/** Creates one workload cluster's objects and their statuses; returns them as the server holds them. */
export async function seedCluster(kube: MgmtKube, name: string, namespace = name): Promise<SeededCluster> {
  await ensureNamespace(kube, namespace);
  const out: KubeObject[] = [];
  const label = { 'cluster.x-k8s.io/cluster-name': name };
  const make = async (o: KubeObject, status?: unknown): Promise<KubeObject> => {
    let c = await kube.create({ ...o, metadata: { namespace, ...o.metadata } });
    if (status !== undefined) c = await kube.putStatus({ ...c, status });
    out.push(c);
    return c;
  };
  const cluster = await make(
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name, labels: label },
      spec: {
        clusterNetwork: {
          pods: { cidrBlocks: ['10.244.0.0/16'] },
          services: { cidrBlocks: ['10.96.0.0/12'] },
        },
        controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
        controlPlaneRef: {
          apiGroup: 'controlplane.cluster.x-k8s.io',
          kind: 'TalosControlPlane',
          name: `${name}-cp`,
        },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxCluster', name },
      },
    },
    {
      conditions: [cond('Available'), cond('InfrastructureReady'), cond('ControlPlaneInitialized')],
      initialization: { infrastructureProvisioned: true, controlPlaneInitialized: true },
      phase: 'Provisioned',
    },
  );
  const pc = await make(
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
      kind: 'ProxmoxCluster',
      metadata: { name, labels: label, ownerReferences: [owner(cluster)] },
      spec: {
        controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
        ipv4Config: { addresses: ['10.0.0.20-10.0.0.40'], prefix: 24, gateway: '10.0.0.1' },
        dnsServers: ['10.0.0.1'],
        credentialsRef: { name: `${name}-proxmox-credentials`, namespace },
      },
    },
    // H12: the VM spreading move drops.
    {
      conditions: [cond('Ready')],
      initialization: { provisioned: true },
      nodeLocations: { controlPlane: [{ machine: { name: `${name}-cp-0` }, node: 'pve1' }], workers: [] },
    },
  );
  const pmtCp = await make({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
    kind: 'ProxmoxMachineTemplate',
    metadata: { name: `${name}-cp`, labels: label, ownerReferences: [owner(cluster, false)] },
    spec: {
      template: {
        spec: {
          sourceNode: 'pve1',
          templateID: 100,
          numCores: 2,
          memoryMiB: 4096,
          network: { networkDevices: [{ name: 'net0', bridge: 'vmbr0' }] },
        },
      },
    },
  });
  const pmtW = await make({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
    kind: 'ProxmoxMachineTemplate',
    metadata: { name: `${name}-worker`, labels: label, ownerReferences: [owner(cluster, false)] },
    spec: {
      template: {
        spec: {
          sourceNode: 'pve1',
          templateID: 100,
          numCores: 4,
          memoryMiB: 8192,
          network: { networkDevices: [{ name: 'net0', bridge: 'vmbr0' }] },
        },
      },
    },
  });
  const tcp = await make(
    {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosControlPlane',
      metadata: { name: `${name}-cp`, labels: label, ownerReferences: [owner(cluster)] },
      spec: {
        replicas: 1,
        version: 'v1.36.2',
        infrastructureTemplate: { apiVersion: pmtCp.apiVersion, kind: pmtCp.kind, name: pmtCp.metadata.name },
        controlPlaneConfig: { controlplane: { generateType: 'controlplane', talosVersion: 'v1.13' } },
      },
    },
    // H2/H12: bootstrapped must survive the restore.
    {
      bootstrapped: true,
      ready: true,
      initialized: true,
      replicas: 1,
      readyReplicas: 1,
      version: 'v1.36.2',
      conditions: [cond('Ready')],
    },
  );
  const tct = await make({
    apiVersion: 'bootstrap.cluster.x-k8s.io/v1alpha3',
    kind: 'TalosConfigTemplate',
    metadata: { name: `${name}-worker`, labels: label, ownerReferences: [owner(cluster, false)] },
    spec: { template: { spec: { generateType: 'worker', talosVersion: 'v1.13' } } },
  });
  const template = {
    metadata: { labels: label },
    spec: {
      clusterName: name,
      version: 'v1.36.2',
      bootstrap: {
        configRef: {
          apiGroup: 'bootstrap.cluster.x-k8s.io',
          kind: 'TalosConfigTemplate',
          name: tct.metadata.name,
        },
      },
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'ProxmoxMachineTemplate',
        name: pmtW.metadata.name,
      },
    },
  };
  const md = await make(
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineDeployment',
      metadata: { name: `${name}-workers`, labels: label, ownerReferences: [owner(cluster, false)] },
      spec: { clusterName: name, replicas: 2, selector: { matchLabels: label }, template },
    },
    {
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      phase: 'Running',
      conditions: [cond('Available')],
    },
  );
  const ms = await make(
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineSet',
      metadata: { name: `${name}-workers-abc12`, labels: label, ownerReferences: [owner(md)] },
      spec: { clusterName: name, replicas: 2, selector: { matchLabels: label }, template },
    },
    { replicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [cond('Available')] },
  );
  const machine = async (mname: string, own: KubeObject, cp: boolean, i: number) => {
    const m = await make(
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name: mname,
          labels: { ...label, ...(cp && { 'cluster.x-k8s.io/control-plane': '' }) },
          ownerReferences: [owner(own)],
        },
        spec: {
          clusterName: name,
          version: 'v1.36.2',
          providerID: `proxmox://${name}-${i}-0000-4000-8000-000000000000`,
          bootstrap: { dataSecretName: `${mname}-bootstrap` },
          infrastructureRef: {
            apiGroup: 'infrastructure.cluster.x-k8s.io',
            kind: 'ProxmoxMachine',
            name: mname,
          },
        },
      },
      {
        nodeRef: { name: mname },
        phase: 'Running',
        addresses: [{ type: 'InternalIP', address: `10.0.0.${20 + i}` }],
        conditions: [cond('Ready'), cond('NodeHealthy')],
      },
    );
    if (!cp)
      await make(
        {
          apiVersion: 'bootstrap.cluster.x-k8s.io/v1alpha3',
          kind: 'TalosConfig',
          metadata: { name: mname, labels: label, ownerReferences: [owner(m)] },
          spec: { generateType: 'worker', talosVersion: 'v1.13' },
        },
        { ready: true, dataSecretName: `${mname}-bootstrap` },
      );
    return m;
  };
  await machine(`${name}-cp-0`, tcp, true, 0);
  await machine(`${name}-workers-abc12-x1`, ms, false, 1);
  await machine(`${name}-workers-abc12-x2`, ms, false, 2);
  const secret = async (
    sname: string,
    data: Record<string, string>,
    owners: KubeObject[] = [],
    type = 'Opaque',
  ) =>
    make({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: sname,
        labels: label,
        ...(owners.length > 0 && { ownerReferences: owners.map((x) => owner(x)) }),
      },
      type,
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    });
  await secret(
    `${name}-kubeconfig`,
    {
      value: `apiVersion: v1\nkind: Config\nusers: [{name: admin, user: {token: kubeconfig-token-${name}}}]\n`,
    },
    [cluster],
    'cluster.x-k8s.io/secret',
  );
  // Soft-owned by name alone (capi.md §5.1).
  await secret(
    `${name}-ca`,
    { 'tls.crt': `CA of ${name}`, 'tls.key': `CA key of ${name}` },
    [],
    'cluster.x-k8s.io/secret',
  );
  // H14: unowned, move leaves it behind; ferry must not.
  await secret(`${name}-talos`, { bundle: `talos secrets bundle of ${name}` });
  await secret(`${name}-talosconfig`, { talosconfig: `context: ${name}` }, [tcp]);
  await secret(
    `${name}-proxmox-credentials`,
    { url: 'https://pve:8006', token: 'capi@pve!capi', secret: `proxmox-secret-${name}` },
    [pc],
  );
  // Belongs to no cluster: never in a backup.
  await kube.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'unrelated', namespace },
    type: 'Opaque',
    data: { x: b64('y') },
  });
  return { namespace, name, objects: out };
}
