/**
 * The contract between the audit engine and the rules. A rule is a pure function over the
 * snapshot, the facts derived from it and the chosen target; the engine does everything else
 * (skipping, fingerprints, suppressions, baseline, rendering).
 */
import type { Facts } from '../facts/model.js';
import type { Target } from '../facts/target.js';
import type { InputTag } from '../knowledge/rule-catalog.js';
import type { Snapshot, SnapshotInput, SnapshotPart } from '../snapshot/model.js';
import type { Evidence, Severity, Subject } from './findings.js';
import type { KitCheck } from './kit-checks.js';
import type { SnapshotIndex } from './snapshot-index.js';

export interface AuditContext {
  snapshot: Snapshot;
  facts: Facts;
  target: Target;
  /** Built once per audit; use it instead of scanning snapshot.resources per object. */
  index: SnapshotIndex;
}

/** What a rule returns per problem; the engine turns it into a Finding. */
export interface RuleFinding {
  /** Overrides the rule's default severity (e.g. blocker only when KubePrism is on). */
  severity?: Severity;
  /** Overrides the rule title for this finding (rarely needed). */
  title?: string;
  /** One or two sentences: what is wrong here, naming the object and the values. */
  message: string;
  /** At least one piece; the first one is the subject unless `subject` is given. */
  evidence: Evidence[];
  remediation: string;
  /** The object the finding is about; default: derived from evidence[0]. */
  subject?: Subject;
  /** Field path for the fingerprint; default: the field of evidence[0]. */
  field?: string;
  /** Kit artifacts that fix it (paths inside the kit). */
  artifacts?: string[];
  /** What a kit must contain to resolve it (see Finding.kitChecks). */
  kitChecks?: KitCheck[];
}

/**
 * A part the rule needs. Snapshot parts come from `snapshot.manifest.parts`; 'mgmt' is the Cluster
 * API management cluster (`ferry snapshot --mgmt-kubeconfig`, or `mgmt/` in a files directory).
 */
export type Requirement = SnapshotPart | 'mgmt';

/** A rule may find out while checking that it cannot decide (e.g. flags name a file not supplied). */
export interface RuleSkip {
  kind: 'skipped';
  missing: string[];
  howToProvide: string;
}

/** Or that it does not apply to this cluster/target (e.g. no encryption configured at all). */
export interface RuleNotApplicable {
  kind: 'not-applicable';
  reason: string;
}

export type RuleResult = RuleFinding[] | RuleSkip | RuleNotApplicable;

export interface Rule {
  /** `<family>.<name>`, from blockers.md; never renamed or reused. */
  id: string;
  /** Default severity; a finding may override it. */
  severity: Severity;
  title: string;
  family: string;
  /** The blockers.md input tags, for documentation and reports. */
  inputs: InputTag[];
  /**
   * The snapshot inputs the rule reads, directly or through the facts derived from them
   * (`[]` for none). Mandatory, so that no rule can forget it: when one was not observed (the
   * server refused or does not serve its list) the engine skips the rule with the reason,
   * instead of letting it pass or report an absence from a list that was never read.
   */
  reads: readonly SnapshotInput[];
  /**
   * The snapshot parts without which the rule cannot decide. Default: derived from `inputs`
   * (REQUIREMENTS_BY_INPUT). Mandatory when `inputs` has 'node': "host files" maps to no single part.
   */
  requires?: Requirement[];
  /** A sentence or two: why this breaks a migration (used in SARIF help, docs, explain). */
  description?: string;
  /** Link or path to the rule's documentation. */
  docs?: string;
  /**
   * Kit files (paths inside the kit `ferry generate` writes) that fix this rule's findings; a
   * finding that sets its own `artifacts` (even `[]`) overrides them.
   */
  artifacts?: readonly string[];
  /** Return a reason when the rule does not apply to this target (checked before `requires`). */
  notApplicable?(target: Target): string | undefined;
  check(ctx: AuditContext): RuleResult;
}

export function skip(missing: string[], howToProvide: string): RuleSkip {
  return { kind: 'skipped', missing, howToProvide };
}

export function notApplicable(reason: string): RuleNotApplicable {
  return { kind: 'not-applicable', reason };
}

/** blockers.md input tag → snapshot parts. 'node' and 'target' need nothing by themselves. */
export const REQUIREMENTS_BY_INPUT: Record<InputTag, Requirement[]> = {
  api: ['resources'],
  kubeadm: ['kubeadm'],
  flags: ['flags'],
  pki: ['pki'],
  etcd: ['etcd'],
  audit: ['audit-log'],
  node: [],
  target: [],
  mgmt: ['mgmt'],
};

/** How the user supplies a missing part; quoted in the "skipped" section of every report. */
export const HOW_TO_PROVIDE: Record<Requirement, string> = {
  kubeadm:
    "add kubeadm-config.yaml (kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}') to the snapshot directory, or audit a live cluster with --kubeconfig",
  flags:
    'add manifests/ (a copy of /etc/kubernetes/manifests from each control plane) or the control-plane mirror pods to resources/, or audit a live cluster',
  kubelet:
    'add the KubeletConfiguration (kubeadm-config.yaml document or ConfigMap kube-system/kubelet-config in resources/)',
  'kube-proxy': 'add ConfigMap kube-system/kube-proxy to resources/ (or a KubeProxyConfiguration document)',
  pki: 'add pki/ (a copy of /etc/kubernetes/pki from one control-plane node)',
  encryption:
    'add encryption-config.yaml (the file named by kube-apiserver --encryption-provider-config on a control-plane node)',
  etcd: 'add etcd/member-list.json, etcd/endpoint-status.json and etcd/version.json (etcdctl -w json), or pass --etcd-endpoints with client certificates to ferry snapshot',
  resources:
    'add resources/ (kubectl get nodes,pods,deployments,replicasets,statefulsets,daemonsets,jobs,cronjobs,pdb,services,namespaces -A -o yaml), or audit a live cluster with --kubeconfig',
  'served-certs':
    'add served-certs/HOST_PORT.pem (openssl s_client -connect HOST:6443 </dev/null | openssl x509), or audit a live cluster',
  'audit-log': 'add audit.log (the kube-apiserver audit log, JSON lines) if auditing is enabled',
  'server-version':
    'take the snapshot live (ferry snapshot --kubeconfig), which records what the API server answers on GET /version',
  mgmt: 'take the snapshot with --mgmt-kubeconfig FILE (the Cluster API management cluster), or add mgmt/ with its objects (kubectl get clusters,machines,machinedeployments,taloscontrolplanes,secrets,providers.clusterctl.cluster.x-k8s.io -A -o yaml; docs/snapshot-layout.md)',
};

export function requirementsOf(rule: Rule): Requirement[] {
  if (rule.requires) return rule.requires;
  const out: Requirement[] = [];
  for (const tag of rule.inputs) {
    for (const r of REQUIREMENTS_BY_INPUT[tag]) if (!out.includes(r)) out.push(r);
  }
  return out;
}

const ID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*\.[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Checks a rule set once (ids unique and well formed, family matches the id prefix, 'node' rules
 * say what they need). Returns human-readable problems; empty means fine.
 */
export function validateRules(rules: readonly Rule[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const r of rules) {
    if (!ID_PATTERN.test(r.id)) problems.push(`rule id "${r.id}" is not <family>.<name> in kebab-case`);
    if (seen.has(r.id)) problems.push(`rule id "${r.id}" is defined twice`);
    seen.add(r.id);
    if (r.id.split('.')[0] !== r.family)
      problems.push(`rule ${r.id}: family "${r.family}" does not match its id`);
    if (r.inputs.length === 0) problems.push(`rule ${r.id}: no inputs declared`);
    if (r.inputs.includes('node') && !r.requires)
      problems.push(`rule ${r.id}: input 'node' needs an explicit 'requires' list`);
    if (!r.title.trim()) problems.push(`rule ${r.id}: empty title`);
  }
  return problems;
}
