/**
 * Item 6 of the kit (`--provisioner capi`): Cluster API manifests for a Talos control plane and
 * workers on Proxmox that adopt the running cluster, the Secrets the providers must find instead of
 * generating new PKI, the TalosControlPlane status patch, and the hazards the plan works around.
 */
import { stringify } from 'yaml';
import type { KubeObject } from '../../snapshot/model.js';
import type { Artifact, GenerateNote, GeneratorResult, MissingInput } from '../artifact.js';
import type { GenerateContext, Generator } from '../context.js';
import { strategicPatchText } from '../talos/generator.js';
import type { TalosValues } from '../talos/model.js';
import { deriveTalosValues } from '../talos/values.js';
import { type CapiInputs, capiObjects, names, tcpStatusPatch } from './objects.js';
import { CAPI_DEFAULT_NAMESPACE, type CapiOptions } from './options.js';
import { clusterSecrets } from './secrets.js';
import { roleSize } from './sizes.js';

export const capiGenerator: Generator = { name: 'capi', generate: generateCapi };

export function generateCapi(ctx: GenerateContext): GeneratorResult {
  if (ctx.target.provisioner !== 'capi') return { kind: 'ok', artifacts: [], notes: [] };
  if (ctx.target.infra !== 'proxmox') {
    return {
      kind: 'missing',
      missing: [
        {
          what: 'the infrastructure the Cluster API machines run on',
          why: 'ferry writes Cluster API manifests for Proxmox (CAPMOX) only',
          provideWith: '--infra proxmox',
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
    cpNodes,
    workerNodes,
    generatedBy: ctx.generatedBy,
  });
}

function nodesNamed(nodes: KubeObject[], wanted: string[]): KubeObject[] {
  return nodes.filter((n) => wanted.includes(n.metadata.name));
}

export function capiArtifacts(
  values: TalosValues,
  bundle: Parameters<typeof clusterSecrets>[2],
  opts: CapiOptions,
  ctx: { cpNodes: KubeObject[]; workerNodes: KubeObject[]; generatedBy: string[] },
): GeneratorResult {
  const missing: MissingInput[] = [];
  const notes: GenerateNote[] = [];
  const p = opts.proxmox ?? {};
  const flag = (value: unknown, what: string, provideWith: string) => {
    if (value === undefined)
      missing.push({
        what,
        why: 'ferry cannot read it from the cluster; the Proxmox manifests need it',
        provideWith,
      });
  };
  flag(p.sourceNode, 'the Proxmox node holding the Talos VM template', '--proxmox-source-node NODE');
  flag(p.templateId, 'the Talos VM template to clone', '--proxmox-template-id ID');
  flag(p.bridge, 'the bridge for the VMs network', '--proxmox-bridge BRIDGE');
  flag(p.ipv4Addresses, 'the IPv4 addresses CAPMOX may give the VMs', '--proxmox-ipv4-addresses a-b,CIDR,…');
  flag(p.ipv4Prefix, 'the prefix length of the VM network', '--proxmox-ipv4-prefix N');
  flag(p.ipv4Gateway, 'the VM network gateway', '--proxmox-ipv4-gateway IP');
  flag(p.dnsServers, 'DNS servers for the VMs', '--proxmox-dns-servers IP,…');
  const cp = roleSize(ctx.cpNodes, p.controlPlane);
  const worker = roleSize(ctx.workerNodes.length > 0 ? ctx.workerNodes : ctx.cpNodes, p.worker);
  for (const [role, s] of [
    ['cp', cp],
    ['worker', worker],
  ] as const) {
    if (s.cores === undefined)
      flag(
        undefined,
        `the CPU count of ${role} VMs (no Node capacity in the snapshot)`,
        `--proxmox-${role}-cores N`,
      );
    if (s.memoryMiB === undefined)
      flag(
        undefined,
        `the memory of ${role} VMs (no Node capacity in the snapshot)`,
        `--proxmox-${role}-memory-mib N`,
      );
    if (s.diskGb === undefined)
      flag(
        undefined,
        `the boot disk size of ${role} VMs (no Node capacity in the snapshot)`,
        `--proxmox-${role}-disk-gb N`,
      );
  }
  if (missing.length > 0) return { kind: 'missing', missing, notes };

  const namespace = opts.namespace ?? CAPI_DEFAULT_NAMESPACE;
  const inputs: CapiInputs = {
    namespace,
    values,
    controlPlanePatch: strategicPatchText(values, 'controlplane', { withoutHostname: true }),
    workerPatch: strategicPatchText(values, 'worker', { withoutHostname: true }),
    proxmox: {
      sourceNode: p.sourceNode!,
      templateId: p.templateId!,
      bridge: p.bridge!,
      ...(p.vlan !== undefined ? { vlan: p.vlan } : {}),
      ipv4Addresses: p.ipv4Addresses!,
      ipv4Prefix: p.ipv4Prefix!,
      ipv4Gateway: p.ipv4Gateway!,
      dnsServers: p.dnsServers!,
      ...(p.allowedNodes ? { allowedNodes: p.allowedNodes } : {}),
      ...(p.credentialsSecret ? { credentialsSecret: p.credentialsSecret } : {}),
      bootDisk: p.bootDisk ?? 'scsi0',
      ...(p.storage ? { storage: p.storage } : {}),
      controlPlane: { cores: cp.cores!, memoryMiB: cp.memoryMiB!, diskGb: cp.diskGb! },
      worker: { cores: worker.cores!, memoryMiB: worker.memoryMiB!, diskGb: worker.diskGb! },
    },
  };
  const built = capiObjects(inputs);
  const n = names(values.clusterName.value);
  notes.push({
    severity: 'info',
    message:
      `Talos nodes created by Cluster API are named after their ProxmoxMachines (${n.cpTemplate}-…, ${n.workerTemplate}-…, hostname.source InfrastructureName): ` +
      `random suffixes, never a kubeadm etcd member or Node name (hostname rule; ${values.hostnameRule.value})`,
  });
  const sizeWhy = (s: typeof cp, role: string) =>
    `${role} VMs: ${s.cores} cores, ${s.memoryMiB} MiB, ${s.diskGb} GB (${s.fromFlags.length > 0 ? `flags: ${s.fromFlags.join(', ')}; ` : ''}largest kubeadm ${role} node otherwise)`;
  const head = (lines: string[]) => [...lines, ...ctx.generatedBy].map((l) => `# ${l}`).join('\n');
  const yamlDocs = (objs: Record<string, unknown>[]) =>
    objs.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
  const artifacts: Artifact[] = [
    {
      path: 'capi/secrets.yaml',
      content: `${head([
        'Secrets the Talos providers must find so they reuse the kubeadm PKI instead of generating new CAs (docs/rules.md#capi.secrets-not-precreated). Holds keys: keep it secret.',
        `Apply BEFORE capi/cluster.yaml: kubectl apply -f capi/secrets.yaml`,
        `After the Cluster exists, give them an owner so clusterctl move carries them (docs/rules.md#capi.secret-not-moved): for s in ca etcd sa proxy talos; do kubectl -n ${namespace} patch secret ${values.clusterName.value}-$s --type merge -p "{\\"metadata\\":{\\"ownerReferences\\":[{\\"apiVersion\\":\\"cluster.x-k8s.io/v1beta2\\",\\"kind\\":\\"Cluster\\",\\"name\\":\\"${values.clusterName.value}\\",\\"uid\\":\\"$(kubectl -n ${namespace} get cluster ${values.clusterName.value} -o jsonpath='{.metadata.uid}')\\"}]}}"; done`,
      ])}\n${yamlDocs(clusterSecrets(values.clusterName.value, namespace, bundle, values.release.version))}`,
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
        sizeWhy(worker, 'worker'),
        'Read capi/README.md first: the control-plane provider removes etcd members it does not own and does not drain.',
      ])}\n${yamlDocs(built.objects)}`,
      mode: 0o644,
      purpose:
        'Cluster, ProxmoxCluster, ProxmoxMachineTemplates, TalosControlPlane (replicas 0, paused), TalosConfigTemplate, MachineDeployment (replicas 0)',
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
   Talos hostnames come from the ProxmoxMachine names (hostname.source InfrastructureName), the name
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
- Replicas 0 everywhere, and the MachineSet preflight skip (\`ControlPlaneIsStable\`), so nothing is
  created until the plan scales up, and workers are not held while the control plane is kubeadm.
- Secrets \`${cluster}-ca\`, \`-etcd\`, \`-sa\`, \`-proxy\` and \`${cluster}-talos\` carry the kubeadm PKI; the
  providers generate new CAs when they are missing, and new CAs cannot join this cluster.
- Talos never sets \`spec.providerID\`: run a cloud-controller-manager (talos-ccm or proxmox-ccm);
  the machine templates inject the provider id (metadataSettings.providerIDInjection).
- CACPPT speaks only the v1beta1 contract: keep Cluster API at v1.15 or older.
`;
}
