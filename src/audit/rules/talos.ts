/**
 * Talos-specific settings of the target (blockers.md "Talos"): the discovery service the generated
 * config enables, and v1.14's workload isolation. `talos.health-mixed-cluster` is a fact about
 * `talosctl health`, not about the cluster: it is documented (docs/rules.md#talos.health-mixed-cluster), not a rule.
 */
import { atField } from '../../facts/sources.js';
import { TALOS_DISCOVERY_ENDPOINT } from '../../knowledge/talos-config.js';
import { type Evidence, evidenceFromSource } from '../findings.js';
import type { Rule, RuleFinding } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import { isMultidoc, objectEvidence } from './shared.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

/** Registries kubeadm pulls from by default; anything else hints at a mirror (restricted egress). */
const PUBLIC_REGISTRIES = new Set(['registry.k8s.io', 'k8s.gcr.io']);

export const discoveryEgress: Rule = {
  id: 'talos.discovery-egress',
  family: 'talos',
  severity: 'risk',
  title: 'Generated config uses the public Talos discovery service',
  inputs: ['target'],
  reads: [],
  description:
    'Generated Talos configs enable cluster discovery through https://discovery.talos.dev/; it feeds KubePrism upstreams and etcd join endpoints, so nodes without Internet egress need it off or self-hosted.',
  docs: DOCS('talos.discovery-egress'),
  check(ctx) {
    const t = ctx.target;
    const evidence: Evidence[] = [
      {
        kind: 'target',
        field: isMultidoc(t) ? 'DiscoveryServiceConfig.endpoint' : 'cluster.discovery',
        observed: `enabled, ${TALOS_DISCOVERY_ENDPOINT}`,
        note: `talosctl gen config default for Talos ${t.talosVersion}`,
      },
    ];
    const cc = ctx.snapshot.kubeadm.clusterConfiguration;
    const repo = cc?.imageRepository;
    let hint = '';
    if (cc && repo && !PUBLIC_REGISTRIES.has(repo)) {
      hint = ` The cluster pulls its images from ${repo}, which suggests nodes without direct Internet access.`;
      evidence.push(evidenceFromSource(atField(cc.source, 'imageRepository'), { observed: repo }));
    }
    const fix = isMultidoc(t)
      ? 'point DiscoveryServiceConfig.endpoint at a self-hosted discovery service, or leave discovery out of the config'
      : 'set cluster.discovery.registries.service.endpoint to a self-hosted discovery service, or cluster.discovery.enabled: false';
    return [
      {
        message: `Talos ${t.talosVersion} configs register every node with ${TALOS_DISCOVERY_ENDPOINT}; ferry cannot see whether the Talos nodes may reach it.${hint}`,
        evidence,
        remediation: `If the nodes have no Internet egress (or policy forbids it), ${fix}; KubePrism still uses the cluster endpoint and the local apiserver. Otherwise suppress this finding with the reason "egress to discovery.talos.dev allowed".`,
        subject: { kind: 'Target', name: 'target' },
        field: 'discovery',
      },
    ];
  },
};

/** Why a pod template is sensitive to running in a separate mount/PID namespace. */
// biome-ignore lint/suspicious/noExplicitAny: pod specs are read structurally
function isolationReasons(podSpec: any, specPath: string): { reason: string; field: string }[] {
  const out: { reason: string; field: string }[] = [];
  for (const vol of Array.isArray(podSpec?.volumes) ? podSpec.volumes : []) {
    if (vol?.iscsi)
      out.push({
        reason: `in-tree iSCSI volume ${vol.name}`,
        field: `${specPath}.volumes[${vol.name}].iscsi`,
      });
  }
  if (podSpec?.hostPID === true) out.push({ reason: 'hostPID', field: `${specPath}.hostPID` });
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of Array.isArray(podSpec?.[list]) ? podSpec[list] : []) {
      for (const m of Array.isArray(c?.volumeMounts) ? c.volumeMounts : []) {
        if (m?.mountPropagation === 'Bidirectional')
          out.push({
            reason: `Bidirectional mount propagation at ${m.mountPath} (${c.name})`,
            field: `${specPath}.${list}[${c.name}].volumeMounts[${m.name}].mountPropagation`,
          });
      }
    }
  }
  return out;
}

export const workloadIsolation: Rule = {
  id: 'talos.workload-isolation',
  family: 'talos',
  severity: 'risk',
  title: 'Workloads sensitive to v1.14 workload isolation',
  inputs: ['api', 'target'],
  reads: [...WORKLOADS, 'csidrivers', 'persistentvolumes'],
  description:
    'Talos v1.14 generates SecurityProfileConfig.workloadIsolation: true: CRI, kubelet and pods run in a separate mount and PID namespace (sandboxd). In-tree iSCSI breaks; host mounts propagated back to the host are unverified.',
  docs: DOCS('talos.workload-isolation'),
  notApplicable(target) {
    return isMultidoc(target) ? undefined : `Talos ${target.talosVersion} has no workload isolation (v1.14+)`;
  },
  check(ctx) {
    const out: RuleFinding[] = [];
    const fix =
      'Decide per cluster: keep SecurityProfileConfig.workloadIsolation: true and verify these workloads on a canary Talos node, or set it to false in the generated config.';
    for (const w of ctx.index.workloads()) {
      const reasons = isolationReasons(w.podSpec, w.specPath);
      if (reasons.length === 0) continue;
      out.push({
        message: `${w.kind} ${w.namespace}/${w.object.metadata.name} relies on the host's namespaces (${reasons.map((r) => r.reason).join('; ')}); with workload isolation it runs in a separate mount/PID namespace.`,
        evidence: reasons.slice(0, 10).map((r) => objectEvidence(w.object, r.field, { observed: r.reason })),
        remediation: fix,
        field: 'workloadIsolation',
        subject: {
          kind: w.kind,
          group: w.object.apiVersion.includes('/') ? w.object.apiVersion.split('/')[0]! : '',
          namespace: w.namespace,
          name: w.object.metadata.name,
          ...(w.object.metadata.uid ? { uid: w.object.metadata.uid } : {}),
        },
      });
    }
    for (const pv of ctx.snapshot.resources.persistentvolumes) {
      if (!pv.spec?.iscsi) continue;
      out.push({
        message: `PersistentVolume ${pv.metadata.name} is an in-tree iSCSI volume; in-tree iSCSI breaks under v1.14 workload isolation.`,
        evidence: [
          objectEvidence(pv, 'spec.iscsi', {
            observed: `${pv.spec.iscsi.targetPortal ?? ''} ${pv.spec.iscsi.iqn ?? ''}`.trim(),
          }),
        ],
        remediation: `Move the volume to a CSI driver (with the iscsi-tools extension), or ${fix[0]!.toLowerCase()}${fix.slice(1)}`,
        field: 'spec.iscsi',
      });
    }
    for (const d of ctx.snapshot.resources.csidrivers) {
      if (!/iscsi/i.test(d.metadata.name)) continue;
      out.push({
        message: `CSIDriver ${d.metadata.name} attaches iSCSI volumes; verify it under v1.14 workload isolation.`,
        evidence: [objectEvidence(d, 'metadata.name', { observed: d.metadata.name })],
        remediation: fix,
        field: 'workloadIsolation',
      });
    }
    return out;
  },
};

export const TALOS_RULES: Rule[] = [discoveryEgress, workloadIsolation];
