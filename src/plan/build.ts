/**
 * buildPlan: Snapshot + Facts + audit report (+ kit) → Plan. Pure: the clock and every input are
 * parameters; the same inputs give the same plan and the same step ids. The plan comes sealed
 * (integrity.ts): `ferry run` refuses it once its content changes.
 *
 * Refuses (input error, exit 2) only when no sensible plan exists: control planes, etcd members
 * or the endpoint unknown, external etcd, `replace` with fewer than 3 voters, `surge` while the
 * endpoint is a control plane's own address. Everything else that is merely risky becomes a
 * warning, or a blocker the preflight step records.
 */
import type { AuditReport } from '../audit/engine.js';
import { describeSubject, type Finding } from '../audit/findings.js';
import { iacOwned, ownersToPause } from '../audit/rules/gitops.js';
import { buildIndex } from '../audit/snapshot-index.js';
import { inputError } from '../errors.js';
import { planControlPlaneHostnames, replacementHostname, reservedNames } from '../facts/hostnames.js';
import type { EtcdMemberFact, Facts } from '../facts/model.js';
import { snapshotMismatch } from '../kit/match.js';
import type { KitSummary } from '../kit/read.js';
import { assumedFactsNote } from '../knowledge/talos.js';
import type { Snapshot } from '../snapshot/model.js';
import { memberIdHex } from '../util/member-id.js';
import { VERSION } from '../version.js';
import { afterCareSteps } from './aftercare.js';
import { planRoll } from './batches/choose.js';
import { makespan } from './batches/estimate.js';
import { explainBatch } from './batches/explain.js';
import { clusterModel } from './batches/from-snapshot.js';
import {
  DEFAULT_MAX_UNAVAILABLE,
  type MaxUnavailable,
  resolveMaxUnavailable,
  showMaxUnavailable,
} from './batches/limits.js';
import type { PlannedRoll } from './batches/planner.js';
import { timingFor } from './batches/timing.js';
import { withCapiProvisionCommands } from './capi-steps.js';
import { addressArg, setupCommands } from './commands.js';
import { digestOf } from './digest.js';
import { EtcdModel } from './etcd-sim.js';
import type { KubeadmMemberRef, KubeadmNodeRef, TalosNodeRef } from './expected-state.js';
import {
  gitopsPauseSteps,
  gitopsResumeSteps,
  iacPauseSteps,
  iacResumeSteps,
  pausedBlockers,
} from './gitops-steps.js';
import { sealPlan } from './integrity.js';
import { machineConfigPicker, talosconfigPath } from './kit.js';
import {
  type ControlPlaneOrder,
  type DraftStep,
  type FindingRef,
  type PdbRef,
  PHASE_NAMES,
  type Phase,
  type PhaseId,
  PLAN_FORMAT_VERSION,
  PLAN_KIND,
  type Plan,
  type Step,
  type Strategy,
  stepId,
  type WorkerOrder,
  type WorkerRoll,
} from './model.js';
import { orderControlPlanes } from './order.js';
import { ETCD_BACKUP_BEFORE, etcdSnapshotStep, preflightSteps, preparationSteps } from './prep.js';
import { MAX_INDEX_LAG, TIMEOUTS } from './steps.js';
import { type ControlPlaneSwap, controlPlaneSwap, type SwapContext } from './swap.js';
import { refuseExternalEtcd } from './topology.js';
import { type WorkerSwap, workerBatch } from './workers.js';

export interface PlanOptions {
  /** Workers per batch at most (default 25% of the workers, at least 1). */
  maxUnavailable?: MaxUnavailable;
  /** Talos workers brought up before the first drain (default 0). */
  surgeWorkers?: number;
  /** Scale a workload whose PDB allows no disruption up by one around its drains (default off). */
  surgeReplicas?: boolean;
  /** Per-node drain timeout (default 900 s). */
  drainTimeoutSeconds?: number;
  /** Hostname of the Talos node replacing a kubeadm node (default: the hostname rule of src/facts/hostnames.ts, as the kit writes it); ignored for capi. */
  newNodeName?: (old: string) => string;
}

export interface PlanInput {
  snapshot: Snapshot;
  facts: Facts;
  audit: AuditReport;
  /** The snapshot path as the operator gave it (shown in commands). */
  snapshotPath: string;
  strategy: Strategy;
  kit: KitSummary | null;
  allowBlockers: boolean;
  now: Date;
  options?: PlanOptions;
}

/** Audit rules whose fix is a change by hand before the roll (CSI drivers, host paths). */
const MANUAL_FIX_RULES = new Set([
  'workload.csi-driver',
  'workload.hostpath-absent',
  'workload.hostpath-readonly-root',
  'workload.flexvolume',
]);

const LAST_CP_SNAPSHOT = 'etcd-before-last-kubeadm-member.db';

export function findingRef(f: Finding): FindingRef {
  return {
    ruleId: f.ruleId,
    severity: f.severity,
    title: f.title,
    fingerprint: f.fingerprint,
    subject: describeSubject(f.subject),
    remediation: f.remediation,
  };
}

/** Unsuppressed blockers of an audit report: what the preflight refuses without --allow-blockers. */
export function unsuppressedBlockers(report: AuditReport): FindingRef[] {
  return report.findings.filter((f) => f.severity === 'blocker').map(findingRef);
}

/**
 * The blockers `ferry plan` refuses, and those its own steps take care of: a GitOps owner the plan
 * pauses before the first change (gitops.reverts-ferry-changes) is handled, not refused.
 */
export function planBlockers(input: Pick<PlanInput, 'snapshot' | 'facts' | 'audit'>): {
  refused: FindingRef[];
  handled: FindingRef[];
} {
  const pauses = ownersToPause({
    snapshot: input.snapshot,
    facts: input.facts,
    target: input.facts.target,
    index: buildIndex(input.snapshot),
  });
  const handled = new Set(pausedBlockers(input.audit.findings, pauses).map((f) => f.fingerprint));
  const all = unsuppressedBlockers(input.audit);
  return {
    refused: all.filter((b) => !handled.has(b.fingerprint)),
    handled: all.filter((b) => handled.has(b.fingerprint)),
  };
}

export function buildPlan(input: PlanInput): Plan {
  const { facts, snapshot, strategy } = input;
  const opts = input.options ?? {};
  const provisioner = facts.target.provisioner;
  const warnings: string[] = [];

  // -- what a plan cannot do without; the topology first: without stacked etcd nothing else matters
  refuseExternalEtcd(facts);
  const cps = need(facts.nodes.controlPlane.value, 'control-plane nodes', facts.nodes.controlPlane.missing);
  const members = need(facts.etcd.members.value, 'the etcd member list', facts.etcd.members.missing);
  const endpoint = need(
    facts.cluster.controlPlaneEndpoint.value,
    'the control-plane endpoint',
    facts.cluster.controlPlaneEndpoint.missing,
  );
  const voters = members.filter((m) => !m.isLearner);
  if (strategy === 'replace' && voters.length < 3) {
    throw inputError(
      `--strategy replace removes a member before its replacement joins; with ${voters.length} voter(s) that loses quorum`,
      { object: 'etcd member list' },
      'use --strategy surge (learner first), or grow etcd to 3 voters first',
    );
  }
  if (strategy === 'surge' && endpoint.node !== null) {
    throw inputError(
      `the control-plane endpoint ${endpoint.host} is ${endpoint.node}'s own address: surge would take it away with the node`,
      { object: 'kubeadm ClusterConfiguration', field: 'controlPlaneEndpoint' },
      'put a VIP or load balancer in front of the apiservers first, or use --strategy replace (same addresses)',
    );
  }

  // -- references
  const leader = members.find((m) => m.isLeader) ?? null;
  const memberRef = (m: EtcdMemberFact): KubeadmMemberRef => ({
    kind: 'kubeadm',
    name: m.name,
    id: m.id,
    idHex: memberIdHex(m.id),
    node: m.node,
    clientURL: m.clientURLs[0] ?? null,
  });
  const taken = new Set([
    ...snapshot.resources.nodes.map((n) => n.metadata.name),
    ...members.map((m) => m.name),
    ...cps.map((c) => c.name),
  ]);
  // The hostname rule generate writes into talos/nodes/*.yaml and the audit checks
  // (etcd.member-name-collision, nodes.name-reuse): one planner, so the plan names the node the kit makes.
  const reserved = new Set(reservedNames(facts).names.keys());
  const plannedCp = new Map(planControlPlaneHostnames(cps, reserved).map((p) => [p.replaces, p.hostname]));
  for (const name of plannedCp.values()) taken.add(name);
  const nameFor = (old: string): string | null => {
    if (provisioner === 'capi') return null;
    if (opts.newNodeName) {
      const base = opts.newNodeName(old);
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
      taken.add(name);
      return name;
    }
    return plannedCp.get(old) ?? replacementHostname(old, reserved, taken);
  };
  const oldRef = (n: { name: string; internalIP: string | null }, adv?: string | null): KubeadmNodeRef => ({
    kind: 'kubeadm',
    name: n.name,
    address: adv ?? n.internalIP,
  });
  const replacementOf = (old: KubeadmNodeRef, role: 'controlplane' | 'worker'): TalosNodeRef => ({
    kind: 'talos',
    replaces: old.name,
    // A Talos worker keeps the stable hostname Talos makes from its machine id (the kit writes no
    // worker hostname: facts/hostnames.ts): the run learns it from the Node that registers.
    name: role === 'worker' && !opts.newNodeName ? null : nameFor(old.name),
    address: strategy === 'replace' ? old.address : null,
  });

  const order = orderControlPlanes(cps, leader?.node ?? null, endpoint.node);
  const cpSwaps = [...order.phase2, order.last].map((cp): ControlPlaneSwap => {
    const old = oldRef(cp, cp.advertiseAddress?.address);
    const m = members.find((x) => x.node === cp.name) ?? members.find((x) => x.id === cp.etcdMember?.id);
    return {
      old,
      apiserverPort: cp.apiserverPort ?? endpoint.port,
      member: m ? memberRef(m) : null,
      replacement: replacementOf(old, 'controlplane'),
      leaderAtSnapshot: m?.isLeader === true,
      last: cp === order.last,
    };
  });

  const workerFacts = facts.nodes.workers.value;
  if (!workerFacts)
    warnings.push(`workers unknown (${facts.nodes.workers.missing ?? 'no Node objects'}): phase 3 is empty`);
  const index = buildIndex(snapshot);
  const drainInfo = drainInfoFrom(index);
  const model = clusterModel(snapshot, index, workerFacts ?? []);
  const maxUnavailable = opts.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE;
  const perBatch = resolveMaxUnavailable(maxUnavailable, model.workers.length);
  const timing = timingFor(provisioner);
  const roll = planRoll(model, {
    strategy,
    maxUnavailable: perBatch,
    surgeNodes: opts.surgeWorkers ?? 0,
    surgeReplicas: opts.surgeReplicas === true,
    timing,
  });
  const times = makespan(roll, { timing, strategy, maxUnavailable: perBatch, workers: model.workers.length });
  const workerRoll = workerRollOf(roll, times, {
    maxUnavailable: showMaxUnavailable(maxUnavailable),
    perBatch,
    surgeReplicas: opts.surgeReplicas === true,
  });
  const workerByName = new Map((workerFacts ?? []).map((w) => [w.name, w]));
  const workerSwaps: WorkerSwap[][] = roll.batches.map((b) =>
    b.nodes.map((name) => {
      const old = oldRef(workerByName.get(name)!);
      return { old, replacement: replacementOf(old, 'worker') };
    }),
  );
  const surgeNodes: TalosNodeRef[] = Array.from({ length: roll.surge.nodes }, (_, i) => ({
    kind: 'talos',
    replaces: `surge-${i + 1}`,
    name: null,
    address: null,
  }));

  const talosNodes = new Map<string, TalosNodeRef>();
  for (const s of cpSwaps) talosNodes.set(s.old.name, s.replacement);

  // -- warnings about the starting point
  const assumed = assumedFactsNote(facts.target.talos);
  if (assumed) warnings.push(assumed);
  const learners = members.filter((m) => m.isLearner);
  if (learners.length > 0)
    warnings.push(
      `etcd has learner(s) ${learners.map((m) => m.name || m.id).join(', ')}: the first gate expects none; promote or remove them first`,
    );
  const orphans = members.filter((m) => !m.isLearner && !m.node);
  if (orphans.length > 0)
    warnings.push(
      `etcd member(s) without a node: ${orphans.map((m) => m.name || `(unstarted ${m.id})`).join(', ')}: counted as voters; remove them before the roll if they are stale`,
    );
  if (!leader)
    warnings.push(
      'the etcd leader is unknown (no endpoint status): leader-last ordering falls back to name order',
    );
  if (endpoint.node !== null)
    warnings.push(
      `no load balancer: the endpoint is ${endpoint.node}'s own address; it goes last and the API is unreachable while it is replaced`,
    );
  if (voters.length === 1)
    warnings.push(
      'a single etcd member: while the Talos member joins the cluster has 2 voters and no failure tolerance',
    );
  if (provisioner === 'capi')
    warnings.push(
      'provisioner capi: Talos node names are chosen by Cluster API; the run records them as they appear',
    );
  for (const b of roll.blocked)
    warnings.push(
      `PodDisruptionBudget ${b.pdb} (${b.rule}) allows no disruption: the drains of ${b.nodes.join(', ')} cannot finish; ${b.fix}`,
    );
  if (roll.outages.length > 0)
    warnings.push(
      `the worker roll takes down ${roll.outages.length} pod(s) or workload(s) for a while (single replicas, pods without a controller, pods that cannot move): see Outages`,
    );
  if (roll.surge.nodes > 0)
    warnings.push(
      `--surge ${roll.surge.nodes}: ${roll.surge.nodes} more Talos worker(s) stay after the roll; remove them, or scale their pool down, once it is done`,
    );
  const kitWarning = input.kit ? snapshotMismatch(input.kit, facts.snapshot, 'plan') : null;
  if (kitWarning) warnings.push(kitWarning);
  const { refused: blockers, handled } = planBlockers(input);
  if (blockers.length > 0 && input.allowBlockers)
    warnings.push(
      `${blockers.length} unsuppressed blocker(s) accepted with --allow-blockers: the preflight records them`,
    );

  // -- phases
  const sim = new EtcdModel(voters.map(memberRef));
  const machineConfig = machineConfigPicker(input.kit);
  const drainTimeoutSeconds = opts.drainTimeoutSeconds ?? TIMEOUTS.drain;
  const maxDb = Math.max(0, ...members.map((m) => m.dbSize ?? 0));
  const swapCtx: SwapContext = {
    strategy,
    provisioner,
    talosVersion: facts.target.talosVersion,
    endpoint,
    lbInFront: endpoint.node === null,
    etcd: sim,
    talosNodes,
    machineConfig,
    drainTimeoutSeconds,
    // Catch-up time grows with the database a learner receives (blockers.md etcd.db-size).
    memberVoterSeconds: TIMEOUTS.memberVoter + Math.ceil(maxDb / (1024 * 1024)),
    maxIndexLag: MAX_INDEX_LAG,
    drainInfo,
  };
  const cpNodeRefs = cpSwaps.map((s) => s.old);
  const firstMember = cpSwaps.find((s) => s.member)?.member ?? null;
  const manualFixes = input.audit.findings
    .filter((f) => MANUAL_FIX_RULES.has(f.ruleId) && f.severity !== 'info')
    .map(findingRef);
  const prepCtx = {
    facts,
    etcd: sim,
    snapshot: input.snapshotPath,
    kit: input.kit,
    blockers,
    handled,
    suppressed: input.audit.counts.suppressed,
    allowBlockers: input.allowBlockers,
    manualFixes,
    controlPlaneNodes: cpNodeRefs,
    endpointUrl: endpoint.url,
    snapshotMember: firstMember,
  };

  const drafts: Record<PhaseId, DraftStep[]> = { 0: [], 1: [], 2: [], 3: [], 4: [], 5: [] };
  drafts[0] = preflightSteps(prepCtx);
  // GitOps owners of what the migration changes are paused before anything changes, resumed last.
  const auditCtx = { snapshot, facts, target: facts.target, index };
  const pauses = ownersToPause(auditCtx);
  const iac = iacOwned(auditCtx);
  drafts[1] = [...gitopsPauseSteps(pauses), ...iacPauseSteps(iac), ...preparationSteps(prepCtx)];
  for (const s of cpSwaps.filter((x) => !x.last)) drafts[2].push(...controlPlaneSwap(swapCtx, s));
  const surgedPdbs = new Set(roll.surged.map((s) => s.pdb));
  workerSwaps.forEach((swaps, i) => {
    const batch = workerRoll.batches[i]!;
    drafts[3].push(
      ...workerBatch(
        {
          strategy,
          provisioner,
          talosVersion: facts.target.talosVersion,
          endpointUrl: endpoint.url,
          etcd: sim,
          machineConfig,
          drainTimeoutSeconds,
          drainInfo,
        },
        {
          batch,
          swaps,
          surge: i === 0 && surgeNodes.length > 0 ? { nodes: surgeNodes, like: roll.surge.pool[0]! } : null,
          scaleUp: roll.surged.filter((s) => s.firstBatch === batch.index),
          restore: roll.surged.filter((s) => s.lastBatch === batch.index),
          surgedPdbs,
        },
      ),
    );
  });
  const lastSwap = cpSwaps.find((s) => s.last)!;
  const talosForSnapshot = cpSwaps.find((s) => !s.last)?.replacement;
  drafts[4].push(
    etcdSnapshotStep(
      lastSwap.member,
      LAST_CP_SNAPSHOT,
      'a restore point before the last kubeadm member goes',
      lastSwap.old.name,
      talosForSnapshot ? addressArg(talosForSnapshot) : undefined,
    ),
    ...controlPlaneSwap(swapCtx, lastSwap),
  );
  drafts[5] = afterCareSteps({
    provisioner,
    // The kit's token first (the one the Talos nodes joined with), then any other never-expiring one.
    tokenIds: [
      ...new Set([
        ...(input.kit?.bootstrapTokenId ? [input.kit.bootstrapTokenId] : []),
        ...snapshot.resources.bootstrapTokens.filter((t) => !t.expiration).map((t) => t.id),
      ]),
    ],
    kubeProxy: facts.kubeProxy.daemonSet.value ?? null,
    copies: copiesToWipe(snapshot, input.kit),
    etcdPin: etcdPin(facts),
    talosControlPlanes: cpSwaps.length,
    kit: input.kit?.path ?? null,
    capi: input.kit?.capi ?? null,
    drillNode: cpSwaps[0]?.replacement ?? null,
  });
  drafts[5].push(...gitopsResumeSteps(pauses), ...iacResumeSteps(iac, input.kit?.path ?? null));

  if (provisioner === 'capi') {
    const ids = [0, 1, 2, 3, 4, 5] as const;
    const withCmds = withCapiProvisionCommands(
      ids.map((i) => drafts[i]),
      input.kit?.capi ?? null,
      input.kit?.path ?? null,
    );
    for (const i of ids) drafts[i] = withCmds[i]!;
  }
  const phases = numberPhases(drafts);
  const cluster = facts.cluster.name.value ?? null;
  return sealPlan({
    kind: PLAN_KIND,
    formatVersion: PLAN_FORMAT_VERSION,
    ferryVersion: VERSION,
    createdAt: input.now.toISOString(),
    cluster: { name: cluster, endpoint: endpoint.url },
    source: {
      snapshot: input.snapshotPath,
      snapshotCreatedAt: facts.snapshot.createdAt,
      snapshotDigest: digestOf(snapshot),
      factsDigest: digestOf(facts),
      kit: input.kit
        ? {
            path: input.kit.path,
            generatedAt: input.kit.generatedAt,
            files: referencedKitFiles(phases, input.kit),
          }
        : null,
    },
    strategy,
    provisioner,
    target: {
      talosVersion: facts.target.talosVersion,
      kubernetesVersion: facts.target.kubernetesVersion ?? null,
      kubeprism: facts.target.kubeprism,
      infra: facts.target.infra,
    },
    etcd: {
      voters: voters.length,
      leader: leader ? { id: leader.id, name: leader.name, node: leader.node } : null,
      version: facts.etcd.version.value ?? null,
    },
    audit: {
      blockers,
      risks: input.audit.counts.risk,
      suppressed: input.audit.counts.suppressed,
      allowBlockers: input.allowBlockers,
      ...(input.audit.resolved.length > 0 ? { resolvedByKit: input.audit.resolved.map(findingRef) } : {}),
    },
    controlPlanes: cpSwaps.map(
      (s, i): ControlPlaneOrder => ({
        node: s.old.name,
        address: s.old.address,
        phase: s.last ? 4 : 2,
        position: i + 1,
        member: s.member ? { id: s.member.id, name: s.member.name } : null,
        leaderAtSnapshot: s.leaderAtSnapshot,
        replacement: s.replacement,
      }),
    ),
    workerRoll,
    workers: workerSwaps.flatMap((b, i) =>
      b.map(
        (w): WorkerOrder => ({
          node: w.old.name,
          address: w.old.address,
          batch: i + 1,
          replacement: w.replacement,
        }),
      ),
    ),
    setup: setupCommands({
      etcdEndpoints: voters.flatMap((m) => m.clientURLs.slice(0, 1)),
      talosconfig: talosconfigPath(input.kit),
    }),
    warnings,
    phases,
  });
}

/** The planner's batches and makespan as the plan records them. */
function workerRollOf(
  roll: PlannedRoll,
  times: ReturnType<typeof makespan>,
  o: { maxUnavailable: string; perBatch: number; surgeReplicas: boolean },
): WorkerRoll {
  return {
    maxUnavailable: { given: o.maxUnavailable, nodes: o.perBatch },
    surgeWorkers:
      roll.surge.nodes > 0
        ? {
            count: roll.surge.nodes,
            note: `each shaped like the largest pool (${roll.surge.pool.length} worker(s) with the labels and taints of ${roll.surge.pool[0]}): its labels and taints, its smallest allocatable and its largest DaemonSet requests`,
          }
        : null,
    surgeReplicas: o.surgeReplicas,
    batches: roll.batches.map((b, i) => ({ ...b, seconds: times.batchSeconds[i]!, why: explainBatch(b) })),
    outages: roll.outages,
    blocked: roll.blocked,
    surged: roll.surged,
    estimate: {
      seconds: times.estimateSeconds,
      surgeSeconds: times.surgeSeconds,
      lowerBoundSeconds: times.lowerBoundSeconds,
      lowerBound: times.lowerBound,
      assumptions: times.assumptions,
    },
  };
}

function need<T>(value: T | undefined, what: string, missing: string | undefined): T {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) {
    throw inputError(
      `cannot plan without ${what}`,
      { object: 'snapshot' },
      `provide ${missing ?? what} in the snapshot and run ferry plan again`,
    );
  }
  return value;
}

const PHASE_TITLES: Record<PhaseId, [string, string]> = {
  0: [
    'Preflight',
    'Nothing changes until the audit shows no unsuppressed blocker and the cluster is healthy.',
  ],
  1: [
    'Preparation',
    'Kubeadm-side changes that must be in place before the first Talos control plane joins (a Talos apiserver serves in-cluster clients at once).',
  ],
  2: [
    'Control planes',
    'One control plane at a time; followers first, the etcd leader last, so leadership moves once onto a caught-up Talos member.',
  ],
  3: [
    'Workers',
    "In computed batches, while one kubeadm control plane still stands: a batch's pods can all go at once within every PodDisruptionBudget and fit on the workers that stay.",
  ],
  4: ['Last kubeadm control plane', 'After it, etcd and the API run on Talos only: an etcd snapshot first.'],
  5: ['After-care', 'Remove what only the migration needed, and prove a node can be replaced.'],
};

/** Assigns phase, index and the stable id to every draft; resolves kubeadm-prep dependencies. */
function numberPhases(drafts: Record<PhaseId, DraftStep[]>): Phase[] {
  const phases: Phase[] = ([0, 1, 2, 3, 4, 5] as const).map((id) => {
    const list = drafts[id];
    const width = Math.max(2, String(list.length).length);
    const steps = list.map(
      (d, i) => ({ ...d, phase: id, index: i + 1, id: stepId(id, i + 1, width, d.kind, d.subject) }) as Step,
    );
    return { id, name: PHASE_NAMES[id], title: PHASE_TITLES[id][0], summary: PHASE_TITLES[id][1], steps };
  });
  const byPrep = new Map<string, string[]>();
  for (const s of phases[1]!.steps) {
    if (s.kind === 'kubeadm-prep' && s.params.source.kind === 'kit') {
      const list = byPrep.get(s.params.source.prepId) ?? [];
      list.push(s.id);
      byPrep.set(s.params.source.prepId, list);
    }
  }
  for (const s of phases[1]!.steps) {
    if (s.kind === 'kubeadm-prep' && s.params.source.kind === 'kit' && s.params.source.after.length > 0) {
      s.after = s.params.source.after.flatMap((p) => byPrep.get(p) ?? []);
    }
  }
  return phases;
}

function drainInfoFrom(
  index: ReturnType<typeof buildIndex>,
): (node: string) => { pdbs: PdbRef[]; pods: number } {
  const cache = new Map<string, { pdbs: PdbRef[]; pods: number }>();
  return (node) => {
    const hit = cache.get(node);
    if (hit) return hit;
    const pods = (index.podsByNode.get(node) ?? []).filter((p) => {
      if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return false;
      if (p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet')) return false;
      const phase = p.status?.phase;
      return phase !== 'Succeeded' && phase !== 'Failed';
    });
    const pdbs = new Map<string, PdbRef>();
    for (const p of pods) {
      for (const b of index.pdbsForPod(p)) {
        const allowed = b.pdb.status?.disruptionsAllowed;
        pdbs.set(`${b.namespace}/${b.pdb.metadata.name}`, {
          namespace: b.namespace,
          name: b.pdb.metadata.name,
          disruptionsAllowed: typeof allowed === 'number' ? allowed : null,
        });
      }
    }
    const info = { pdbs: [...pdbs.values()].sort(byNsName), pods: pods.length };
    cache.set(node, info);
    return info;
  };
}

function byNsName(a: PdbRef, b: PdbRef): number {
  return `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);
}

function copiesToWipe(
  snapshot: Snapshot,
  kit: KitSummary | null,
): { where: string; path: string; why: string }[] {
  const out: { where: string; path: string; why: string }[] = [];
  if (snapshot.pki?.root)
    out.push({
      where: 'workstation',
      path: snapshot.pki.root,
      why: 'the copy of /etc/kubernetes/pki in the snapshot: CA keys',
    });
  out.push(
    {
      where: 'workstation',
      path: 'pki/etcd/healthcheck-client.key',
      why: 'the etcd client key used by the runbook',
    },
    { where: 'workstation', path: ETCD_BACKUP_BEFORE, why: 'etcd snapshot: every Secret of the cluster' },
    { where: 'workstation', path: LAST_CP_SNAPSHOT, why: 'etcd snapshot: every Secret of the cluster' },
  );
  for (const f of kit?.files ?? []) {
    if (f.secret)
      out.push({
        where: 'workstation',
        path: `${kit!.path}/${f.path}`,
        why: `kit file with keys or tokens: ${f.purpose}`,
      });
  }
  out.push({
    where: 'wherever it was copied',
    path: 'the --pki DIR given to ferry generate',
    why: 'CA keys',
  });
  return out;
}

/** The Talos members run the cluster's etcd minor during the mixed period when Talos's default differs. */
function etcdPin(facts: Facts): { cluster: string; talos: string } | null {
  const cluster = facts.etcd.version.value;
  const talos = facts.target.talos.etcdVersion;
  if (!cluster) return null;
  const minor = (v: string) => v.replace(/^v/, '').split('.').slice(0, 2).join('.');
  return minor(cluster) === minor(talos) ? null : { cluster, talos };
}

function referencedKitFiles(phases: Phase[], kit: KitSummary): string[] {
  const text = JSON.stringify(phases);
  return kit.files.map((f) => f.path).filter((p) => text.includes(`${kit.path}/${p}`));
}
