/**
 * The rules between the steps of a plan that buildPlan guarantees and `ferry run` relies on,
 * checked on every plan it loads (a plan with a valid digest written by a buggy ferry is refused
 * too). Each rule is what build.ts, swap.ts, workers.ts and aftercare.ts make, stated once:
 * - phases 0–5 in order; steps numbered 1, 2, 3… in each phase, ids PHASE.INDEX.KIND.SUBJECT;
 * - nothing destructive before the first swap (preflight, preparation);
 * - control planes one at a time (phases 2 and 4): the steps of one swap are contiguous, in the
 *   order of `controlPlanes`, and begin with the swap's gate (after the phase 4 etcd snapshot):
 *   no destructive step comes before it. A swap removes its own etcd member only, and with surge
 *   only once its replacement is a voter; with replace, the old machine goes before the new one
 *   comes to the same address;
 * - workers batch by batch (phase 3): each batch begins with its gate; its workers are those of
 *   `workerRoll.batches`, in that order;
 * - a workload --surge-replicas scales (phase 3 only) is scaled up once, waited for, and restored
 *   once, in a later step, to the count it had: never left scaled up, never restored first;
 * - every destructive step in a swap or batch has its own precondition;
 * - after-care (phase 5) has no gate: its destructive steps are the operator's to do, the run
 *   instructs and waits;
 * - the kinds that cannot be undone are always marked destructive (the run never repeats them
 *   without observing first).
 */
import { isEmptyExpectation } from './expected-state.js';
import { type Issue, Issues } from './issues.js';
import { PHASE_NAMES, type PhaseId, type PlanContent, type Step, type StepKind, stepId } from './model.js';

/** Kinds buildPlan always marks destructive: their effect cannot be taken back. */
const ALWAYS_DESTRUCTIVE: ReadonlySet<StepKind> = new Set([
  'etcd-remove-member',
  'decommission',
  'delete-node',
  'delete-bootstrap-token',
  'relabel-kube-proxy',
  'wipe-pki-copies',
  'drill',
]);

interface Placed {
  step: Step;
  /** `phases[i].steps[j]` */
  path: string;
}

function placed(plan: PlanContent, phase: number): Placed[] {
  return (plan.phases[phase]?.steps ?? []).map((step, j) => ({
    step,
    path: `phases[${phase}].steps[${j}]`,
  }));
}

function issue(out: Issues, p: Placed, field: string | null, message: string): void {
  out.at(p.step.id, field ? `${p.path}.${field}` : p.path, message);
}

export function invariantIssues(plan: PlanContent): Issue[] {
  const out = new Issues();
  phasesInOrder(plan, out);
  // The other rules find phases by their position.
  if (out.list.length > 0) return out.list;
  numbering(plan, out);
  destructiveKinds(plan, out);
  for (const phase of [0, 1] as const) {
    for (const p of placed(plan, phase))
      if (p.step.destructive)
        issue(
          out,
          p,
          'destructive',
          `phase ${phase} (${PHASE_NAMES[phase]}) changes nothing that cannot be undone: a destructive step belongs in a swap, behind its gate`,
        );
  }
  controlPlaneOrder(plan, out);
  for (const phase of [2, 4] as const) controlPlaneSwaps(plan, phase, out);
  workerBatches(plan, out);
  surgedReplicas(plan, out);
  afterCare(plan, out);
  provisioners(plan, out);
  return out.list;
}

function phasesInOrder(plan: PlanContent, out: Issues): void {
  const ids = Object.keys(PHASE_NAMES).map(Number) as PhaseId[];
  if (plan.phases.length !== ids.length)
    out.add(
      'phases',
      `must hold the ${ids.length} phases ${ids.map((i) => `${i} ${PHASE_NAMES[i]}`).join(', ')}; holds ${plan.phases.length}`,
    );
  plan.phases.forEach((ph, i) => {
    if (ph.id !== i) out.add(`phases[${i}].id`, `must be ${i}: phases run in order 0 to 5; got ${ph.id}`);
    const expected = PHASE_NAMES[i as PhaseId];
    if (expected !== undefined && ph.name !== expected)
      out.add(`phases[${i}].name`, `must be "${expected}" (phase ${i}); got "${ph.name}"`);
  });
}

function numbering(plan: PlanContent, out: Issues): void {
  const seen = new Map<string, string>();
  const all = plan.phases.flatMap((_, i) => placed(plan, i));
  const ids = new Set(all.map((p) => p.step.id));
  plan.phases.forEach((ph, i) => {
    const width = Math.max(2, String(ph.steps.length).length);
    placed(plan, i).forEach((p, j) => {
      const s = p.step;
      if (s.phase !== i) issue(out, p, 'phase', `must be ${i}, the phase the step is in; got ${s.phase}`);
      if (s.index !== j + 1)
        issue(out, p, 'index', `must be ${j + 1}: steps are numbered 1, 2, 3… in run order; got ${s.index}`);
      const id = stepId(s.phase, s.index, width, s.kind, s.subject);
      if (s.id !== id)
        issue(
          out,
          p,
          'id',
          `must be ${id} (PHASE.INDEX.KIND.SUBJECT of the step's own fields); got "${s.id}"`,
        );
      const earlier = seen.get(s.id);
      if (earlier) issue(out, p, 'id', `repeated: ${earlier} has the same id (the journal keys steps by id)`);
      else seen.set(s.id, p.path);
      (s.after ?? []).forEach((a, k) => {
        if (!ids.has(a)) issue(out, p, `after[${k}]`, `names no step of this plan: "${a}"`);
      });
      if (s.condition !== undefined && s.kind !== 'etcd-move-leader')
        issue(
          out,
          p,
          'condition',
          `only an etcd-move-leader step has a condition (the run ignores it on a ${s.kind} step)`,
        );
    });
  });
}

function destructiveKinds(plan: PlanContent, out: Issues): void {
  plan.phases.forEach((_, i) => {
    for (const p of placed(plan, i))
      if (ALWAYS_DESTRUCTIVE.has(p.step.kind) && !p.step.destructive)
        issue(
          out,
          p,
          'destructive',
          `must be true: ${p.step.kind} cannot be undone, and the run never repeats a destructive step without observing first`,
        );
  });
}

function controlPlaneOrder(plan: PlanContent, out: Issues): void {
  const cps = plan.controlPlanes;
  cps.forEach((c, i) => {
    if (c.position !== i + 1)
      out.add(`controlPlanes[${i}].position`, `must be ${i + 1}: control planes are listed in order`);
    const phase = i === cps.length - 1 ? 4 : 2;
    if (c.phase !== phase)
      out.add(
        `controlPlanes[${i}].phase`,
        `must be ${phase}: the last control plane goes in phase 4, the others in phase 2`,
      );
  });
}

/** Runs of consecutive steps with the same key. */
function runs<T>(items: Placed[], key: (p: Placed) => T): { key: T; steps: Placed[] }[] {
  const out: { key: T; steps: Placed[] }[] = [];
  for (const p of items) {
    const k = key(p);
    const last = out.at(-1);
    if (last && last.key === k) last.steps.push(p);
    else out.push({ key: k, steps: [p] });
  }
  return out;
}

/** The gate of a swap or batch opens it: before it only an etcd snapshot; destructive steps need their own precondition. */
function gatedBlock(block: Placed[], what: string, out: Issues): void {
  const gates = block.filter((p) => p.step.kind === 'gate');
  const first = block[0]!;
  if (gates.length !== 1) {
    const destructive = block.filter((p) => p.step.destructive).map((p) => p.step.id);
    issue(
      out,
      gates[1] ?? first,
      null,
      gates.length === 0
        ? `${what} has no gate step${destructive.length > 0 ? `: its destructive steps ${destructive.join(', ')} would run unchecked` : ''}`
        : `${what} has ${gates.length} gate steps; it has one, first`,
    );
  }
  const gate = gates[0];
  const gateAt = gate ? block.indexOf(gate) : block.length;
  block.forEach((p, k) => {
    if (k < gateAt && gate && p.step.kind !== 'etcd-snapshot')
      issue(
        out,
        p,
        null,
        p.step.destructive
          ? `destructive step before the gate of ${what} (${gate.step.id}): nothing destructive runs until the gate has seen the cluster healthy`
          : `runs before the gate of ${what} (${gate.step.id}), which opens it`,
      );
    if (p.step.destructive && isEmptyExpectation(p.step.expect))
      issue(out, p, 'expect', `a destructive step in ${what} states the state it expects before it acts`);
  });
}

function controlPlaneSwaps(plan: PlanContent, phase: 2 | 4, out: Issues): void {
  const blocks = runs(placed(plan, phase), (p) => p.step.subject);
  const seen = new Set<string>();
  for (const b of blocks) {
    if (seen.has(b.key))
      issue(
        out,
        b.steps[0]!,
        'subject',
        `control planes are replaced one at a time: the steps of ${b.key} are split by another control plane's`,
      );
    seen.add(b.key);
  }
  const expected = plan.controlPlanes.filter((c) => c.phase === phase).map((c) => c.node);
  const actual = [...seen];
  if (expected.join(',') !== actual.join(','))
    out.add(
      `phases[${phase}].steps`,
      `phase ${phase} replaces ${expected.join(', ') || 'no control plane'} (controlPlanes); its steps replace ${actual.join(', ') || 'none'}`,
    );
  for (const b of blocks) {
    const what = `the swap of ${b.key}`;
    gatedBlock(b.steps, what, out);
    const cp = plan.controlPlanes.find((c) => c.node === b.key);
    const at = (kind: StepKind) => b.steps.findIndex((p) => p.step.kind === kind);
    const removals = b.steps.filter((p) => p.step.kind === 'etcd-remove-member');
    for (const p of removals) {
      const m = p.step.kind === 'etcd-remove-member' ? p.step.params.member : undefined;
      const own = cp?.member;
      if (removals.length > 1 || !own || m?.kind !== 'kubeadm' || m.id !== own.id)
        issue(
          out,
          p,
          'params.member',
          `${what} removes its own etcd member only (${own ? `${own.name}, id ${own.id}` : 'it has none'}), once`,
        );
    }
    const remove = at('etcd-remove-member');
    const voter = at('wait-member-voter');
    if (plan.strategy === 'surge' && remove >= 0 && !(voter >= 0 && voter < remove))
      issue(
        out,
        b.steps[remove]!,
        null,
        `surge: in ${what} the new member is a voter (wait-member-voter) before the old one is removed, so etcd never has fewer voters than it started with`,
      );
    const decommission = at('decommission');
    const provision = at('provision');
    if (plan.strategy === 'replace' && provision >= 0 && !(decommission >= 0 && decommission < provision))
      issue(
        out,
        b.steps[provision]!,
        null,
        `replace: in ${what} the old machine is decommissioned before its replacement comes up at the same address`,
      );
  }
}

function workerBatches(plan: PlanContent, out: Issues): void {
  const planned = plan.workerRoll.batches.map((b) => b.nodes.join(', '));
  const ordered = plan.workerRoll.batches.map((b) =>
    plan.workers
      .filter((w) => w.batch === b.index)
      .map((w) => w.node)
      .join(', '),
  );
  plan.workerRoll.batches.forEach((b, k) => {
    if (b.index !== k + 1) out.add(`workerRoll.batches[${k}].index`, `must be ${k + 1}; got ${b.index}`);
    if (planned[k] !== ordered[k])
      out.add(
        `workerRoll.batches[${k}].nodes`,
        `batch ${b.index} was planned for ${planned[k] || 'no worker'}; workers puts ${ordered[k] || 'none'} in it`,
      );
  });
  const steps = placed(plan, 3);
  for (const p of steps)
    if (p.step.batch === undefined) issue(out, p, 'batch', 'a worker step belongs to a batch');
  const batches = runs(steps, (p) => p.step.batch);
  batches.forEach((b, k) => {
    if (b.key === undefined) return;
    if (b.key !== k + 1)
      issue(
        out,
        b.steps[0]!,
        'batch',
        `must be ${k + 1}: worker batches run one after another, numbered 1, 2, 3…; got ${b.key}`,
      );
    const what = `worker batch ${b.key}`;
    gatedBlock(b.steps, what, out);
    for (const p of b.steps) {
      const w = plan.workers.find((x) => x.node === p.step.subject);
      if (!w || w.batch !== b.key)
        issue(out, p, 'subject', `${p.step.subject} is not a worker of batch ${b.key} (workers)`);
    }
  });
}

function surgedReplicas(plan: PlanContent, out: Issues): void {
  plan.phases.forEach((_, i) => {
    if (i === 3) return;
    for (const p of placed(plan, i))
      if (p.step.kind === 'scale-workload' || p.step.kind === 'wait-workload-ready')
        issue(
          out,
          p,
          'kind',
          `a ${p.step.kind} step belongs to the worker phase (3), around the drains it makes room for`,
        );
  });
  const steps = placed(plan, 3);
  const label = (w: { kind: string; namespace: string; name: string }) =>
    `${w.kind} ${w.namespace}/${w.name}`;
  const byWorkload = new Map<string, { up: number[]; restore: number[] }>();
  steps.forEach((p, k) => {
    if (p.step.kind !== 'scale-workload') return;
    const key = label(p.step.params.workload);
    const e = byWorkload.get(key) ?? { up: [], restore: [] };
    (p.step.params.purpose === 'surge' ? e.up : e.restore).push(k);
    byWorkload.set(key, e);
  });
  for (const [w, e] of byWorkload) {
    const up = e.up[0];
    const restore = e.restore[0];
    const first = steps[up ?? restore!]!;
    if (e.up.length !== 1 || e.restore.length !== 1 || up === undefined || restore === undefined) {
      issue(
        out,
        first,
        null,
        `${w} is scaled up once and restored once (--surge-replicas); the plan scales it up ${e.up.length} and restores it ${e.restore.length} time(s)`,
      );
      continue;
    }
    const u = steps[up]!.step;
    const r = steps[restore]!.step;
    if (restore < up) issue(out, steps[restore]!, null, `${w} is restored before it is scaled up`);
    const wait = steps[up + 1]?.step;
    if (wait?.kind !== 'wait-workload-ready' || label(wait.params.workload) !== w)
      issue(
        out,
        steps[up]!,
        null,
        `${w}: the scale-up is followed by the wait for its Ready replicas, before any drain`,
      );
    if (u.kind === 'scale-workload' && r.kind === 'scale-workload') {
      if (r.params.replicas !== u.params.from || u.params.from !== r.params.from)
        issue(
          out,
          steps[restore]!,
          'params.replicas',
          `${w} is restored to the ${u.params.from} replicas it had; got ${r.params.replicas}`,
        );
      if (u.params.replicas <= u.params.from)
        issue(
          out,
          steps[up]!,
          'params.replicas',
          `${w}: the scale-up adds a replica to ${u.params.from}; got ${u.params.replicas}`,
        );
    }
  }
}

function afterCare(plan: PlanContent, out: Issues): void {
  for (const p of placed(plan, 5))
    if (p.step.destructive && p.step.action.performer !== 'operator')
      issue(
        out,
        p,
        'action.performer',
        `after-care has no gate: a destructive step there is the operator's to do (the run instructs and waits); got "${p.step.action.performer}"`,
      );
}

function provisioners(plan: PlanContent, out: Issues): void {
  plan.phases.forEach((_, i) => {
    for (const p of placed(plan, i)) {
      const s = p.step;
      const used =
        s.kind === 'provision' || s.kind === 'provision-detect' || s.kind === 'decommission'
          ? [s.params.provisioner]
          : s.kind === 'provision-request'
            ? s.params.machines.map((m) => m.provisioner)
            : [];
      for (const got of used)
        if (got !== plan.provisioner)
          issue(
            out,
            p,
            'params.provisioner',
            `must be the plan's provisioner "${plan.provisioner}"; got "${got}"`,
          );
    }
  });
}
