/**
 * PodSecurity (apiserver.podsecurity-default): workloads in unlabelled namespaces that break the
 * "baseline" level Talos enforces, and kubeadm admission defaults that differ from it.
 */

import { TALOS_POD_SECURITY } from '../../../knowledge/talos.js';
import type { Evidence, ObjectRef } from '../../findings.js';
import { patchChecks } from '../../kit-checks.js';
import type { Rule, RuleFinding } from '../../rule.js';
import { WORKLOADS } from '../../rule-reads.js';
import type { Workload } from '../../snapshot-index.js';
import { baselineViolations } from '../apiserver-baseline.js';
import { KIT } from '../kit-paths.js';
import { factEvidence, isV114, plural, targetEvidence } from './evidence.js';

const ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

function workloadRef(w: Workload): ObjectRef & { apiVersion: string; namespace: string } {
  return {
    apiVersion: w.object.apiVersion,
    kind: w.object.kind,
    namespace: w.namespace,
    name: w.object.metadata.name,
    ...(w.object.metadata.uid ? { uid: w.object.metadata.uid } : {}),
  };
}

function templateAnnotations(w: Workload): {
  annotations: Record<string, string> | undefined;
  metaPath: string;
} {
  if (w.kind === 'Pod') return { annotations: w.object.metadata.annotations, metaPath: 'metadata' };
  const metaPath = w.specPath.replace(/\.spec$/, '.metadata');
  let cur: unknown = w.object;
  for (const k of metaPath.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[k];
  const annotations = (cur as { annotations?: Record<string, string> } | undefined)?.annotations;
  return { annotations, metaPath };
}

export const podSecurityDefault: Rule = {
  id: 'apiserver.podsecurity-default',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Workloads violate the PodSecurity baseline Talos enforces cluster-wide',
  inputs: ['api', 'target'],
  reads: ['namespaces', ...WORKLOADS],
  description:
    'Talos-generated configs enforce PodSecurity "baseline" in every namespace but kube-system. Once a Talos apiserver admits a pod (a Talos KCM leading, or the endpoint sending a request there), pods that violate baseline in unlabelled namespaces are rejected.',
  docs: 'docs/rules.md#apiserver.podsecurity-default',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const exempt = new Set<string>(TALOS_POD_SECURITY.exemptNamespaces);
    const v14 = isV114(ctx.target);
    const fixCluster = v14
      ? "replicate the cluster's admission configuration in `KubeAdmissionControlConfig` (e.g. PodSecurity defaults enforce: privileged)"
      : "replicate the cluster's admission configuration in `cluster.apiServer.admissionControl` (e.g. PodSecurity defaults enforce: privileged)";
    // The kit resolves these when its patch enforces by default what the kubeadm apiservers do.
    const psa = ctx.facts.apiserver.podSecurityDefaults;
    const defaults = psa.value;
    const kitChecks =
      defaults?.mode === 'built-in'
        ? patchChecks(
            [KIT.controlPlanePatch],
            v14
              ? {
                  doc: 'KubeAdmissionControlConfig',
                  docName: 'PodSecurity',
                  path: ['configuration', 'defaults', 'enforce'],
                }
              : {
                  path: [
                    'cluster',
                    'apiServer',
                    'admissionControl',
                    'name=PodSecurity',
                    'configuration',
                    'defaults',
                    'enforce',
                  ],
                },
            { op: 'equals', value: defaults.enforce },
          )
        : undefined;
    const out: RuleFinding[] = [];
    const unlabelled = new Set<string>();
    for (const w of ctx.index.workloads()) {
      if (exempt.has(w.namespace)) continue;
      if (w.kind === 'Pod' && w.object.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined)
        continue;
      const ns = ctx.index.namespacesByName.get(w.namespace);
      const level = ns?.metadata.labels?.[ENFORCE_LABEL];
      if (level !== undefined) continue; // the namespace decides for itself, on both sides
      unlabelled.add(w.namespace);
      const { annotations, metaPath } = templateAnnotations(w);
      const violations = baselineViolations(w.podSpec, w.specPath, annotations, metaPath);
      if (violations.length === 0) continue;
      const ref = workloadRef(w);
      out.push({
        message: `${w.kind} ${w.namespace}/${ref.name} violates PodSecurity "baseline" (${[...new Set(violations.map((v) => v.control))].join(', ')}) in namespace ${w.namespace}, which has no ${ENFORCE_LABEL} label: Talos apiservers reject its pods ("violates PodSecurity \\"baseline:latest\\"").`,
        evidence: [
          ...violations.map(
            (v): Evidence => ({
              kind: 'object',
              object: ref,
              field: v.field,
              observed: v.observed,
              note: `baseline control: ${v.control}`,
            }),
          ),
          {
            kind: 'object',
            object: { apiVersion: 'v1', kind: 'Namespace', name: w.namespace },
            field: `metadata.labels[${ENFORCE_LABEL}]`,
            observed: ns ? '(absent)' : '(namespace not in the snapshot)',
            expected: 'privileged, or a workload that meets baseline',
          },
        ],
        remediation: `Label namespace ${w.namespace} with ${ENFORCE_LABEL}=privileged (\`kubectl label ns ${w.namespace} ${ENFORCE_LABEL}=privileged\`) if the workload needs these rights, or change the workload to meet baseline; or ${fixCluster}.`,
        subject: {
          kind: ref.kind,
          namespace: ref.namespace,
          name: ref.name,
          group: ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '',
          ...(ref.uid ? { uid: ref.uid } : {}),
          ...(w.object.metadata.labels ? { labels: w.object.metadata.labels } : {}),
        },
        field: w.specPath,
        artifacts: [KIT.controlPlanePatch],
        // Only "privileged" by default admits a pod that violates baseline.
        ...(kitChecks && defaults?.mode === 'built-in' && defaults.enforce === 'privileged'
          ? { kitChecks }
          : {}),
      });
    }
    const admission = ctx.facts.apiserver.admission;
    const configFile = admission.value?.configFile ?? null;
    const differs = defaults
      ? defaults.mode === 'disabled' || defaults.enforce !== 'baseline'
      : configFile !== null;
    if (differs && unlabelled.size > 0) {
      const current = defaults
        ? defaults.mode === 'disabled'
          ? 'PodSecurity is disabled'
          : `PodSecurity enforces "${defaults.enforce}" by default`
        : `PodSecurity defaults come from ${configFile} (not in the snapshot)`;
      const list = [...unlabelled].sort();
      out.push({
        severity: 'risk',
        message: `On the kubeadm apiservers ${current}; Talos enforces "${TALOS_POD_SECURITY.enforce}" (exempt: ${[...exempt].join(', ')}). ${out.length === 0 ? 'No current workload violates baseline, but' : 'Besides the workloads reported,'} new pods in the ${plural(list.length, 'unlabelled namespace')} (${list.slice(0, 10).join(', ')}${list.length > 10 ? ', …' : ''}) will be judged by the stricter default.`,
        evidence: [
          ...(defaults
            ? factEvidence(psa, { observed: current })
            : factEvidence(admission, { observed: `--admission-control-config-file=${configFile}` })),
          targetEvidence(ctx.target, 'podSecurity.enforce', {
            observed: TALOS_POD_SECURITY.enforce,
            note: 'generated Talos config',
          }),
        ],
        remediation: `Decide explicitly: ${fixCluster}; or label the namespaces with ${ENFORCE_LABEL}.`,
        subject: { kind: 'Cluster', name: 'pod-security-defaults' },
        field: 'enforce',
        artifacts: [KIT.controlPlanePatch],
        ...(kitChecks ? { kitChecks } : {}),
      });
    }
    return out;
  },
};
