/**
 * What the GitOps repositories and the Terraform state must hold after the migration, written
 * into the kit: ferry pauses the Argo CD and Flux owners of what it changes and resumes them last,
 * once the operator confirms their repositories hold the changes (a resume before syncs them
 * away). gitops/README.md says per owner what to commit, with a file to commit where the change
 * is a field change; tofu/cluster-objects/ adopts what Terraform owned into a state of its own.
 */
import { parse, stringify } from 'yaml';
import type { OwnerGroup, TouchKind } from '../audit/rules/gitops.js';
import { ownerGroups } from '../audit/rules/gitops.js';
import { describeOwner, type Owner, ownerIndex } from '../audit/rules/gitops-owners.js';
import { buildIndex } from '../audit/snapshot-index.js';
import { KEEP_ON_REMOVAL } from '../knowledge/gitops.js';
import type { KubeObject } from '../snapshot/model.js';
import type { Artifact, GeneratorResult } from './artifact.js';
import { generateCilium } from './cilium.js';
import type { GenerateContext, Generator } from './context.js';

type Values = Record<string, unknown>;

export const gitopsGenerator: Generator = { name: 'gitops', generate: generateGitops };

/** The kit files for the snapshot's GitOps and Terraform owners (none when nothing is owned). */
export function generateGitops(ctx: GenerateContext): GeneratorResult {
  const groups = ownerGroups(
    { snapshot: ctx.snapshot, facts: ctx.facts, target: ctx.target, index: buildIndex(ctx.snapshot) },
    ownerIndex(ctx.snapshot.resources.gitops),
  );
  // Most clusters have no GitOps or Terraform owner: no files, and no second run of the Cilium generator.
  if (groups.length === 0) return { kind: 'ok', notes: [], artifacts: [] };
  return {
    kind: 'ok',
    notes: [],
    artifacts: gitopsArtifacts(groups, {
      ciliumValues: finalCiliumValues(ctx),
      generatedBy: ctx.generatedBy,
    }),
  };
}

/** The values of the kit's cilium/values-talos.yaml, read from the Cilium generator itself so both say the same. */
function finalCiliumValues(ctx: GenerateContext): Values | undefined {
  const r = generateCilium(ctx);
  if (r.kind !== 'ok') return undefined;
  const file = r.artifacts.find((a) => a.path === CILIUM_FINAL);
  return file ? (parse(file.content) as Values) : undefined;
}

const CILIUM_FINAL = 'cilium/values-talos.yaml';

export interface GitopsInputs {
  /** Cilium's values once every node is Talos (cilium/values-talos.yaml), when the kit has them. */
  ciliumValues: Values | undefined;
  generatedBy: readonly string[];
}

export function gitopsArtifacts(groups: readonly OwnerGroup[], inputs: GitopsInputs): Artifact[] {
  const repoOwners = groups.filter((g) => g.owner.tool !== 'iac');
  const iac = groups.filter((g) => g.owner.tool === 'iac');
  const out: Artifact[] = [];
  if (repoOwners.length > 0) {
    const sections = repoOwners.map((g) => ownerSection(g, inputs));
    out.push(...sections.flatMap((s) => s.files));
    out.push({
      path: 'gitops/README.md',
      content: readme(sections.map((s) => s.text)),
      mode: 0o644,
      purpose: "what each Argo CD / Flux owner's repository must hold before ferry resumes it",
      step: 95,
      provenance: {},
      secret: false,
    });
  }
  if (iac.length > 0) out.push(tofuObjects(iac, inputs.generatedBy));
  return out;
}

// ---------------------------------------------------------------------------------------------

const label = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

function slugOf(o: Owner): string {
  switch (o.tool) {
    case 'argocd':
      return o.object
        ? `argocd-${o.object.metadata.namespace ?? 'argocd'}-${o.object.metadata.name}`
        : `argocd-${o.app}`;
    case 'flux':
      return `flux-${o.kind.toLowerCase()}-${o.namespace}-${o.name}`;
    case 'iac':
      return `iac-${o.manager.toLowerCase()}`;
  }
}

function sourceOf(o: Owner): string {
  if (o.tool === 'iac' || !o.object) return 'not in the snapshot: its source was not seen';
  const spec = o.object.spec ?? {};
  if (o.tool === 'argocd') {
    const sources = [spec.source, ...(Array.isArray(spec.sources) ? spec.sources : [])].filter(Boolean);
    return sources.length === 0
      ? 'no source in its spec'
      : sources
          .map(
            (s: Values) =>
              `${s['repoURL']}${s['path'] ? ` path ${s['path']}` : ''}${s['chart'] ? ` chart ${s['chart']}` : ''}${s['targetRevision'] ? ` at ${s['targetRevision']}` : ''}`,
          )
          .join('; ');
  }
  if (o.kind === 'HelmRelease') {
    const chart = spec.chart?.spec;
    return chart
      ? `chart ${chart.chart}${chart.version ? ` ${chart.version}` : ''} from ${chart.sourceRef?.kind ?? 'source'} ${chart.sourceRef?.name ?? '?'}`
      : spec.chartRef
        ? `${spec.chartRef.kind} ${spec.chartRef.name}`
        : 'no chart in its spec';
  }
  return `${spec.sourceRef?.kind ?? 'source'} ${spec.sourceRef?.name ?? '?'}${spec.path ? `, path ${spec.path}` : ''}`;
}

/** The owner kind whose keep-on-removal marker applies (Argo CD, a Kustomization, a HelmRelease). */
function ownerKind(o: Exclude<Owner, { tool: 'iac' }>): keyof typeof KEEP_ON_REMOVAL {
  return o.tool === 'argocd' ? 'Application' : o.kind;
}

/** Whether the owner renders a Helm chart, so Cilium's values go into the owner itself. */
function helmSource(o: Owner): 'helmrelease' | 'argocd-chart' | undefined {
  if (o.tool === 'flux' && o.kind === 'HelmRelease') return 'helmrelease';
  if (o.tool === 'argocd' && o.object?.spec?.source?.chart && !o.object.spec.sources) return 'argocd-chart';
  return undefined;
}

interface Section {
  text: string;
  files: Artifact[];
}

function ownerSection(g: OwnerGroup, inputs: GitopsInputs): Section {
  const o = g.owner as Exclude<Owner, { tool: 'iac' }>;
  const slug = slugOf(o);
  const files: Artifact[] = [];
  const lines: string[] = [`## ${describeOwner(o)}`, '', `Source: ${sourceOf(o)}.`, ''];
  lines.push(
    o.object && o.reconcile !== 'manual'
      ? '`ferry plan` pauses it first in phase 1 and resumes it last in after-care, once you confirm that its repository holds what follows.'
      : o.object
        ? 'It reconciles only by hand: do not sync it until its repository holds what follows.'
        : 'It is not in the snapshot, so ferry cannot pause it: turn its reconciliation off where it runs before the migration, and back on once its repository holds what follows.',
    '',
  );
  const byChange = new Map<TouchKind, KubeObject[]>();
  for (const { t } of g.touched) byChange.set(t.change, [...(byChange.get(t.change) ?? []), t.object]);
  for (const [change, objects] of byChange) {
    const names = objects.map(label).join(', ');
    switch (change) {
      case 'cilium-values': {
        const file = `gitops/${slug}.cilium-values.yaml`;
        const helm = helmSource(o);
        if (!inputs.ciliumValues) {
          lines.push(
            `- ${names}: Cilium's values change. This kit has no ${CILIUM_FINAL} (its inputs were missing), so commit the values \`ferry generate\` writes there once it can.`,
          );
          break;
        }
        files.push(
          artifact(
            file,
            ciliumPatch(o, helm, inputs.ciliumValues),
            `Cilium's final values for ${describeOwner(o)}`,
          ),
        );
        lines.push(
          helm === 'helmrelease'
            ? `- ${names}: Cilium's values change. \`${file}\` is a patch of the HelmRelease that sets \`spec.values\` to those of \`${CILIUM_FINAL}\`: merge it into the HelmRelease in the repository (the values are merged over the chart's defaults, as \`helm upgrade -f\` does).`
            : helm === 'argocd-chart'
              ? `- ${names}: Cilium's values change. \`${file}\` is a patch of the Application that sets \`spec.source.helm.valuesObject\` to the values of \`${CILIUM_FINAL}\`: merge it into the Application (or into the values file it names).`
              : `- ${names}: Cilium's values change. The repository holds rendered manifests, so render them again with \`${file}\` (the values of \`${CILIUM_FINAL}\`) over the values they were rendered with, and commit the result.`,
        );
        break;
      }
      case 'talos-adopts': {
        const keep = KEEP_ON_REMOVAL[ownerKind(o)];
        lines.push(
          `- ${names}: Talos takes these over (its own manifests, applied again by \`talosctl upgrade-k8s\`). Take them out of the repository, but first mark the objects so that removing them does not delete them:`,
          '',
          '  ```sh',
          ...objects.map((x) => `  ${annotate(x, keep.key, keepValue(x, keep))}`),
          '  ```',
        );
        break;
      }
      case 'budget-relaxed': {
        for (const pdb of objects) {
          const file = `gitops/${slug}.pdb-${pdb.metadata.namespace ?? 'default'}-${pdb.metadata.name}.yaml`;
          files.push(artifact(file, pdbPatch(pdb), `the relaxed budget ${label(pdb)}, as a patch`));
          lines.push(
            `- ${label(pdb)} allows no disruption. If you relax it for the migration (maxUnavailable: 1, see \`ferry audit\`), make the change in the repository, not in the cluster: \`${file}\` is that change as a strategic-merge patch.`,
          );
        }
        break;
      }
      case 'surged':
        lines.push(
          `- ${names}: \`ferry run --surge-replicas\` adds a replica while a budget holds their drains, and the run's restore step in phase 3 takes it away again: nothing to commit; the pause keeps the owner from scaling them back mid-drain.`,
        );
        break;
    }
  }
  lines.push('');
  return { text: lines.join('\n'), files };
}

function readme(sections: readonly string[]): string {
  return [
    '# The GitOps repositories after the migration',
    '',
    "Argo CD and Flux put back what they own. ferry changes some of it (Cilium's values; Talos takes kube-proxy and CoreDNS over), so each owner below is paused for the migration and given back its reconciliation last, once its repository holds the changes. Commit what its section says before you confirm the resume step: resuming first syncs the old state back onto the Talos nodes.",
    '',
    ...sections,
  ].join('\n');
}

function artifact(path: string, content: string, purpose: string): Artifact {
  return { path, content, mode: 0o644, purpose, step: 95, provenance: {}, secret: false };
}

function ciliumPatch(o: Owner, helm: 'helmrelease' | 'argocd-chart' | undefined, values: Values): string {
  if (helm === undefined || o.tool === 'iac' || !o.object)
    return `# Cilium's values once every node is Talos (the kit's ${CILIUM_FINAL}).\n${stringify(values, { lineWidth: 0 })}`;
  const meta = { name: o.object.metadata.name, namespace: o.object.metadata.namespace };
  const spec = helm === 'helmrelease' ? { values } : { source: { helm: { valuesObject: values } } };
  return `# Merge into ${describeOwner(o)} in its repository (values of the kit's ${CILIUM_FINAL}).\n${stringify({ apiVersion: o.object.apiVersion, kind: o.object.kind, metadata: meta, spec }, { lineWidth: 0 })}`;
}

function pdbPatch(pdb: KubeObject): string {
  const meta = { name: pdb.metadata.name, namespace: pdb.metadata.namespace ?? 'default' };
  // null removes minAvailable in a strategic-merge patch: a budget may set only one of the two.
  const spec = { maxUnavailable: 1, ...(pdb.spec?.minAvailable !== undefined ? { minAvailable: null } : {}) };
  return stringify(
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta, spec },
    { lineWidth: 0 },
  );
}

/** Argo CD's sync options are one comma-separated annotation: keep the ones already there. */
function keepValue(o: KubeObject, keep: { key: string; value: string }): string {
  const had = o.metadata.annotations?.[keep.key];
  if (keep.key !== KEEP_ON_REMOVAL.Application.key || !had) return keep.value;
  return had.split(',').some((x) => x.trim() === keep.value) ? had : `${had},${keep.value}`;
}

const resourceOf = (o: KubeObject) => {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}`;
};

function annotate(o: KubeObject, key: string, value: string): string {
  const ns = o.metadata.namespace ? `-n ${o.metadata.namespace} ` : '';
  return `kubectl ${ns}annotate --overwrite ${resourceOf(o)} ${o.metadata.name} '${key}=${value}'`;
}

// ---------------------------------------------------------------------------------------------
// Terraform/OpenTofu

const hclName = (o: KubeObject) =>
  `${o.kind}_${o.metadata.namespace ?? 'cluster'}_${o.metadata.name}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');

function tofuObjects(groups: readonly OwnerGroup[], generatedBy: readonly string[]): Artifact {
  const all = groups.flatMap((g) => g.touched.map((x) => x.t));
  const adopted = all.filter((t) => t.change !== 'talos-adopts').map((t) => t.object);
  const forget = all.filter((t) => t.change === 'talos-adopts').map((t) => t.object);
  const lines = [
    '# OpenTofu / Terraform: the objects it managed that the migration changed, adopted as they now are.',
    '#',
    '# In the configuration that managed them, first let go of them without deleting them: a removed',
    '# block per resource (lifecycle { destroy = false }) in place of its resource block, or',
    '# tofu state rm ADDRESS and delete the block (tofu state list shows the addresses). Then here:',
    '#   tofu init && tofu plan -var kubeconfig=PATH -generate-config-out=generated.tf',
    `# The plan must say "${adopted.length} to import, 0 to add, 0 to change, 0 to destroy"; then tofu apply.`,
    ...(forget.length > 0
      ? [
          '#',
          '# Talos manages these now (its own manifests): take them out of the state, do not import them:',
          ...forget.map((o) => `#   ${label(o)}`),
        ]
      : []),
    ...generatedBy.map((l) => `# ${l}`),
    '',
    'terraform {',
    '  required_version = ">= 1.6.0" # import blocks with -generate-config-out',
    '  required_providers {',
    '    kubernetes = {',
    '      source = "hashicorp/kubernetes"',
    '    }',
    '  }',
    '}',
    '',
    'variable "kubeconfig" {',
    '  type        = string',
    '  description = "kubeconfig of the migrated cluster"',
    '}',
    '',
    'provider "kubernetes" {',
    '  config_path = var.kubeconfig',
    '}',
    '',
    ...adopted.flatMap((o) => [
      'import {',
      `  to = kubernetes_manifest.${hclName(o)}`,
      `  id = "apiVersion=${o.apiVersion},kind=${o.kind},${o.metadata.namespace ? `namespace=${o.metadata.namespace},` : ''}name=${o.metadata.name}"`,
      '}',
      '',
    ]),
  ];
  return {
    path: 'tofu/cluster-objects/main.tf',
    content: lines.join('\n'),
    mode: 0o644,
    purpose: 'OpenTofu import blocks that adopt the Terraform-managed objects the migration changed',
    step: 95,
    provenance: {},
    secret: false,
  };
}
