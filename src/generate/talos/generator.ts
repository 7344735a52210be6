/**
 * Item 2 of the kit: Talos machine-config patches for control planes and workers (legacy v1alpha1
 * form for Talos ≤ v1.13, multi-document for v1.14), per-node patches that pin control-plane
 * hostnames, per-group patches for worker labels, and with `--full` complete machine configs
 * (secrets + patches, mode 0600).
 */

import type { Artifact, GenerateNote, GeneratorResult } from '../artifact.js';
import type { GenerateContext, Generator } from '../context.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { provenanceOf, renderDocs, type TalosDoc } from './doc.js';
import { baseConfig } from './full.js';
import { legacyGroupPatch, legacyNodePatch, legacyRolePatch } from './legacy.js';
import { mergeDocs } from './merge.js';
import type { Role, TalosValues } from './model.js';
import { multidocGroupPatch, multidocNodePatch, multidocRolePatch } from './multidoc.js';
import { deriveTalosValues } from './values.js';

export const talosGenerator: Generator = { name: 'talos', generate: generateTalos };

export function generateTalos(ctx: GenerateContext): GeneratorResult {
  const derived = deriveTalosValues(ctx.facts);
  if (derived.kind === 'missing') return derived;
  const { values, notes } = derived;
  const artifacts = talosPatchArtifacts(values, ctx.generatedBy);
  if (ctx.options.full) {
    if (!ctx.secrets) return { kind: 'missing', missing: [], notes };
    artifacts.push(...talosFullArtifacts(values, ctx.secrets.bundle, ctx.generatedBy));
    notes.push(...fullNotes(ctx.secrets.bundle));
  }
  return { kind: 'ok', artifacts, notes };
}

/** The documents of a role patch, in the form the target release reads. */
export function rolePatchDocs(v: TalosValues, role: Role): TalosDoc[] {
  return v.release.configFormat === 'multidoc' ? multidocRolePatch(v, role) : legacyRolePatch(v, role);
}

/** Every patch the kit ships, by kit path. */
export function patchDocsByPath(
  v: TalosValues,
): Map<string, { docs: TalosDoc[]; header: string[]; purpose: string; step: number }> {
  const multi = v.release.configFormat === 'multidoc';
  const form = multi ? 'multi-document form' : 'legacy v1alpha1 form';
  const out = new Map<string, { docs: TalosDoc[]; header: string[]; purpose: string; step: number }>();
  const use = [
    `Use: talosctl gen config --with-secrets secrets.yaml ${v.clusterName.value} ${v.endpoint.value} --talos-version ${v.release.version} \\`,
    `       --kubernetes-version ${v.kubernetesVersion.value.replace(/^v/, '')} --config-patch-control-plane @talos/controlplane-patch.yaml --config-patch-worker @talos/worker-patch.yaml`,
    'or take the complete configs from talos/full/ (ferry generate --full), which need no talosctl gen step.',
  ];
  out.set('talos/controlplane-patch.yaml', {
    docs: rolePatchDocs(v, 'controlplane'),
    header: [
      `Talos ${v.release.version} machine-config patch for control planes (${form}), derived from the kubeadm cluster.`,
      ...use,
    ],
    purpose: `Talos ${v.release.minor} control-plane patch: endpoint, CIDRs, DNS domain, apiserver flags, issuers, PodSecurity, CNI none, etcd pin, KubePrism`,
    step: 20,
  });
  out.set('talos/worker-patch.yaml', {
    docs: rolePatchDocs(v, 'worker'),
    header: [
      `Talos ${v.release.version} machine-config patch for workers (${form}), derived from the kubeadm cluster.`,
      ...use,
    ],
    purpose: `Talos ${v.release.minor} worker patch: endpoint, CIDRs, DNS domain, kubelet settings, labels/taints, KubePrism`,
    step: 21,
  });
  for (const r of v.controlPlane.replacements) {
    out.set(`talos/nodes/${r.hostname.value}.yaml`, {
      docs: multi ? multidocNodePatch(r.hostname, r.own) : legacyNodePatch(v, r.hostname, r.own),
      header: [
        `Per-node patch for the Talos control plane that replaces kubeadm node ${r.replaces}: its hostname (never a live etcd member name) and the labels/taints only ${r.replaces} had.`,
        `Use: talosctl machineconfig patch controlplane.yaml --patch @talos/nodes/${r.hostname.value}.yaml -o ${r.hostname.value}.yaml`,
      ],
      purpose: `hostname and own labels of the Talos control plane replacing ${r.replaces}`,
      step: 22,
    });
  }
  for (const g of v.workers.groups) {
    out.set(`talos/worker-groups/${g.name}.yaml`, {
      docs: multi ? multidocGroupPatch(g.own) : legacyGroupPatch(g.own),
      header: [
        `Worker group patch: labels/taints shared by ${g.nodes.join(', ')} beyond the worker patch. Apply it to the Talos workers that replace them.`,
      ],
      purpose: `labels/taints of the worker group ${g.name} (${g.nodes.length} node(s))`,
      step: 23,
    });
  }
  return out;
}

export function talosPatchArtifacts(v: TalosValues, generatedBy: string[]): Artifact[] {
  return [...patchDocsByPath(v)].map(([path, p]) => ({
    path,
    content: renderDocs([...p.header, ...generatedBy], p.docs),
    mode: 0o644,
    purpose: p.purpose,
    step: p.step,
    provenance: provenanceOf(p.docs),
    secret: false,
  }));
}

/** Complete configs: one per control-plane replacement, the worker config, and one per worker group. */
export function fullConfigDocs(
  v: TalosValues,
  bundle: TalosSecretsBundle,
): Map<string, { docs: TalosDoc[]; about: string }> {
  const multi = v.release.configFormat === 'multidoc';
  const cp = mergeDocs(baseConfig(v, bundle, 'controlplane'), rolePatchDocs(v, 'controlplane'));
  const worker = mergeDocs(baseConfig(v, bundle, 'worker'), rolePatchDocs(v, 'worker'));
  const out = new Map<string, { docs: TalosDoc[]; about: string }>();
  for (const r of v.controlPlane.replacements) {
    const node = multi ? multidocNodePatch(r.hostname, r.own) : legacyNodePatch(v, r.hostname, r.own);
    out.set(`talos/full/${r.hostname.value}.yaml`, {
      docs: mergeDocs(cp, node),
      about: `control plane ${r.hostname.value} (replaces ${r.replaces})`,
    });
  }
  out.set('talos/full/worker.yaml', { docs: worker, about: 'workers' });
  for (const g of v.workers.groups) {
    const patch = multi ? multidocGroupPatch(g.own) : legacyGroupPatch(g.own);
    out.set(`talos/full/worker-${g.name}.yaml`, {
      docs: mergeDocs(worker, patch),
      about: `workers of group ${g.name} (${g.nodes.join(', ')})`,
    });
  }
  return out;
}

export function talosFullArtifacts(
  v: TalosValues,
  bundle: TalosSecretsBundle,
  generatedBy: string[],
): Artifact[] {
  return [...fullConfigDocs(v, bundle)].map(([path, f]) => ({
    path,
    content: renderDocs(
      [
        `Complete Talos ${v.release.version} machine config for ${f.about}: secrets.yaml + the kit's patches. Holds private keys: keep it secret.`,
        `Use: talosctl apply-config --insecure --nodes <IP> --file ${path}   (set machine.install.disk first when installing to disk)`,
        ...generatedBy,
      ],
      f.docs,
    ),
    mode: 0o600,
    purpose: `complete Talos machine config for ${f.about} (holds keys)`,
    step: 24,
    provenance: provenanceOf(f.docs),
    secret: true,
  }));
}

function fullNotes(bundle: TalosSecretsBundle): GenerateNote[] {
  if (bundle.secrets.secretboxEncryptionSecret || bundle.secrets.aescbcEncryptionSecret) return [];
  return [
    {
      severity: 'info',
      message:
        'the complete machine configs carry no encryption key (secrets.yaml has none): Talos apiservers store Secrets like the cluster does now',
    },
  ];
}

/** A role patch as one strategic-merge patch string without comments (CABPT `strategicPatches`). */
export function strategicPatchText(v: TalosValues, role: Role, opts: { withoutHostname: boolean }): string {
  const docs = rolePatchDocs(v, role)
    .filter((d) => !(opts.withoutHostname && d.body['kind'] === 'HostnameConfig'))
    .map((d) => ({ label: d.label, body: d.body, annotations: [] }));
  return renderDocs([], docs);
}
