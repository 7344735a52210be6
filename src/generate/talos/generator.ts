/**
 * Item 2 of the kit: Talos machine configs. For every planned node the complete config it boots
 * with (secrets + role patch + node or group patch, mode 0600; machines.ts), the index of them
 * the plan reads (talos/machines.json), and the patches themselves (legacy v1alpha1 form for
 * Talos ≤ v1.13, multi-document for v1.14) for operators who build configs their own way
 * (talosctl gen config, OpenTofu's talos provider): role patches, per-node patches that pin
 * control-plane hostnames, per-group patches for worker labels. `--full` adds complete configs
 * per worker role and group, for workers beyond the plan.
 */

import { KIT } from '../../knowledge/kit-paths.js';
import type { Artifact, GenerateNote, GeneratorResult } from '../artifact.js';
import { blocked, type GenerateContext, type Generator } from '../context.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { provenanceOf, renderDocs, type TalosDoc } from './doc.js';
import {
  groupPatchDocs,
  kitMachines,
  nodePatchDocs,
  plannedMachines,
  roleConfigDocs,
  rolePatchDocs,
} from './machines.js';
import { mergeDocs } from './merge.js';
import type { Role, TalosValues } from './model.js';
import { deriveTalosValues } from './values.js';

export const talosGenerator: Generator = { name: 'talos', generate: generateTalos };

export function generateTalos(ctx: GenerateContext): GeneratorResult {
  const derived = deriveTalosValues(ctx.facts);
  if (derived.kind === 'missing') return derived;
  const { values, notes } = derived;
  // Without the bundle there is no complete config; the missing input is reported by prepareContext.
  if (!ctx.secrets) return { ...blocked(), notes };
  const bundle = ctx.secrets.bundle;
  const artifacts = [
    ...talosPatchArtifacts(values, ctx.generatedBy),
    ...talosNodeConfigArtifacts(values, bundle, ctx.generatedBy),
  ];
  if (ctx.options.full) artifacts.push(...talosFullArtifacts(values, bundle, ctx.generatedBy));
  notes.push(...fullNotes(bundle));
  return { kind: 'ok', artifacts, notes };
}

/** Every patch the kit ships, by kit path. */
export function patchDocsByPath(
  v: TalosValues,
): Map<string, { docs: TalosDoc[]; header: string[]; purpose: string; step: number }> {
  const multi = v.release.configFormat === 'multidoc';
  const form = multi ? 'multi-document form' : 'legacy v1alpha1 form';
  const out = new Map<string, { docs: TalosDoc[]; header: string[]; purpose: string; step: number }>();
  const use = [
    'The complete config of each planned node is in talos/full/ (talos/machines.json says which); use this patch to build configs your own way.',
    `Use (in the kit directory): talosctl gen config ${v.clusterName.value} ${v.endpoint.value} --with-secrets ${KIT.secrets} --talos-version v${v.release.minor} \\`,
    `       --kubernetes-version ${v.kubernetesVersion.value.replace(/^v/, '')} --config-patch-control-plane @${KIT.controlPlanePatch} --config-patch-worker @${KIT.workerPatch}`,
  ];
  out.set(KIT.controlPlanePatch, {
    docs: rolePatchDocs(v, 'controlplane'),
    header: [
      `Talos ${v.release.version} machine-config patch for control planes (${form}), derived from the kubeadm cluster.`,
      ...use,
    ],
    purpose: `Talos ${v.release.minor} control-plane patch: endpoint, CIDRs, DNS domain, apiserver flags, issuers, PodSecurity, CNI none, etcd pin, KubePrism`,
    step: 20,
  });
  out.set(KIT.workerPatch, {
    docs: rolePatchDocs(v, 'worker'),
    header: [
      `Talos ${v.release.version} machine-config patch for workers (${form}), derived from the kubeadm cluster.`,
      ...use,
    ],
    purpose: `Talos ${v.release.minor} worker patch: endpoint, CIDRs, DNS domain, kubelet settings, labels/taints, KubePrism`,
    step: 21,
  });
  for (const r of v.controlPlane.replacements) {
    const path = KIT.nodePatch(r.hostname.value);
    out.set(path, {
      docs: nodePatchDocs(v, r),
      header: [
        `Per-node patch for the Talos control plane that replaces kubeadm node ${r.replaces}: its hostname (never a live etcd member name) and the labels/taints only ${r.replaces} had.`,
        `Use: after ${KIT.controlPlanePatch}, e.g. talosctl gen config … --config-patch-control-plane @${KIT.controlPlanePatch} --config-patch-control-plane @${path}`,
      ],
      purpose: `hostname and own labels of the Talos control plane replacing ${r.replaces}`,
      step: 22,
    });
  }
  for (const g of v.workers.groups) {
    const path = KIT.workerGroupPatch(g.name);
    out.set(path, {
      docs: groupPatchDocs(v, g),
      header: [
        `Worker group patch: labels/taints shared by ${g.nodes.join(', ')} beyond the worker patch. Apply it after ${KIT.workerPatch} to the Talos workers that replace them.`,
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
    schema: { kind: 'talos', mode: 'patch', talosVersion: v.release.version },
  }));
}

/** The complete config of each planned node (0600) and talos/machines.json, the plan's index of them. */
export function talosNodeConfigArtifacts(
  v: TalosValues,
  bundle: TalosSecretsBundle,
  generatedBy: string[],
): Artifact[] {
  const machines = plannedMachines(v, bundle);
  const configs = machines.map(
    (m): Artifact =>
      completeConfigArtifact(v, m.config, m.about, m.docs, generatedBy, [
        `Made as: talosctl gen config --with-secrets ${KIT.secrets} … ${m.patches.map((p) => `--config-patch @${p}`).join(' ')}`,
      ]),
  );
  const index: Artifact = {
    path: KIT.machines,
    content: `${JSON.stringify(kitMachines(v, bundle, machines), null, 2)}\n`,
    mode: 0o644,
    purpose: 'which complete machine config and which patches each planned node takes (read by ferry plan)',
    step: 25,
    provenance: {},
    secret: false,
  };
  return [...configs, index];
}

/** `--full`: complete worker configs per role and per group, for workers beyond the plan. */
export function fullConfigDocs(
  v: TalosValues,
  bundle: TalosSecretsBundle,
): Map<string, { docs: TalosDoc[]; about: string }> {
  const worker = roleConfigDocs(v, bundle, 'worker');
  const out = new Map<string, { docs: TalosDoc[]; about: string }>();
  out.set(KIT.workerRoleConfig, { docs: worker, about: 'workers beyond the plan (no group labels)' });
  for (const g of v.workers.groups) {
    out.set(KIT.workerGroupConfig(g.name), {
      docs: mergeDocs(worker, groupPatchDocs(v, g)),
      about: `workers of group ${g.name} beyond the plan (like ${g.nodes.join(', ')})`,
    });
  }
  return out;
}

export function talosFullArtifacts(
  v: TalosValues,
  bundle: TalosSecretsBundle,
  generatedBy: string[],
): Artifact[] {
  return [...fullConfigDocs(v, bundle)].map(([path, f]) =>
    completeConfigArtifact(v, path, f.about, f.docs, generatedBy, []),
  );
}

function completeConfigArtifact(
  v: TalosValues,
  path: string,
  about: string,
  docs: TalosDoc[],
  generatedBy: string[],
  extra: string[],
): Artifact {
  return {
    path,
    content: renderDocs(
      [
        `Complete Talos ${v.release.version} machine config for ${about}: secrets.yaml + the kit's patches. Holds private keys: keep it secret.`,
        ...extra,
        `Use (in the kit directory): talosctl apply-config --insecure --nodes <IP> --file ${path}   (set machine.install.disk first when installing to disk)`,
        ...generatedBy,
      ],
      docs,
    ),
    mode: 0o600,
    purpose: `complete Talos machine config for ${about} (holds keys)`,
    step: 24,
    provenance: provenanceOf(docs),
    secret: true,
    schema: { kind: 'talos', mode: 'full', talosVersion: v.release.version },
  };
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
