/**
 * Drain rules (blockers.md "Workloads and storage"): every node is drained once during a
 * migration, so what blocks or hurts a drain is found here, before the roll — "PDB ns/name blocks
 * node X" in the audit, not a drain that hangs mid-migration (lessons.md).
 */
import type { KubeObject } from '../../snapshot/model.js';
import { pinsOf } from '../../util/node-pins.js';
import type { AuditContext, Rule, RuleFinding } from '../rule.js';
import { WORKLOADS } from '../rule-reads.js';
import type { IndexedPdb } from '../snapshot-index.js';
import { pvNodes } from './workload-hostpath.js';
import { pdbBlocks, pdbModel } from './workload-pdb.js';
import {
  describeObj,
  isFinished,
  isMirrorPod,
  isRecord,
  listSome,
  nodesOf,
  objectEvidence,
  type Template,
  templatesOf,
  volumesOf,
} from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

function pdbName(b: IndexedPdb): string {
  return `${b.namespace}/${b.pdb.metadata.name}`;
}

/** "worker-1 (checkout-a), worker-4 (checkout-b)" */
function podsPerNode(pods: readonly KubeObject[], max = 5): { nodes: string[]; text: string } {
  const byNode = new Map<string, string[]>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (typeof n !== 'string' || !n) continue;
    const list = byNode.get(n);
    if (list) list.push(p.metadata.name);
    else byNode.set(n, [p.metadata.name]);
  }
  const nodes = [...byNode.keys()].sort();
  const parts = nodes.slice(0, max).map((n) => `${n} (${listSome(byNode.get(n)!, 3)})`);
  const more = nodes.length > max ? ` and ${nodes.length - max} more node(s)` : '';
  return { nodes, text: parts.join(', ') + more };
}

// ---------------------------------------------------------------------------------------------
// workload.pdb-blocking

export const pdbBlocking: Rule = {
  id: 'workload.pdb-blocking',
  family: 'workload',
  severity: 'blocker',
  title: 'PodDisruptionBudget blocks node drains',
  inputs: ['api'],
  reads: [...WORKLOADS, 'poddisruptionbudgets'],
  description:
    'A PDB that allows no disruption (disruptionsAllowed 0, minAvailable ≥ expected pods, maxUnavailable 0, unhealthy pods under IfHealthyBudget) makes every drain of a node running its pods hang forever.',
  docs: DOCS('workload.pdb-blocking'),
  check(ctx) {
    const model = pdbModel(ctx.index);
    const out: RuleFinding[] = [];
    for (const b of model.all) {
      const pods = model.podsOf(b).filter((p) => !isFinished(p));
      const blocks = pdbBlocks(b.pdb, pods);
      if (blocks.length === 0) continue;
      const where = podsPerNode(pods);
      const blocked = where.nodes.length
        ? `blocks the drain of ${where.nodes.length} node(s): ${where.text}`
        : 'blocks the eviction of its pods wherever they run';
      out.push({
        message: `PodDisruptionBudget ${pdbName(b)} ${blocked} — ${blocks.map((x) => x.why).join('; ')}.`,
        evidence: blocks.map((x) =>
          objectEvidence(b.pdb, x.field, {
            observed: x.observed,
            ...(x === blocks[0] && where.nodes.length ? { note: `blocks ${listSome(where.nodes)}` } : {}),
          }),
        ),
        remediation: `Before the roll, let ${pdbName(b)} allow one disruption: scale its workload up by one (so healthy pods exceed the budget), or set maxUnavailable: 1 for the migration and restore it afterwards. ferry's drain is bounded and will stop at this PDB otherwise.`,
        field: 'spec',
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// workload.pdb-missing

function replicasOf(t: Template): number | undefined {
  if (t.kind !== 'Deployment' && t.kind !== 'StatefulSet' && t.kind !== 'ReplicaSet') return undefined;
  const r = t.object.spec?.replicas;
  return typeof r === 'number' ? r : 1;
}

export const pdbMissing: Rule = {
  id: 'workload.pdb-missing',
  family: 'workload',
  severity: 'risk',
  title: 'Workload without a usable PodDisruptionBudget',
  inputs: ['api'],
  reads: [...WORKLOADS, 'poddisruptionbudgets'],
  description:
    'A multi-replica workload without a PDB can lose all its pods at once when drains overlap; a single-replica workload is down while its node drains; a PDB selecting no pods protects nothing.',
  docs: DOCS('workload.pdb-missing'),
  check(ctx) {
    const model = pdbModel(ctx.index);
    const out: RuleFinding[] = [];
    for (const t of templatesOf(ctx.index)) {
      const replicas = replicasOf(t);
      if (replicas === undefined || replicas === 0) continue;
      const covering = model.pdbsFor(t.namespace, t.podLabels);
      if (replicas > 1 && covering.length > 0) continue;
      const nodes = nodesOf(t.pods);
      const on = nodes.length ? ` (pods on ${listSome(nodes)})` : '';
      if (replicas === 1) {
        const pdbNote = covering.length
          ? ` (PDB ${covering.map(pdbName).join(', ')} cannot keep a single pod up)`
          : '';
        out.push({
          message: `${describeObj(t.object)} runs 1 replica${on}: it is unavailable while its node drains${pdbNote}.`,
          evidence: [
            objectEvidence(t.object, 'spec.replicas', {
              observed: '1',
              expected: '≥ 2 with a PodDisruptionBudget',
            }),
          ],
          remediation: `Scale ${describeObj(t.object)} to 2 replicas and add a PodDisruptionBudget with maxUnavailable: 1, or accept and announce the outage during its node's drain.`,
        });
        continue;
      }
      out.push({
        message: `${describeObj(t.object)} runs ${replicas} replicas${on} without a PodDisruptionBudget: overlapping drains can evict all of them at once.`,
        evidence: [
          objectEvidence(t.object, 'spec.replicas', {
            observed: String(replicas),
            note: `no PodDisruptionBudget in ${t.namespace} selects its pod labels`,
          }),
        ],
        remediation: `Add a PodDisruptionBudget for ${describeObj(t.object)} (selector = its pod labels ${labelsText(t.podLabels)}, maxUnavailable: 1).`,
      });
    }
    for (const b of model.all) {
      const status = b.pdb.status ?? {};
      const expected = typeof status.expectedPods === 'number' ? status.expectedPods : model.podsOf(b).length;
      if (expected > 0) continue;
      out.push({
        message: `PodDisruptionBudget ${pdbName(b)} selects no pods: it protects nothing (a selector typo, or a removed workload).`,
        evidence: [
          objectEvidence(b.pdb, 'spec.selector', {
            observed: JSON.stringify(b.pdb.spec?.selector ?? null),
            note: 'expectedPods 0',
          }),
        ],
        remediation: `Fix the selector of ${pdbName(b)} to match its workload's pod labels, or delete it.`,
      });
    }
    return out;
  },
};

function labelsText(labels: Record<string, string>): string {
  const entries = Object.entries(labels);
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(',') : '(none)';
}

// ---------------------------------------------------------------------------------------------
// workload.undrainable-pods

/**
 * Node-local PVs by the claim bound to them ("namespace/claimName"), and the namespaces that have
 * any: pods elsewhere need not be looked at (150,000 pods, usually a handful of local PVs).
 */
function localPvsByClaim(ctx: AuditContext): { byClaim: Map<string, KubeObject>; namespaces: Set<string> } {
  const byClaim = new Map<string, KubeObject>();
  const namespaces = new Set<string>();
  for (const pv of ctx.snapshot.resources.persistentvolumes) {
    const ref = pv.spec?.claimRef;
    if (typeof ref?.name !== 'string' || !nodeAffine(pv)) continue;
    const ns = ref.namespace ?? 'default';
    byClaim.set(`${ns}/${ref.name}`, pv);
    namespaces.add(ns);
  }
  return { byClaim, namespaces };
}

/** A PV whose data lives on one node: local, hostPath, or required affinity to a hostname. */
function nodeAffine(pv: KubeObject): boolean {
  return pv.spec?.local !== undefined || pv.spec?.hostPath !== undefined || pvNodes(pv).length > 0;
}

export const undrainablePods: Rule = {
  id: 'workload.undrainable-pods',
  family: 'workload',
  severity: 'risk',
  title: 'Pods that lose data or cannot move when drained',
  inputs: ['api'],
  reads: [...WORKLOADS, 'nodes', 'persistentvolumes', 'poddisruptionbudgets'],
  description:
    'Bare pods are deleted by a drain and never come back; emptyDir contents are deleted; pods on node-local PersistentVolumes cannot start anywhere else.',
  docs: DOCS('workload.undrainable-pods'),
  check(ctx) {
    const out: RuleFinding[] = [];
    const claims = localPvsByClaim(ctx);
    for (const t of templatesOf(ctx.index)) {
      // Bare pods: no owner at all (mirror pods are excluded by templatesOf).
      if (t.kind === 'Pod' && !t.object.metadata.ownerReferences?.length && !isMirrorPod(t.object)) {
        if (isFinished(t.object)) continue;
        const node = t.object.spec?.nodeName;
        out.push({
          message: `Pod ${t.namespace}/${t.object.metadata.name}${node ? ` on ${node}` : ''} has no controller: a drain deletes it (needs --force) and nothing recreates it.`,
          evidence: [
            objectEvidence(t.object, 'metadata.ownerReferences', {
              observed: 'none',
              ...(node ? { note: `on node ${node}` } : {}),
            }),
          ],
          remediation: `Delete ${t.namespace}/${t.object.metadata.name} if it is a leftover, or turn it into a Deployment before the roll; ferry's drain will not delete it without an explicit acknowledgement (a suppression with a reason).`,
        });
        continue;
      }
      // DaemonSet pods are not evicted by a drain; emptyDir data of their pods stays.
      if (t.kind !== 'DaemonSet') {
        const empties = volumesOf(t.podSpec).filter((v) => isRecord(v.emptyDir));
        const running = empties.length > 0 ? t.pods.filter((p) => !isFinished(p)) : [];
        if (running.length > 0) {
          const names = empties.map(
            (v) => `${v.name ?? '?'}${v.emptyDir?.medium === 'Memory' ? ' (memory)' : ''}`,
          );
          const where = podsPerNode(running);
          out.push({
            message: `${describeObj(t.object)} keeps data in emptyDir volume(s) ${names.join(', ')}; draining ${where.text || 'its nodes'} deletes it.`,
            evidence: empties.map((v) =>
              objectEvidence(t.object, `${t.specPath}.volumes[${v.name ?? '?'}].emptyDir`, {
                observed: JSON.stringify(v.emptyDir),
              }),
            ),
            remediation: `Confirm the emptyDir volumes of ${describeObj(t.object)} hold only cache or scratch data (suppress this finding with that reason), or move the data to a PersistentVolume.`,
            field: `${t.specPath}.volumes[emptyDir]`,
          });
        }
      }
      // Pods on node-local PVs: the claim pins them to the node that holds the data.
      const local: { pod: KubeObject; pv: KubeObject }[] = [];
      if (claims.namespaces.has(t.namespace)) {
        for (const p of t.pods) {
          if (isFinished(p)) continue;
          for (const v of volumesOf(p.spec)) {
            const claim = v.persistentVolumeClaim?.claimName;
            if (typeof claim !== 'string') continue;
            const pv = claims.byClaim.get(`${t.namespace}/${claim}`);
            if (pv) local.push({ pod: p, pv });
          }
        }
      }
      if (local.length > 0) {
        const nodes = nodesOf(local.map((l) => l.pod));
        out.push({
          message: `${describeObj(t.object)} has ${local.length} pod(s) on node-local PersistentVolumes (${listSome(
            local.map((l) => l.pv.metadata.name),
            3,
          )}) on ${listSome(nodes)}: they cannot start on another node, and the data leaves with the node.`,
          evidence: local.slice(0, 10).map((l) =>
            objectEvidence(
              l.pv,
              l.pv.spec?.local
                ? 'spec.local.path'
                : l.pv.spec?.hostPath
                  ? 'spec.hostPath.path'
                  : 'spec.nodeAffinity',
              {
                note: `used by pod ${l.pod.metadata.name} on ${l.pod.spec?.nodeName ?? '?'}`,
              },
            ),
          ),
          remediation: `Plan the data of ${describeObj(t.object)} per node: replicate it at the application level (add a replica on a new node first) or copy it to the replacement node, and re-create the PersistentVolumes for the new node names.`,
          subject: subjectOf(t.object),
          field: 'persistentVolumes[node-local]',
        });
      }
    }
    return out;
  },
};

function subjectOf(o: KubeObject) {
  const slash = o.apiVersion.indexOf('/');
  return {
    kind: o.kind,
    name: o.metadata.name,
    group: slash < 0 ? '' : o.apiVersion.slice(0, slash),
    ...(o.metadata.namespace !== undefined ? { namespace: o.metadata.namespace } : {}),
    ...(o.metadata.uid !== undefined ? { uid: o.metadata.uid } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// workload.node-pinned

export const nodePinned: Rule = {
  id: 'workload.node-pinned',
  family: 'workload',
  severity: 'risk',
  title: 'Workload pinned to named nodes',
  inputs: ['api'],
  reads: [...WORKLOADS, 'nodes'],
  description:
    'spec.nodeName, a kubernetes.io/hostname nodeSelector or required node affinity naming old nodes keeps pods Pending forever once those nodes are replaced.',
  docs: DOCS('workload.node-pinned'),
  check(ctx) {
    const out: RuleFinding[] = [];
    const nodes = ctx.index.nodesByName;
    for (const t of templatesOf(ctx.index)) {
      // A scheduled bare pod always has spec.nodeName; only its selectors say it is pinned.
      const pins = pinsOf(t.podSpec, t.specPath, t.kind !== 'Pod');
      for (const pin of pins) {
        const old = pin.nodes.filter((n) => nodes.has(n));
        if (old.length === 0) continue;
        out.push({
          message: `${describeObj(t.object)} is pinned to node(s) ${listSome(old)} (${pin.field}): once ${old.length > 1 ? 'they are' : 'it is'} replaced, its pods stay Pending.`,
          evidence: [objectEvidence(t.object, pin.field, { observed: old.join(', ') })],
          remediation: `Rewrite the pin of ${describeObj(t.object)} to the replacement node names (or to a label the replacements carry) when each node is replaced; ferry's plan lists the old → new names.`,
        });
      }
    }
    return out;
  },
};
