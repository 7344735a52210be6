/**
 * Item 6 of the kit (`--provisioner capi`): Cluster API manifests for a Talos control plane and
 * one MachineDeployment per worker pool on Proxmox or vSphere that adopt the running cluster, the
 * Secrets the providers must find instead of generating new PKI, the TalosControlPlane status
 * patch, the CCM that sets providerIDs, and the hazards the plan works around.
 */
import { stringify } from 'yaml';
import { KIT } from '../../knowledge/kit-paths.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Artifact, GenerateNote, GeneratorResult, MissingInput } from '../artifact.js';
import type { GenerateContext, Generator } from '../context.js';
import { renderDocs } from '../talos/doc.js';
import { strategicPatchText } from '../talos/generator.js';
import type { TalosValues } from '../talos/model.js';
import { deriveTalosValues } from '../talos/values.js';
import { ccmInstallCommand, ccmValues } from './ccm.js';
import type { InfraKind, InfraObjects, MachineSize } from './infra.js';
import { type CapiInputs, capiObjects, names, tcpStatusPatch } from './objects.js';
import { CAPI_DEFAULT_NAMESPACE, type CapiOptions, type VmSize } from './options.js';
import { workerPools } from './pools.js';
import { proxmoxInfra } from './proxmox.js';
import { clusterSecrets } from './secrets.js';
import { roleSize } from './sizes.js';
import { capiPatchText } from './talos-patch.js';
import { vsphereInfra } from './vsphere.js';

const CCM_VALUES = KIT.capiCcmValues;

export const capiGenerator: Generator = { name: 'capi', generate: generateCapi };

export function generateCapi(ctx: GenerateContext): GeneratorResult {
  if (ctx.target.provisioner !== 'capi') return { kind: 'ok', artifacts: [], notes: [] };
  const infra = ctx.target.infra;
  if (infra !== 'proxmox' && infra !== 'vsphere') {
    return {
      kind: 'missing',
      missing: [
        {
          what: 'the infrastructure the Cluster API machines run on',
          why: 'ferry writes Cluster API manifests for Proxmox (CAPMOX) and vSphere (CAPV)',
          provideWith: '--infra proxmox or --infra vsphere',
        },
      ],
      notes: [],
    };
  }
  const opts = ctx.options.capi ?? {};
  const derived = deriveTalosValues(ctx.facts);
  // The Talos generator reports what is missing for these values; saying it twice helps nobody.
  if (derived.kind === 'missing') return { kind: 'missing', missing: [], notes: [] };
  // The Secrets need the bundle; its absence is reported where it is built.
  if (!ctx.secrets) return { kind: 'missing', missing: [], notes: [] };
  const cpNodes = nodesNamed(
    ctx.snapshot.resources.nodes,
    derived.values.controlPlane.replacements.map((r) => r.replaces),
  );
  const workerNodes = ctx.snapshot.resources.nodes.filter((n) => !cpNodes.includes(n));
  return capiArtifacts(derived.values, ctx.secrets.bundle, opts, {
    infra,
    cpNodes,
    workerNodes,
    generatedBy: ctx.generatedBy,
  });
}

function nodesNamed(nodes: KubeObject[], wanted: string[]): KubeObject[] {
  return nodes.filter((n) => wanted.includes(n.metadata.name));
}

type Size = ReturnType<typeof roleSize>;

/** Flags for what ferry cannot know; `flag(undefined, …)` records a missing input. */
function collector(missing: MissingInput[], infra: InfraKind) {
  return (value: unknown, what: string, provideWith: string) => {
    if (value === undefined)
      missing.push({
        what,
        why: `ferry cannot read it from the cluster; the ${infra === 'proxmox' ? 'Proxmox' : 'vSphere'} manifests need it`,
        provideWith,
      });
  };
}

function checkSize(s: Size, role: string, flagPrefix: string, flag: ReturnType<typeof collector>): void {
  const why = role === 'cp' ? 'control-plane' : role;
  if (s.cores === undefined)
    flag(
      undefined,
      `the CPU count of ${why} VMs (no Node capacity in the snapshot)`,
      `--${flagPrefix}-${role === 'cp' ? 'cp' : 'worker'}-cores N`,
    );
  if (s.memoryMiB === undefined)
    flag(
      undefined,
      `the memory of ${why} VMs (no Node capacity in the snapshot)`,
      `--${flagPrefix}-${role === 'cp' ? 'cp' : 'worker'}-memory-mib N`,
    );
  if (s.diskGb === undefined)
    flag(
      undefined,
      `the boot disk size of ${why} VMs (no Node capacity in the snapshot)`,
      `--${flagPrefix}-${role === 'cp' ? 'cp' : 'worker'}-disk-gb N`,
    );
}

const complete = (s: Size): MachineSize => ({ cores: s.cores!, memoryMiB: s.memoryMiB!, diskGb: s.diskGb! });

function infraObjects(
  infra: InfraKind,
  opts: CapiOptions,
  cluster: string,
  namespace: string,
  endpoint: { host: string; port: number },
  flag: ReturnType<typeof collector>,
): InfraObjects | undefined {
  switch (infra) {
    case 'proxmox': {
      const p = opts.proxmox ?? {};
      flag(p.sourceNode, 'the Proxmox node holding the Talos VM template', '--proxmox-source-node NODE');
      flag(p.templateId, 'the Talos VM template to clone', '--proxmox-template-id ID');
      flag(p.bridge, 'the bridge for the VMs network', '--proxmox-bridge BRIDGE');
      flag(
        p.ipv4Addresses,
        'the IPv4 addresses CAPMOX may give the VMs',
        '--proxmox-ipv4-addresses a-b,CIDR,…',
      );
      flag(p.ipv4Prefix, 'the prefix length of the VM network', '--proxmox-ipv4-prefix N');
      flag(p.ipv4Gateway, 'the VM network gateway', '--proxmox-ipv4-gateway IP');
      flag(p.dnsServers, 'DNS servers for the VMs', '--proxmox-dns-servers IP,…');
      if (
        !p.sourceNode ||
        !p.templateId ||
        !p.bridge ||
        !p.ipv4Addresses ||
        !p.ipv4Prefix ||
        !p.ipv4Gateway ||
        !p.dnsServers
      )
        return undefined;
      return proxmoxInfra(
        {
          sourceNode: p.sourceNode,
          templateId: p.templateId,
          bridge: p.bridge,
          ...(p.vlan !== undefined ? { vlan: p.vlan } : {}),
          ipv4Addresses: p.ipv4Addresses,
          ipv4Prefix: p.ipv4Prefix,
          ipv4Gateway: p.ipv4Gateway,
          dnsServers: p.dnsServers,
          ...(p.allowedNodes ? { allowedNodes: p.allowedNodes } : {}),
          ...(p.credentialsSecret ? { credentialsSecret: p.credentialsSecret } : {}),
          bootDisk: p.bootDisk ?? 'scsi0',
          ...(p.storage ? { storage: p.storage } : {}),
        },
        cluster,
        namespace,
        endpoint,
      );
    }
    case 'vsphere': {
      const o = opts.vsphere ?? {};
      flag(o.server, 'the vCenter server', '--vsphere-server HOST');
      flag(o.datacenter, 'the vSphere datacenter', '--vsphere-datacenter DC');
      flag(o.template, 'the Talos VM template to clone', '--vsphere-template T');
      flag(o.network, "the port group of the VMs' NIC", '--vsphere-network PG');
      const statics = o.ipv4Addresses !== undefined;
      if (statics) {
        flag(o.ipv4Prefix, 'the prefix length of the static VM addresses', '--vsphere-ipv4-prefix N');
        flag(o.ipv4Gateway, 'the gateway of the static VM addresses', '--vsphere-ipv4-gateway IP');
        flag(o.dnsServers, 'DNS servers for VMs with static addresses', '--vsphere-dns-servers IP,…');
      }
      if (!o.server || !o.datacenter || !o.template || !o.network) return undefined;
      if (statics && (!o.ipv4Prefix || !o.ipv4Gateway || !o.dnsServers)) return undefined;
      return vsphereInfra(
        {
          server: o.server,
          ...(o.thumbprint ? { thumbprint: o.thumbprint } : {}),
          ...(o.credentialsSecret ? { credentialsSecret: o.credentialsSecret } : {}),
          datacenter: o.datacenter,
          ...(o.datastore ? { datastore: o.datastore } : {}),
          ...(o.folder ? { folder: o.folder } : {}),
          ...(o.resourcePool ? { resourcePool: o.resourcePool } : {}),
          template: o.template,
          network: o.network,
          ...(statics
            ? {
                ipPool: {
                  addresses: o.ipv4Addresses!,
                  prefix: o.ipv4Prefix!,
                  gateway: o.ipv4Gateway!,
                  dnsServers: o.dnsServers!,
                },
              }
            : {}),
        },
        cluster,
        namespace,
        endpoint,
      );
    }
  }
}

function sizeFlags(infra: InfraKind, opts: CapiOptions): { controlPlane: VmSize; worker: VmSize } {
  const o = infra === 'proxmox' ? opts.proxmox : opts.vsphere;
  return { controlPlane: o?.controlPlane ?? {}, worker: o?.worker ?? {} };
}

export function capiArtifacts(
  values: TalosValues,
  bundle: Parameters<typeof clusterSecrets>[2],
  opts: CapiOptions,
  ctx: { infra: InfraKind; cpNodes: KubeObject[]; workerNodes: KubeObject[]; generatedBy: string[] },
): GeneratorResult {
  const missing: MissingInput[] = [];
  const notes: GenerateNote[] = [];
  const flag = collector(missing, ctx.infra);
  const namespace = opts.namespace ?? CAPI_DEFAULT_NAMESPACE;
  const cluster = values.clusterName.value;
  const endpoint = { host: values.endpointHost, port: Number(new URL(values.endpoint.value).port || 443) };
  const infra = infraObjects(ctx.infra, opts, cluster, namespace, endpoint, flag);
  const flags = sizeFlags(ctx.infra, opts);
  const cp = roleSize(ctx.cpNodes, flags.controlPlane);
  checkSize(cp, 'cp', ctx.infra, flag);
  const pools = workerPools(values, ctx.workerNodes, ctx.cpNodes).map((p) => ({
    pool: p,
    size: roleSize(p.nodes, flags.worker),
  }));
  for (const p of pools) checkSize(p.size, 'worker', ctx.infra, flag);
  if (missing.length > 0 || !infra) return { kind: 'missing', missing, notes };

  const talos = opts.talos ?? {};
  const workerRolePatch = strategicPatchText(values, 'worker', { withoutHostname: true });
  const workerCapiPatch = capiPatchText(values, 'worker', talos);
  const inputs: CapiInputs = {
    namespace,
    values,
    controlPlanePatches: [
      strategicPatchText(values, 'controlplane', { withoutHostname: true }),
      capiPatchText(values, 'controlplane', talos),
    ],
    controlPlaneSize: complete(cp),
    pools: pools.map(({ pool, size }) => ({
      group: pool.group,
      size: complete(size),
      patches: [
        workerRolePatch,
        workerCapiPatch,
        ...(pool.patch.length > 0 ? [renderDocs([], pool.patch)] : []),
      ],
      replaces: pool.nodes === ctx.cpNodes ? [] : pool.nodes.map((n) => n.metadata.name),
    })),
    infra,
  };
  const built = capiObjects(inputs);
  const n = names(cluster);
  notes.push({
    severity: 'info',
    message:
      `Talos nodes created by Cluster API are named after their infrastructure machines (${n.cpTemplate}-…, ${n.workerTemplate}-…, hostname.source InfrastructureName): ` +
      `random suffixes, never a kubeadm etcd member or Node name (hostname rule; ${values.hostnameRule.value})`,
  });
  if (ctx.infra === 'vsphere')
    notes.push({
      severity: 'warning',
      message:
        'vSphere: CAPV expects providerID vsphere://<biosUUID>, talos-ccm would set talos://vmware/<ip>; run the vSphere cloud provider (CPI) as the CCM instead (unconfirmed), and a Talos vmware image with vmtoolsd-guest-agent so CAPV sees the VM addresses',
    });
  const sizeWhy = (s: Size, role: string) =>
    `${role} VMs: ${s.cores} cores, ${s.memoryMiB} MiB, ${s.diskGb} GB (${s.fromFlags.length > 0 ? `flags: ${s.fromFlags.join(', ')}; ` : ''}largest kubeadm node it replaces otherwise)`;
  const head = (lines: string[]) => [...lines, ...ctx.generatedBy].map((l) => `# ${l}`).join('\n');
  const yamlDocs = (objs: Record<string, unknown>[]) =>
    objs.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
  const poolLines = pools.map(
    ({ pool, size }, i) =>
      `${sizeWhy(size, `worker pool ${built.mdNames[i]}`)}; replaces ${pool.nodes === ctx.cpNodes ? 'no kubeadm worker' : pool.nodes.map((x) => x.metadata.name).join(', ')}`,
  );
  const artifacts: Artifact[] = [
    {
      path: 'capi/secrets.yaml',
      content: `${head([
        'Secrets the Talos providers must find so they reuse the kubeadm PKI instead of generating new CAs (docs/rules.md#capi.secrets-not-precreated). Holds keys: keep it secret.',
        `Apply BEFORE capi/cluster.yaml: kubectl apply -f capi/secrets.yaml`,
        `After the Cluster exists, give them an owner so clusterctl move carries them (docs/rules.md#capi.secret-not-moved): for s in ca etcd sa proxy talos; do kubectl -n ${namespace} patch secret ${cluster}-$s --type merge -p "{\\"metadata\\":{\\"ownerReferences\\":[{\\"apiVersion\\":\\"cluster.x-k8s.io/v1beta2\\",\\"kind\\":\\"Cluster\\",\\"name\\":\\"${cluster}\\",\\"uid\\":\\"$(kubectl -n ${namespace} get cluster ${cluster} -o jsonpath='{.metadata.uid}')\\"}]}}"; done`,
      ])}\n${yamlDocs(clusterSecrets(cluster, namespace, bundle, values.release.version))}`,
      mode: 0o600,
      purpose:
        'Cluster API Secrets <cluster>-ca/-etcd/-sa/-proxy and <cluster>-talos (secrets bundle), move-labelled',
      step: 40,
      provenance: { 'Secret.data': [{ kind: 'file', path: 'secrets.yaml' }] },
      secret: true,
    },
    {
      path: 'capi/cluster.yaml',
      content: `${head([
        'Cluster API objects that adopt the running cluster: nothing is created (replicas 0) and the TalosControlPlane is paused.',
        'Apply after capi/secrets.yaml: kubectl apply -f capi/cluster.yaml, then patch the TalosControlPlane status (capi/tcp-status-patch.yaml).',
        sizeWhy(cp, 'control-plane'),
        ...poolLines,
        'Read capi/README.md first: the control-plane provider removes etcd members it does not own and does not drain.',
      ])}\n${yamlDocs(built.objects)}`,
      mode: 0o644,
      purpose: `Cluster, ${infra.clusterKind}, ${infra.templateKind}s, TalosControlPlane (replicas 0, paused), per worker pool a TalosConfigTemplate and a MachineDeployment (replicas 0)`,
      step: 41,
      provenance: built.provenance,
      secret: false,
      schema: { kind: 'capi', talosVersion: values.release.version },
    },
    {
      path: 'capi/tcp-status-patch.yaml',
      content: `${head([
        'Marks the TalosControlPlane bootstrapped BEFORE any of its Machines exists: the etcd cluster already exists, and an unbootstrapped TCP',
        'would call Talos Bootstrap on a node still waiting to join — a second etcd cluster (docs/rules.md#capi.bootstrap-split-brain). Re-apply after every clusterctl move (status is not moved).',
        `Apply: kubectl -n ${namespace} patch taloscontrolplane ${built.tcpName} --subresource=status --type=merge --patch-file capi/tcp-status-patch.yaml`,
        `Verify: kubectl -n ${namespace} get taloscontrolplane ${built.tcpName} -o jsonpath='{.status.bootstrapped}'   # true`,
      ])}\n${stringify(tcpStatusPatch())}`,
      mode: 0o644,
      purpose:
        'status.bootstrapped: true for the TalosControlPlane (status subresource), before its first Machine',
      step: 42,
      provenance: {},
      secret: false,
    },
    {
      path: 'capi/README.md',
      content: hazardsReadme(namespace, built.tcpName, values.clusterName.value),
      mode: 0o644,
      purpose:
        'the Cluster API hazards (CACPPT etcd audit, no drain on scale-down) and how the plan avoids them',
      step: 39,
      provenance: {},
      secret: false,
    },
  ];
  if (ctx.infra === 'proxmox')
    artifacts.push({
      path: CCM_VALUES,
      content: `${head([
        'talos-ccm: sets spec.providerID on the Talos nodes Cluster API creates (CAPMOX injects it, providerIDInjection) — without it their Machines stay Provisioned (docs/rules.md#capi.providerid-missing).',
        'It also approves the kubelet serving-certificate CSRs (rotate-server-certificates). Install it in the cluster being migrated, before the first Machine:',
        ccmInstallCommand(CCM_VALUES),
      ])}\n${stringify(ccmValues())}`,
      mode: 0o644,
      purpose: 'Helm values of talos-ccm (cloud-node, node-csr-approval), the CCM the Talos machines need',
      step: 43,
      provenance: {},
      secret: false,
    });
  return { kind: 'ok', artifacts, notes };
}

function hazardsReadme(ns: string, tcp: string, cluster: string): string {
  return `# Cluster API mode: hazards and how ferry's plan avoids them

The Talos control-plane provider (CACPPT) was built for clusters it created. Adopting a kubeadm
cluster crosses two of its assumptions; ferry's plan keeps both from firing.

1. **Its etcd audit removes members it does not own.** On every reconcile, once all its Machines
   have a Node, CACPPT removes each etcd member whose name is not one of its Machines — every kubeadm
   member, and with them the kubeadm apiservers. ferry keeps the TalosControlPlane paused
   (annotation \`cluster.x-k8s.io/paused\`) while any kubeadm etcd member remains, swaps members itself
   one at a time, and unpauses only after the last kubeadm member is gone:
   \`kubectl -n ${ns} annotate taloscontrolplane ${tcp} cluster.x-k8s.io/paused-\`
   Talos hostnames come from the infrastructure machine names (hostname.source InfrastructureName), the name
   the audit compares.
2. **It does not drain on control-plane scale-down.** CACPPT deletes the Machine and right after it the
   Node: no cordon, no eviction, PodDisruptionBudgets ignored. ferry drains each control plane
   itself (Eviction API, PDBs respected) before it removes a Machine. Workers are drained by ferry
   too: while no control-plane Machine exists, Cluster API skips drain and Node deletion.

Also in these manifests:
- \`status.bootstrapped: true\` on the TalosControlPlane before its first Machine (capi/tcp-status-patch.yaml):
  otherwise CACPPT bootstraps a second etcd cluster on a node that is still joining. Re-apply after a
  \`clusterctl move\`, which does not carry status.
- Rollout strategy OnDelete: any change to the control-plane config would otherwise roll every control
  plane at once; ferry replaces them one by one.
- One MachineDeployment per worker pool (workers sharing labels/taints only they have), each with
  its own TalosConfigTemplate whose last patch carries the pool's labels and taints; annotation
  \`ferry.dev/replaces\` names the kubeadm workers it replaces.
- Replicas 0 everywhere, and the MachineSet preflight skip (\`ControlPlaneIsStable\`), so nothing is
  created until the plan scales up, and workers are not held while the control plane is kubeadm.
- Secrets \`${cluster}-ca\`, \`-etcd\`, \`-sa\`, \`-proxy\` and \`${cluster}-talos\` carry the kubeadm PKI; the
  providers generate new CAs when they are missing, and new CAs cannot join this cluster.
- Talos never sets \`spec.providerID\`: run a cloud-controller-manager (Proxmox: talos-ccm,
  capi/talos-ccm-values.yaml; the templates inject the provider id, metadataSettings.providerIDInjection;
  vSphere: the vSphere cloud provider, whose provider ids are the ones CAPV expects).
  The Talos patches turn on the external cloud provider, kubelet serving-certificate rotation and
  (control planes) Talos API access from kube-system for it.
- CACPPT speaks only the v1beta1 contract: keep Cluster API at v1.15 or older.
`;
}
