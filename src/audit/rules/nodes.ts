/**
 * The `nodes` family (blockers.md "Kubelet and nodes"): what replacement nodes must carry so the
 * workloads still land where they did — control-plane schedulability, labels and taints — and node
 * names that must not clash.
 */
import { machineTemplatesOf } from '../../capi/view.js';
import {
  type CapiTemplate,
  capiHostnamePatterns,
  mayEqualStableHostname,
  planControlPlaneHostnames,
  reservedNames,
} from '../../facts/hostnames.js';
import { poolGroupNames } from '../../facts/worker-groups.js';
import type { TalosRelease } from '../../knowledge/talos.js';
import {
  CONTROL_PLANE_TAINT,
  EXCLUDE_FROM_LB_LABEL,
  SELF_SET_LABEL_PREFIXES,
} from '../../knowledge/talos-config.js';
import type { KubeObject, Taint } from '../../snapshot/model.js';
import type { Evidence } from '../findings.js';
import { patchChecks, settingText } from '../kit-checks.js';
import { type AuditContext, type Rule, type RuleFinding, skip } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import { KIT } from './kit-paths.js';
import {
  describeObj,
  isFinished,
  isMirrorPod,
  isRecord,
  listSome,
  objectEvidence,
  templatesOf,
} from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;
const ROLE_PREFIX = 'node-role.kubernetes.io/';
const MAX_EVIDENCE = 10;

function isV114(release: TalosRelease): boolean {
  return release.configFormat === 'multidoc';
}

// ---------------------------------------------------------------------------------------------
// nodes.cp-schedulable

function isDaemonOrStatic(pod: KubeObject): boolean {
  if (isMirrorPod(pod)) return true;
  const owner = pod.metadata.ownerReferences?.find((o) => o.controller) ?? pod.metadata.ownerReferences?.[0];
  return owner?.kind === 'DaemonSet' || owner?.kind === 'Node';
}

export const cpSchedulable: Rule = {
  id: 'nodes.cp-schedulable',
  family: 'nodes',
  severity: 'risk',
  title: 'Control planes run workloads but Talos control planes are tainted',
  inputs: ['api', 'target'],
  reads: ['nodes', 'pods'],
  description: `Talos control planes register with the ${CONTROL_PLANE_TAINT}:NoSchedule taint and the ${EXCLUDE_FROM_LB_LABEL} label; workloads that run on untainted kubeadm control planes lose that capacity.`,
  docs: DOCS('nodes.cp-schedulable'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const cps = ctx.facts.nodes.controlPlane;
    if (cps.value === undefined)
      return skip(['control-plane nodes'], cps.missing ?? 'Node objects in resources/');
    const release = ctx.target.talos;
    const out: RuleFinding[] = [];
    for (const cp of cps.value) {
      if (cp.tainted || !cp.hasNodeObject) continue;
      const pods = (ctx.index.podsByNode.get(cp.name) ?? []).filter(
        (p) => !isDaemonOrStatic(p) && !isFinished(p),
      );
      if (pods.length === 0) continue;
      const names = pods.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`);
      const lbNote =
        cp.labels[EXCLUDE_FROM_LB_LABEL] === undefined
          ? ` Talos also labels control planes ${EXCLUDE_FROM_LB_LABEL}, which this node lacks: load-balancer speakers and cloud LBs will skip the Talos control planes.`
          : '';
      const keepScheduling = isV114(release)
        ? {
            at: { doc: 'KubeNodeConfig', path: ['taints', CONTROL_PLANE_TAINT, '$patch'] },
            test: { op: 'equals', value: 'delete' } as const,
          }
        : {
            at: { path: ['cluster', 'allowSchedulingOnControlPlanes'] },
            test: { op: 'equals', value: true } as const,
          };
      const fix = isV114(release)
        ? `leave the ${CONTROL_PLANE_TAINT} taint out of the control planes' KubeNodeConfig (\`${CONTROL_PLANE_TAINT}: {$patch: delete}\` under taints)`
        : `set ${settingText(keepScheduling.at, keepScheduling.test)}`;
      out.push({
        message: `Control plane ${cp.name} has no ${CONTROL_PLANE_TAINT} taint and runs ${pods.length} non-DaemonSet pod(s) (${listSome(names, 4)}); a Talos control plane registers tainted NoSchedule, so this capacity is lost after the switch.${lbNote}`,
        evidence: [
          {
            kind: 'node',
            node: cp.name,
            field: 'spec.taints',
            observed: cp.taints.length ? cp.taints.map(taintText).join(', ') : 'none',
            expected: `${CONTROL_PLANE_TAINT}:NoSchedule (Talos default)`,
          },
          ...pods.slice(0, 5).map((p) => objectEvidence(p, 'spec.nodeName', { observed: cp.name })),
        ],
        remediation: `Decide before the first Talos control plane: to keep scheduling on control planes, ${fix} (and decide whether to keep the ${EXCLUDE_FROM_LB_LABEL} label); otherwise make room on the workers for these pods first.`,
        // The kit keeps scheduling on when kubeadm does; the load-balancer label stays the operator's call.
        ...(lbNote === ''
          ? { kitChecks: patchChecks([KIT.controlPlanePatch], keepScheduling.at, keepScheduling.test) }
          : {}),
      });
    }
    return out;
  },
};

function taintText(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

// ---------------------------------------------------------------------------------------------
// nodes.labels-taints-carryover

/** Taints the system or Talos sets by itself; never carried. */
function isSystemTaint(key: string): boolean {
  return (
    key === CONTROL_PLANE_TAINT ||
    key === 'node-role.kubernetes.io/master' ||
    key.startsWith('node.kubernetes.io/') ||
    key.startsWith('node.cloudprovider.kubernetes.io/') ||
    key === 'ToBeDeletedByClusterAutoscaler' ||
    key === 'DeletionCandidateOfClusterAutoscaler'
  );
}

/** Labels replacement nodes need from the machine config: not self-set, plus custom node roles. */
export function isCarriedLabel(key: string): boolean {
  if (key.startsWith(ROLE_PREFIX))
    return key !== CONTROL_PLANE_TAINT && key !== 'node-role.kubernetes.io/master';
  return !SELF_SET_LABEL_PREFIXES.some((p) => key.startsWith(p));
}

interface Use {
  workload: KubeObject;
  field: string;
  how: string;
}

type Expr = { key?: unknown; operator?: unknown; values?: unknown };

/** Node label keys and taint keys a pod spec depends on, with the field that says so. */
export function nodeDependencies(
  spec: unknown,
  specPath: string,
): { labels: Map<string, string[]>; taints: Map<string, string[]> } {
  const labels = new Map<string, string[]>();
  const taints = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, key: unknown, field: string) => {
    if (typeof key !== 'string' || !key) return;
    const l = m.get(key);
    if (l) {
      if (!l.includes(field)) l.push(field);
    } else m.set(key, [field]);
  };
  if (!isRecord(spec)) return { labels, taints };
  if (isRecord(spec['nodeSelector']))
    for (const k of Object.keys(spec['nodeSelector'])) add(labels, k, `${specPath}.nodeSelector["${k}"]`);
  const aff = isRecord(spec['affinity']) ? spec['affinity'] : {};
  const na = isRecord(aff['nodeAffinity']) ? aff['nodeAffinity'] : {};
  const exprs = (terms: unknown, field: string) => {
    if (!Array.isArray(terms)) return;
    for (const t of terms as { matchExpressions?: Expr[]; preference?: { matchExpressions?: Expr[] } }[]) {
      for (const e of t?.matchExpressions ?? t?.preference?.matchExpressions ?? [])
        add(labels, e?.key, field);
    }
  };
  const req = isRecord(na['requiredDuringSchedulingIgnoredDuringExecution'])
    ? na['requiredDuringSchedulingIgnoredDuringExecution']
    : {};
  exprs(
    req['nodeSelectorTerms'],
    `${specPath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`,
  );
  exprs(
    na['preferredDuringSchedulingIgnoredDuringExecution'],
    `${specPath}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`,
  );
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const pa = isRecord(aff[kind]) ? aff[kind] : {};
    const r = pa['requiredDuringSchedulingIgnoredDuringExecution'];
    if (Array.isArray(r))
      for (const t of r)
        add(
          labels,
          t?.topologyKey,
          `${specPath}.affinity.${kind}.requiredDuringSchedulingIgnoredDuringExecution`,
        );
    const p = pa['preferredDuringSchedulingIgnoredDuringExecution'];
    if (Array.isArray(p))
      for (const t of p)
        add(
          labels,
          t?.podAffinityTerm?.topologyKey,
          `${specPath}.affinity.${kind}.preferredDuringSchedulingIgnoredDuringExecution`,
        );
  }
  if (Array.isArray(spec['topologySpreadConstraints']))
    for (const c of spec['topologySpreadConstraints'] as { topologyKey?: unknown }[])
      add(labels, c?.topologyKey, `${specPath}.topologySpreadConstraints`);
  if (Array.isArray(spec['tolerations']))
    for (const t of spec['tolerations'] as { key?: unknown }[])
      add(taints, t?.key, `${specPath}.tolerations`);
  return { labels, taints };
}

function nodeLabelsField(release: TalosRelease): string {
  return isV114(release) ? 'KubeNodeConfig.labels' : 'machine.nodeLabels';
}
function nodeTaintsField(release: TalosRelease): string {
  return isV114(release) ? 'KubeNodeConfig.taints' : 'machine.nodeTaints';
}

export const labelsTaintsCarryover: Rule = {
  id: 'nodes.labels-taints-carryover',
  family: 'nodes',
  severity: 'risk',
  title: 'Node labels and taints the workloads depend on',
  inputs: ['api'],
  reads: ['nodes', ...WORKLOADS],
  description:
    "Replacement nodes carry only the labels and taints in their machine config; workloads selecting, spreading over or tolerating the old nodes' custom labels and taints stay Pending or land on the wrong nodes.",
  docs: DOCS('nodes.labels-taints-carryover'),
  artifacts: [KIT.workerGroups, KIT.controlPlanePatch, KIT.workerPatch],
  check(ctx) {
    const release = ctx.target.talos;
    // Which label and taint keys the pod templates depend on (one pass over templates).
    const labelUses = new Map<string, Use[]>();
    const taintUses = new Map<string, Use[]>();
    for (const t of templatesOf(ctx.index)) {
      const deps = nodeDependencies(t.podSpec, t.specPath);
      for (const [key, fields] of deps.labels) {
        if (!isCarriedLabel(key)) continue;
        push(labelUses, key, {
          workload: t.object,
          field: fields[0]!,
          how: fields.map(shortField).join(', '),
        });
      }
      for (const [key, fields] of deps.taints)
        push(taintUses, key, { workload: t.object, field: fields[0]!, how: 'tolerations' });
    }
    // Which nodes carry them (one pass over nodes).
    const labelNodes = new Map<string, Map<string, string[]>>();
    const taintNodes = new Map<string, { taint: Taint; nodes: string[] }>();
    for (const n of ctx.snapshot.resources.nodes) {
      for (const [key, value] of Object.entries(n.metadata.labels ?? {})) {
        if (!labelUses.has(key) && !(key.startsWith(ROLE_PREFIX) && isCarriedLabel(key))) continue;
        let byValue = labelNodes.get(key);
        if (!byValue) {
          byValue = new Map();
          labelNodes.set(key, byValue);
        }
        const l = byValue.get(value);
        if (l) l.push(n.metadata.name);
        else byValue.set(value, [n.metadata.name]);
      }
      const taints: unknown = n.spec?.taints;
      if (!Array.isArray(taints)) continue;
      for (const t of taints as Taint[]) {
        if (typeof t?.key !== 'string' || isSystemTaint(t.key)) continue;
        const id = `${t.key}:${t.effect}`;
        const e = taintNodes.get(id);
        if (e) e.nodes.push(n.metadata.name);
        else taintNodes.set(id, { taint: t, nodes: [n.metadata.name] });
      }
    }
    const out: RuleFinding[] = [];
    for (const [key, byValue] of [...labelNodes].sort(([a], [b]) => a.localeCompare(b))) {
      const uses = labelUses.get(key) ?? [];
      const values = [...byValue].map(([v, nodes]) => `${v || '""'} on ${listSome(nodes, 4)}`);
      const used = uses.length
        ? `used by ${uses.length} workload(s) (${listSome(
            uses.map((u) => `${describeObj(u.workload)} ${u.how}`),
            3,
          )})`
        : 'a custom node role (kubectl ROLES, monitoring, tooling)';
      const evidence: Evidence[] = [
        ...uses
          .slice(0, MAX_EVIDENCE)
          .map((u) => objectEvidence(u.workload, u.field, { note: `depends on node label ${key}` })),
        ...[...byValue].flatMap(([v, nodes]) =>
          nodes
            .slice(0, MAX_EVIDENCE)
            .map(
              (node): Evidence => ({ kind: 'node', node, field: `metadata.labels["${key}"]`, observed: v }),
            ),
        ),
      ];
      out.push({
        message: `Node label ${key} (${listSome(values, 4)}) is ${used}; replacement nodes do not carry it unless their machine config sets it.`,
        evidence,
        remediation: `Set ${key} per node in ${nodeLabelsField(release)} of each replacement (${listSome(values, 4)}), so that each new node carries the value of the node it replaces.`,
        subject: { kind: 'NodeLabel', name: key },
        field: `metadata.labels["${key}"]`,
      });
    }
    for (const [id, { taint, nodes }] of [...taintNodes].sort(([a], [b]) => a.localeCompare(b))) {
      const uses = taintUses.get(taint.key) ?? [];
      const tolerated = uses.length
        ? `tolerated by ${uses.length} workload(s) (${listSome(
            uses.map((u) => describeObj(u.workload)),
            3,
          )})`
        : 'tolerated by no workload in the snapshot';
      out.push({
        message: `Taint ${taintText(taint)} is on ${nodes.length} node(s) (${listSome(nodes, 4)}), ${tolerated}; without it on the replacements, pods it keeps away land there, and dedicated nodes are lost.`,
        evidence: [
          ...nodes
            .slice(0, MAX_EVIDENCE)
            .map(
              (node): Evidence => ({ kind: 'node', node, field: 'spec.taints', observed: taintText(taint) }),
            ),
          ...uses
            .slice(0, MAX_EVIDENCE)
            .map((u) => objectEvidence(u.workload, u.field, { note: `tolerates ${taint.key}` })),
        ],
        remediation: `Set ${taintText(taint)} in ${nodeTaintsField(release)} of the replacements of ${listSome(nodes, 4)}.`,
        subject: { kind: 'NodeTaint', name: id },
        field: 'spec.taints',
      });
    }
    return out;
  },
};

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** "spec.template.spec.affinity.nodeAffinity.required…" → "nodeAffinity (required)" for messages. */
function shortField(f: string): string {
  if (f.includes('nodeSelector')) return 'nodeSelector';
  if (f.includes('topologySpreadConstraints')) return 'topologySpreadConstraints';
  const m = /affinity\.(\w+)\.(required|preferred)/.exec(f);
  return m ? `${m[1]} (${m[2]})` : f;
}

// ---------------------------------------------------------------------------------------------
// nodes.name-reuse

/**
 * Findings for planned Talos node names that equal a Node still present when they join
 * (case-insensitive: node names are lower-cased DNS names). Pure; the rule calls it with the
 * control-plane names src/facts/hostnames.ts plans (the names `ferry generate` writes).
 */
export function nameReuseFindings(
  ctx: AuditContext,
  planned: readonly { name: string; replaces?: string }[],
): RuleFinding[] {
  const byLower = new Map<string, KubeObject>();
  for (const [name, node] of ctx.index.nodesByName) byLower.set(name.toLowerCase(), node);
  const out: RuleFinding[] = [];
  for (const p of planned) {
    const clash = byLower.get(p.name.toLowerCase());
    if (!clash) continue;
    const same = p.replaces !== undefined && p.replaces.toLowerCase() === p.name.toLowerCase();
    out.push({
      message: `Planned Talos node name ${p.name} equals existing Node ${clash.metadata.name}${same ? ' (the node it replaces)' : ''}: if that Node still exists when the Talos node joins, the kubelet takes over its object (labels, podCIDR, providerID) and a control plane would remove the etcd member of that name.`,
      evidence: [
        { kind: 'node', node: clash.metadata.name, field: 'metadata.name', observed: clash.metadata.name },
        { kind: 'target', field: 'nodeNames', observed: p.name },
      ],
      remediation: same
        ? `Delete Node ${clash.metadata.name} (after drain, and after removing its etcd member for a control plane) before ${p.name} boots, or give the Talos node a new name.`
        : `Choose a unique name for the Talos node (HostnameConfig.hostname), never the name of a Node or etcd member that still exists.`,
      subject: { kind: 'Node', name: clash.metadata.name, node: clash.metadata.name },
      field: 'metadata.name',
      artifacts: [KIT.nodePatch(p.name)],
    });
  }
  return out;
}

/**
 * Live Nodes whose names Cluster API could generate for a Talos node ("<template>-xxxxx"): the
 * random suffix makes a clash unlikely but not impossible, and a kubeadm cluster built by Cluster
 * API under the same cluster name has exactly that shape.
 */
export function capiShapedNames(
  cluster: string,
  names: readonly string[],
  pools: readonly string[] = [],
  templates: readonly CapiTemplate[] = [],
): { name: string; role: string; prefix: string }[] {
  const patterns = capiHostnamePatterns(cluster, pools, templates);
  const out: { name: string; role: string; prefix: string }[] = [];
  for (const name of names) {
    const p = patterns.find((x) => x.re.test(name));
    if (p) out.push({ name, role: p.role, prefix: p.prefix });
  }
  return out;
}

export const nameReuse: Rule = {
  id: 'nodes.name-reuse',
  family: 'nodes',
  severity: 'blocker',
  title: 'Planned Talos node name equals a live Node',
  inputs: ['api', 'target'],
  reads: ['nodes'],
  requires: ['resources'],
  description:
    'A Talos node joining under the name of a Node that still exists takes over that Node object; a control plane also removes the etcd member of that name (see etcd.member-name-collision).',
  docs: DOCS('nodes.name-reuse'),
  check(ctx) {
    const nodeNames = [...ctx.index.nodesByName.keys()];
    if (ctx.target.provisioner === 'capi') {
      const cluster = ctx.facts.cluster.name;
      if (cluster.value === undefined)
        return skip(
          ['cluster name'],
          cluster.missing ?? 'kubeadm-config.yaml (ClusterConfiguration.clusterName)',
        );
      const workers = ctx.facts.nodes.workers;
      if (workers.value === undefined)
        return skip(['worker nodes'], workers.missing ?? 'Node objects in resources/');
      // The kit's per-pool templates, and the templates the management cluster already references.
      const pools = poolGroupNames(workers.value);
      const templates = ctx.snapshot.mgmt ? machineTemplatesOf(ctx.snapshot.mgmt, cluster.value) : [];
      return capiShapedNames(cluster.value, nodeNames, pools, templates).map(
        (c): RuleFinding => ({
          severity: 'risk',
          message: `Node ${c.name} has the shape of the names Cluster API gives the Talos ${c.role}s it creates (${c.prefix}xxxxx, hostname.source InfrastructureName): a generated name equal to it would take over this Node.`,
          evidence: [
            { kind: 'node', node: c.name, field: 'metadata.name', observed: c.name },
            {
              kind: 'target',
              field: 'provisioner',
              observed: 'capi',
              note: `Talos nodes named ${c.prefix}xxxxx`,
            },
          ],
          remediation: `Rename the templates in the generated ${KIT.capi} manifests (e.g. a "-talos" suffix) so that no generated name can equal a kubeadm Node, or make sure Node ${c.name} is drained and deleted before Cluster API creates nodes.`,
          subject: { kind: 'Node', name: c.name, node: c.name },
          field: 'metadata.name',
          artifacts: [KIT.capiCluster],
        }),
      );
    }
    const cps = ctx.facts.nodes.controlPlane;
    if (cps.value === undefined)
      return skip(['control-plane nodes'], cps.missing ?? 'Node objects in resources/');
    // The names `ferry generate` writes into the per-node patches (same planner, same inputs).
    const reserved = new Set(reservedNames(ctx.facts).names.keys());
    const planned = planControlPlaneHostnames(cps.value, reserved);
    const out = nameReuseFindings(
      ctx,
      planned.map((p) => ({ name: p.hostname, replaces: p.replaces })),
    );
    // Workers keep Talos's generated "talos-…" names, which no plan can know.
    for (const name of nodeNames.filter(mayEqualStableHostname)) {
      out.push({
        severity: 'risk',
        message: `Node ${name} already carries the "talos-" prefix of the hostnames Talos generates for workers (HostnameConfig auto: stable): a Talos worker whose generated name equals it would take over this Node.`,
        evidence: [{ kind: 'node', node: name, field: 'metadata.name', observed: name }],
        remediation: `Before Talos workers join, make sure no generated hostname equals ${name}: compare \`talosctl get hostname\` of each new worker before it registers, give the workers explicit names (HostnameConfig.hostname), or drain and delete Node ${name} first.`,
        subject: { kind: 'Node', name, node: name },
        field: 'metadata.name',
      });
    }
    return out;
  },
};

export const NODES_RULES: Rule[] = [cpSchedulable, labelsTaintsCarryover, nameReuse];
