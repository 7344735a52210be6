/**
 * The Talos bootstrap configs Cluster API holds: a control-plane Machine's TalosConfig that no
 * longer equals the TalosControlPlane spec it was copied from (capi.md H7), and RFC 6902
 * `configPatches` aimed at a multi-document Talos config (capi.md H16, §3).
 */
import { specDifferences } from '../../capi/spec-diff.js';
import {
  bootstrapConfigRef,
  clusterNameOf,
  clusterOfControlPlane,
  controlPlaneMachines,
  spec,
  talosConfigs,
  talosConfigTemplates,
  talosControlPlanes,
  versionBelow,
} from '../../capi/view.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Evidence } from '../findings.js';
import { type Rule, type RuleFinding, skip } from '../rule.js';
import { DOCS, withMgmt } from './capi-mgmt.js';
import { KIT } from './kit-paths.js';
import { capped, objectEvidence } from './shared.js';

export const talosconfigDrift: Rule = {
  id: 'capi.talosconfig-drift',
  family: 'capi',
  severity: 'risk',
  title: "A control-plane Machine's TalosConfig differs from its TalosControlPlane",
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    "CACPPT compares each control-plane Machine's TalosConfig spec with the TalosControlPlane's controlPlaneConfig.controlplane; any difference marks the Machine outdated: with RollingUpdate it is replaced, with OnDelete it is the first removed on a scale-down.",
  docs: DOCS('capi.talosconfig-drift'),
  artifacts: [KIT.capiCluster],
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      const unseen: string[] = [];
      const configs = new Map(talosConfigs(m).map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
      for (const tcp of talosControlPlanes(m)) {
        const ns = tcp.metadata.namespace;
        const cluster = clusterOfControlPlane(m, tcp);
        const name = cluster?.metadata.name ?? clusterNameOf(tcp) ?? tcp.metadata.name;
        const want = spec(tcp, 'controlPlaneConfig', 'controlplane');
        const strategy = spec(tcp, 'rolloutStrategy', 'type') ?? 'RollingUpdate';
        for (const x of controlPlaneMachines(m, ns, name)) {
          const ref = bootstrapConfigRef(x);
          const config = ref?.kind === 'TalosConfig' ? configs.get(`${ns}/${ref.name}`) : undefined;
          // Fail closed: a Machine whose config ferry cannot read may be the one that rolls.
          if (!config) {
            unseen.push(
              ref
                ? `${ref.kind} ${ref.name} of Machine ${x.metadata.name}`
                : `the bootstrap config of Machine ${x.metadata.name} (no spec.bootstrap.configRef)`,
            );
            continue;
          }
          const diffs = specDifferences(config.spec, want);
          if (diffs.length === 0) continue;
          const { shown, more } = capped(diffs, 5);
          out.push({
            message: `Machine ${x.metadata.name}'s TalosConfig ${config.metadata.name} differs from TalosControlPlane ${tcp.metadata.name}'s controlPlaneConfig.controlplane in ${shown.map((d) => d.path).join(', ')}${more > 0 ? ` and ${more} more` : ''}: CACPPT treats the Machine as outdated — ${strategy === 'OnDelete' ? 'with OnDelete it is the first control plane removed on a scale-down (no drain), and every such Machine rolls once the strategy is RollingUpdate' : 'with RollingUpdate it replaces every such control plane, one after another, without ferry'}.`,
            evidence: shown.map(
              (d): Evidence =>
                objectEvidence(config, `spec.${d.path}`, {
                  observed: d.config ?? 'absent',
                  expected: `${d.controlPlane ?? 'absent'} (TalosControlPlane ${tcp.metadata.name})`,
                }),
            ),
            remediation: `Keep TalosControlPlane ${tcp.metadata.name} paused and make its controlPlaneConfig.controlplane equal to what its Machines were created from (compare: kubectl -n ${ns ?? 'default'} get talosconfig ${config.metadata.name} -o jsonpath='{.spec}'), or replace the control planes one at a time with ferry; never edit the TalosControlPlane spec while CACPPT may roll it.`,
          });
        }
      }
      if (unseen.length > 0)
        return skip(
          unseen,
          'take the snapshot with --mgmt-kubeconfig (it lists every TalosConfig): without the TalosConfig ferry cannot tell whether the Machine will be rolled',
        );
      return out;
    }),
};

/** Talos 1.12 is the first release whose generated machine config has more than one document. */
export const TALOS_MULTIDOC_FROM = 'v1.12';

/** Why a TalosConfig spec yields a multi-document Talos config, or undefined when it does not. */
function multidocReason(s: Record<string, unknown>): string | undefined {
  const v = s['talosVersion'];
  // CABPT defaults an unset talosVersion to the newest release it knows, multi-document for current releases.
  if (typeof v !== 'string' || v === '')
    return 'talosVersion is unset (CABPT picks the newest release it knows)';
  if (!versionBelow(v, TALOS_MULTIDOC_FROM)) return `talosVersion ${v} generates a multi-document config`;
  const data = s['data'];
  if (typeof data === 'string' && /^---\s*$/m.test(data.trim()))
    return 'its config data has several documents';
  const patches = Array.isArray(s['strategicPatches']) ? s['strategicPatches'] : [];
  if (patches.some((p) => typeof p === 'string' && /^kind:\s*\S/m.test(p) && /^apiVersion:/m.test(p)))
    return 'a strategic patch adds a separate config document';
  return undefined;
}

interface Patch {
  op?: unknown;
  path?: unknown;
}

/** The TalosConfig specs a management cluster holds that CABPT renders into configs: TCPs and templates. */
function configSpecs(
  tcps: KubeObject[],
  templates: KubeObject[],
): { object: KubeObject; field: string; spec: Record<string, unknown> }[] {
  const rec = (v: unknown) =>
    typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  return [
    ...tcps.flatMap((o) =>
      (['controlplane', 'init'] as const).flatMap((k) => {
        const s = rec(spec(o, 'controlPlaneConfig', k));
        return s ? [{ object: o, field: `spec.controlPlaneConfig.${k}`, spec: s }] : [];
      }),
    ),
    ...templates.flatMap((o) => {
      const s = rec(spec(o, 'template', 'spec'));
      return s ? [{ object: o, field: 'spec.template.spec', spec: s }] : [];
    }),
  ];
}

export const jsonPatchesMultidoc: Rule = {
  id: 'capi.json-patches-multidoc',
  family: 'capi',
  severity: 'risk',
  title: 'JSON patches (configPatches) against a multi-document Talos config',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'CABPT applies configPatches (RFC 6902 JSON patches) to the first document of the machine config only; from Talos 1.12 the config has several documents, so those patches fail or miss their target. strategicPatches address every document.',
  docs: DOCS('capi.json-patches-multidoc'),
  artifacts: [KIT.capiCluster],
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const c of configSpecs(talosControlPlanes(m), talosConfigTemplates(m))) {
        const patches = Array.isArray(c.spec['configPatches']) ? (c.spec['configPatches'] as Patch[]) : [];
        if (patches.length === 0) continue;
        const why = multidocReason(c.spec);
        if (!why) continue;
        const kind = c.object.kind.toLowerCase();
        patches.forEach((p, i) => {
          const op = typeof p?.op === 'string' ? p.op : '?';
          const path = typeof p?.path === 'string' ? p.path : '?';
          out.push({
            message: `${c.object.kind} ${c.object.metadata.name} has JSON patch ${c.field}.configPatches[${i}] (${op} ${path}) while ${why}: CABPT's JSON patches address only the first document, so this patch fails or changes the wrong one.`,
            evidence: [
              objectEvidence(c.object, `${c.field}.configPatches[${i}]`, {
                observed: `${op} ${path}`,
                expected: 'a strategicPatches entry',
              }),
            ],
            remediation: `Rewrite ${c.field}.configPatches[${i}] as a Talos strategic-merge patch in ${c.field}.strategicPatches${
              c.object.kind === 'TalosConfigTemplate'
                ? ': templates are immutable, so create a new TalosConfigTemplate and point the MachineDeployment at it'
                : ` (kubectl -n ${c.object.metadata.namespace ?? 'default'} edit ${kind} ${c.object.metadata.name}) while the TalosControlPlane is paused: the edit marks every existing control-plane Machine outdated, so replace them one at a time with ferry`
            }.`,
          });
        });
      }
      return out;
    }),
};

export const CAPI_TALOSCONFIG_RULES: Rule[] = [talosconfigDrift, jsonPatchesMultidoc];
