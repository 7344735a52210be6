/**
 * bench/workers (docs/benchmarks.md "workers"): the worker roll on a lab, in one run: ferry's plan (computed
 * batches) against one node at a time (kops-style: --max-unavailable 1), each on a fresh lab of the
 * snapshot, with the canary request probe every 10 ms and every workload's Ready pods watched
 * against its PDB; then the planner at 500 and 2,000 synthetic workers (bench/plan-scale's).
 *
 * Figures: ferry's worker makespan (first to last step of phase 3 in the journal), the plan's lower
 * bound, the one-at-a-time makespan, PDB violations (a workload below its PDB's minimum Ready at
 * any sample), failed canary requests, the plan's estimate beside the makespan (measured/estimate),
 * and the plan's batches against the batches the bound's terms need. Targets (issue 26, on the
 * lab's clock): makespan ≤ 1.25× the lower bound, one-at-a-time ≥ 4× slower than ferry, 0 PDB
 * violations, 0 failed canary requests; planning 2,000 workers < 5 s.
 *
 *   npm run bench -- workers [--snapshot DIR | --generate N] [--subnet N] [--orders ferry,one-at-a-time]
 *                            [--pin | --no-pin] [--plan-small N] [--plan-large N] [--verbose]
 *                            [--boot-seconds S] [--decommission-seconds S] [--jitter F]
 *
 * Reduced scale: the default snapshot is examples/lab-cluster (5 workers); `--plan-small 50
 * --plan-large 200` shrinks the planning part. The issue's full lab (3 control planes, 60 workers,
 * 400+ pods with mixed PDBs, pools near capacity, a StatefulSet on local PVs) is `--generate 60`
 * (src/lab/testing-worker-lab.ts writes it; `--generate 12` is the reduced one). The lower bound is
 * priced at the step durations the run's journal shows (src/run/measured-timing.ts), not at
 * production's expected ones. The control planes are replaced first in each run (phase 3 expects
 * Talos etcd members); only phase 3 is timed.
 *
 * The lab runs on production's clock, scaled (src/lab/provisioner/clock.ts): a machine boots in
 * 60 s and powers off in 20 s, each ±10 % (`--boot-seconds`, `--decommission-seconds`,
 * `--jitter`); `--boot-seconds 0 --decommission-seconds 0` runs at the lab's own speed.
 *
 * Each lab runs in its own process (lib/workers-lab-child.ts, driven over its control socket as
 * `ferry run --provisioner lab` drives `ferry lab`). Pinned (`--pin`): that process, its etcd
 * members and API servers on core 0, this one (orchestrator, probes) on core 1. Unpinned
 * (`--no-pin`): the same processes on both cores. Default: both, for every order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { requestProbe } from '../src/adapters/probes/http.js';
import { remoteLabControl } from '../src/adapters/provisioners/lab-control.js';
import { assemble } from '../src/app/assemble.js';
import { LAB_RUN_DEFAULTS } from '../src/app/rehearse.js';
import { failuresByPart, phaseWindows } from '../src/app/rehearse-canary.js';
import { WorkloadWatch } from '../src/app/rehearse-workloads.js';
import { runSession } from '../src/app/session.js';
import { LAB_CLOCK_OPTIONS, parseLabClock } from '../src/cli/lab-clock.js';
import { disposeAllLabs } from '../src/lab/etcd/cluster.js';
import { LabKubeClient } from '../src/lab/nodes/client.js';
import type { LabClock } from '../src/lab/provisioner/clock.js';
import { writeWorkerLab } from '../src/lab/testing-worker-lab.js';
import { repriced, surgeSecondsFor, termSeconds } from '../src/plan/batches/estimate.js';
import type { LowerBoundTerm, PlannedBatch } from '../src/plan/batches/model.js';
import { roundSeconds, type Timing } from '../src/plan/batches/timing.js';
import { readPlan } from '../src/plan/load.js';
import { Journal, journalPathFor } from '../src/run/journal.js';
import { describeTiming, measuredTiming, type StepSpan, stepSpans } from '../src/run/measured-timing.js';
import { TerminalOperator } from '../src/run/operator.js';
import { type Bench, ms } from './lib/bench.js';
import { startLabProcess } from './lib/lab-process.js';
import { LAB_CORE, pinSupport, RUN_CORE } from './lib/pin.js';
import { planScaleOnce } from './plan-scale.js';

const ORDERS = ['ferry', 'one-at-a-time'] as const;
type Order = (typeof ORDERS)[number];

/** Production's minutes, scaled so that a 60-worker roll takes hours, not days. */
const BENCH_CLOCK: LabClock = { bootSeconds: 60, decommissionSeconds: 20, jitter: 0.1 };
/** One seed for every lab: both orders' machines (named after the node they replace) take the same times. */
const CLOCK_SEED = 'bench/workers';

/** Lab and orchestrator on separate cores (taskset), or sharing both. */
type Mode = 'unpinned' | 'pinned';

interface Outcome {
  order: Order;
  mode: Mode;
  completed: boolean;
  detail: string;
  /** Phase 3, first to last transition. */
  makespanSeconds: number;
  /** Priced at the step durations this run measured (the shortest of each kind). */
  lowerBoundSeconds: number;
  /** The bound's largest term, in words. */
  boundBy: string;
  /**
   * The plan's estimate for this run: its batches priced at the clock's boot and power-off times
   * and the lab's own medians for the steps the clock does not set (see clockTiming).
   */
  clockEstimateSeconds: number;
  /** The same formulas at every step kind's median in this run: the formulas alone, after the fact. */
  estimateSeconds: number;
  /** What clockEstimateSeconds was priced at, in words. */
  clockTimings: string;
  /**
   * Of clockEstimateSeconds: drain rounds charged the evicted pods' termination grace period over
   * a drain round (roundSeconds), and the longest grace. The lab's pods stop at once when evicted.
   */
  graceSeconds: { charged: number; longest: number };
  /** The bound's terms as batch counts, and the batches the plan takes (see batchesAgainstBound). */
  batching: BatchingCheck;
  /** The plan's own figures, at production's expected durations. */
  planned: { estimateSeconds: number; lowerBoundSeconds: number };
  timings: string;
  /** Phase 3's time by step kind, and outside any step. */
  where: string;
  /** The plan's outages by reason ("local-volume 3"): what no batch can move, never hidden. */
  outages: string;
  batches: number;
  violations: number;
  canaryFailed: number;
  /** Of which while workers were replaced (phase 3). */
  canaryFailedWorkers: number;
  canaryAttempts: number;
  /** Workloads that dipped below their PDB's minimum. */
  violated: string[];
  /** Pods not Ready yet when the roll started, when the lab had not settled. */
  unsettled: string[];
}

/**
 * The table the plan's estimate for this run is priced at. A plan's estimate is its formulas at
 * durations given before the run (production's expected ones, plan/batches/timing.ts); what this
 * run was given is the lab's clock: a machine boots (provision to a registering kubelet) in
 * bootSeconds and powers off in decommissionSeconds, on average. So those two come from the
 * clock, not from the run: the lab binds a machine as it asks for it and wait-node-ready waits
 * out the boot, so the boot prices node Ready (provision keeps the measured request). The steps
 * the clock does not set (gates, cordons, drains, deletions) run at the lab's own speed, which no
 * one states beforehand: the run's medians, seconds against the clock's tens. A median-priced
 * estimate only checks the formulas after the fact (a batch's slowest boot is then in the
 * figures); this one also shows what the plan cannot know: a batch waits for its slowest machine
 * (up to base × (1 + jitter)), and the lab's own time on top of a boot. At lab speed (a clock
 * entry 0) the median stands.
 */
function clockTiming(clock: LabClock, typical: Timing): Timing {
  return {
    ...typical,
    ...(clock.bootSeconds > 0 && { nodeReady: clock.bootSeconds }),
    ...(clock.decommissionSeconds > 0 && { decommission: clock.decommissionSeconds }),
  };
}

interface BatchingCheck {
  planned: number;
  /** "3, 3, 2, …" */
  sizes: string;
  /** What stopped each planned batch from growing, counted ("PDB shop/web 4, every worker left 1"). */
  stoppedBy: string;
  /** The most drain rounds of a planned batch: a batch's first node sets them (planner.ts). */
  maxRounds: number;
  /** Each term of the plan's bound: the batches it counts, and the batches the planner's rule needs. */
  terms: { words: string; counted: number; rule: number; seconds: number; ruleSeconds: number }[];
  /** The largest term under the rule, priced at the run's floor: no batching by that rule is faster. */
  ruleBoundSeconds: number;
  ruleBoundBy: string;
  ruleBatches: number;
}

/**
 * The bound's terms as batch counts against the batches the plan takes. A PDB term counts the
 * batches its pods need under the planner's round limit (the plan's `batches`: a batch evicts at
 * most R × allowed of them, R the most rounds a batch may take); a plan written before it was
 * counted is checked with R the most rounds any planned batch has: six single-pod nodes of a
 * one-disruption PDB at one round a batch, six batches. The --max-unavailable and capacity terms
 * count batches already.
 */
function batchesAgainstBound(
  batches: readonly PlannedBatch[],
  surgeNodes: number,
  terms: readonly LowerBoundTerm[],
  t: Timing,
): BatchingCheck {
  const maxRounds = Math.max(1, ...batches.map((b) => b.rounds));
  const surge = surgeSecondsFor(surgeNodes, t);
  const rows = terms.map((term) => {
    if (term.kind !== 'pdb')
      return {
        words: termWords(term),
        counted: term.batches,
        rule: term.batches,
        seconds: term.seconds,
        ruleSeconds: term.seconds,
      };
    const rule = term.batches ?? Math.ceil(term.pods / (maxRounds * term.allowed));
    // One batch's overhead (a PDB term of no rounds), once per batch; the rounds as the plan counts them.
    const overhead = termSeconds({ ...term, rounds: 0 }, t, 0);
    return {
      words: termWords(term),
      counted: term.batches ?? 1,
      rule,
      seconds: term.seconds,
      ruleSeconds: surge + rule * overhead + term.rounds * t.podReady,
    };
  });
  const top = [...rows].sort((a, b) => b.ruleSeconds - a.ruleSeconds)[0];
  const stopped = new Map<string, number>();
  for (const b of batches) {
    const k = stopWords(b);
    stopped.set(k, (stopped.get(k) ?? 0) + 1);
  }
  return {
    planned: batches.length,
    sizes: batches.map((b) => b.nodes.length).join(', '),
    stoppedBy: [...stopped]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', '),
    maxRounds,
    terms: rows,
    ruleBoundSeconds: top?.ruleSeconds ?? 0,
    ruleBoundBy: top?.words ?? 'no term',
    ruleBatches: Math.max(0, ...rows.map((r) => r.rule)),
  };
}

function stopWords(b: PlannedBatch): string {
  switch (b.bound.kind) {
    case 'max-unavailable':
      return `--max-unavailable ${b.bound.max}`;
    case 'pdb':
      return `PDB ${b.bound.pdb}`;
    case 'blocked':
      return `PDB ${b.bound.pdb} (allows none)`;
    case 'capacity':
      return `capacity (${b.bound.shortage})`;
    case 'placement':
      return "placement (the nodes left hold this batch's pods)";
    case 'nodes-left':
      return 'every worker left';
  }
}

function describeBatching(c: BatchingCheck): string {
  // The largest few under the rule: the others are further from binding.
  const shown = [...c.terms].sort((a, b) => b.ruleSeconds - a.ruleSeconds).slice(0, 4);
  const rest = c.terms.length - shown.length;
  const terms = shown
    .map(
      (r) =>
        `${r.words}: ${r.counted} → ${r.rule} batch${r.rule === 1 ? '' : 'es'} (${r.seconds.toFixed(1)} s → ${r.ruleSeconds.toFixed(1)} s)`,
    )
    .join('; ')
    .concat(rest > 0 ? `; ${rest} more term(s), none larger` : '');
  const gap =
    c.planned > c.ruleBatches
      ? `the plan takes ${c.planned - c.ruleBatches} more than the bound's largest count; its batches stopped at: ${c.stoppedBy}`
      : `the plan takes no more batches than the bound's largest count (batches stopped at: ${c.stoppedBy})`;
  return `plan ${c.planned} (sizes ${c.sizes}; at most ${c.maxRounds} drain round${c.maxRounds === 1 ? '' : 's'} a batch); the bound's terms, largest first, in batches as the plan's bound counts them → as the planner's batching rule needs them: ${terms}; binding under the rule: ${c.ruleBoundBy} (${c.ruleBatches} batches at most of any term, ${c.ruleBoundSeconds.toFixed(1)} s); ${gap}`;
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0
    ? `${(a / b).toFixed(2)}×`
    : 'n/a';
}

function clockWords(c: LabClock): string {
  return `machines boot in ${c.bootSeconds} s and power off in ${c.decommissionSeconds} s, each ±${+(c.jitter * 100).toFixed(2)} %`;
}

async function rollWorkers(
  order: Order,
  mode: Mode,
  snapshotPath: string,
  subnet: number,
  clock: LabClock,
  log: (l: string) => void,
) {
  const dir = await mkdtemp(join(tmpdir(), `ferry-bench-workers-${order}-`));
  // The lab in its own process for both modes, so that pinned and unpinned differ only in taskset.
  const lab = await startLabProcess(
    {
      snapshotPath: resolve(snapshotPath),
      dir,
      subnet,
      clock,
      clockSeed: CLOCK_SEED,
      ...(order === 'one-at-a-time' && { maxUnavailable: { kind: 'count' as const, nodes: 1 } }),
    },
    { pin: mode === 'pinned', log },
  );
  try {
    const r = lab.ready;
    if (!r.settled.settled) log(`lab not settled before the roll: ${r.settled.pending.join('; ')}`);
    const plan = await readPlan(r.planFile);
    // The lab's defaults wait 60 s for a Node or a member and for a power-off: on top of the
    // clock's longest times here.
    const longestBoot = clock.bootSeconds * (1 + clock.jitter);
    const longestOff = clock.decommissionSeconds * (1 + clock.jitter);
    const timeouts = LAB_RUN_DEFAULTS.timeouts ?? {};
    const a = assemble({
      connection: { kubeconfig: r.kubeconfigPath, etcd: r.etcd },
      provisioner: 'lab',
      lab: remoteLabControl(r.socket, Math.max(120, 60 + longestOff) * 1000),
      operator: new TerminalOperator({ say: log, confirmDir: join(dir, 'confirm'), interactive: false }),
      probes: false,
      log,
    });
    const probes = r.canaryUrl
      ? [requestProbe({ url: `${r.canaryUrl}/`, name: 'canary-request', timeoutMs: 2_000 })]
      : [];
    const client = await LabKubeClient.fromKubeconfig(r.kubeconfigPath);
    const watch = new WorkloadWatch(client);
    watch.start();
    let s: Awaited<ReturnType<typeof runSession>>;
    try {
      s = await runSession({
        planFile: r.planFile,
        plan,
        ports: a.ports,
        probes,
        log,
        liveSeconds: 3600,
        // As `ferry rehearse` does: the plan lists bare pods as outages and the rehearsal accepts
        // them (journaled), so that every worker is replaced.
        run: {
          ...LAB_RUN_DEFAULTS,
          evictBarePods: true,
          phases: [0, 2, 3],
          timeouts: {
            ...timeouts,
            'wait-node-ready': (timeouts['wait-node-ready'] ?? 60) + longestBoot,
            'wait-member-joined': (timeouts['wait-member-joined'] ?? 60) + longestBoot,
            decommission: (timeouts.decommission ?? 60) + longestOff,
          },
        },
      });
    } finally {
      a.close();
    }
    const watched = await watch.stop();
    const j = Journal.open(journalPathFor(r.planFile), { readonly: true });
    const { w3, transitions } = (() => {
      try {
        const transitions = j.transitions();
        return { w3: phaseWindows(plan, transitions).find((w) => w.phase === 3), transitions };
      } finally {
        j.close();
      }
    })();
    const canaryRecord = s.probes.find((p) => p.summary.name === 'canary-request');
    const canary = canaryRecord?.summary;
    const windows = phaseWindows(plan, transitions);
    const roll = plan.workerRoll;
    // The plan prices its bound at production's durations (a 900 s provision); this lab's steps
    // take seconds. Price the same terms at what this run's journal shows.
    const rounds = new Map(roll.batches.map((b) => [b.index, b.rounds]));
    const spans = stepSpans(plan, transitions);
    const measured = measuredTiming(spans, (b) => rounds.get(b) ?? 1);
    const makespanSeconds = w3 ? (w3.to - w3.from) / 1000 : Number.NaN;
    const terms = {
      batches: roll.batches,
      surgeNodes: roll.surgeWorkers?.count ?? 0,
      lowerBound: roll.estimate.lowerBound,
    };
    const bound = repriced(terms, measured.floor);
    const top = bound.lowerBound[0];
    const atClock = clockTiming(clock, measured.typical);
    const o: Outcome = {
      order,
      mode,
      completed: s.result.status === 'completed',
      detail: s.result.error?.message ?? '',
      makespanSeconds,
      where: whereTimeWent(spans, makespanSeconds),
      lowerBoundSeconds: bound.lowerBoundSeconds,
      boundBy: top ? termWords(top) : 'no term',
      clockEstimateSeconds: repriced(terms, atClock).estimateSeconds,
      estimateSeconds: repriced(terms, measured.typical).estimateSeconds,
      clockTimings: describeTiming(atClock),
      graceSeconds: {
        charged: roll.batches.reduce(
          (n, b) => n + b.rounds * (roundSeconds(atClock, b.graceSeconds) - atClock.podReady),
          0,
        ),
        longest: Math.max(0, ...roll.batches.map((b) => b.graceSeconds)),
      },
      batching: batchesAgainstBound(roll.batches, terms.surgeNodes, bound.lowerBound, measured.floor),
      planned: { estimateSeconds: roll.estimate.seconds, lowerBoundSeconds: roll.estimate.lowerBoundSeconds },
      timings: `shortest of each step kind in this run: ${describeTiming(measured.floor)}${measured.missing.length ? ` (not measured, counted 0 s: ${measured.missing.join(', ')})` : ''}`,
      outages: outagesByReason(roll.outages),
      batches: roll.batches.length,
      violations: watched.floors.filter((f) => f.violated).length,
      canaryFailed: canary?.failures ?? Number.NaN,
      canaryAttempts: canary?.attempts ?? 0,
      canaryFailedWorkers: canaryRecord ? failuresByPart(canaryRecord, windows).workers : Number.NaN,
      violated: watched.floors
        .filter((f) => f.violated)
        .map((f) => `${f.name} (${f.minReady} Ready, minimum ${f.pdb?.minimum})`),
      unsettled: r.settled.settled ? [] : r.settled.pending,
    };
    return o;
  } finally {
    await lab.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * "drain-batch 120.3 s (6), provision 31.0 s (18), …, between steps 12.1 s": where the makespan
 * went (a kind's figure sums its steps, which may overlap; between steps is outside all of them).
 */
function whereTimeWent(spans: readonly StepSpan[], makespanSeconds: number): string {
  const by = new Map<string, { s: number; n: number }>();
  for (const x of spans) {
    const e = by.get(x.kind) ?? { s: 0, n: 0 };
    e.s += x.seconds;
    e.n++;
    by.set(x.kind, e);
  }
  // Steps of one kind run side by side in a batch: the time inside steps is the union of spans.
  let inSteps = 0;
  let reach = -Infinity;
  for (const x of [...spans].sort((a, b) => a.from - b.from)) {
    const to = x.from + x.seconds * 1000;
    if (to > reach) {
      inSteps += (to - Math.max(x.from, reach)) / 1000;
      reach = to;
    }
  }
  return [
    ...[...by].sort((a, b) => b[1].s - a[1].s).map(([k, e]) => `${k} ${e.s.toFixed(1)} s (${e.n})`),
    `between steps ${(makespanSeconds - inSteps).toFixed(1)} s`,
  ].join(', ');
}

function outagesByReason(outages: readonly { reason: string }[]): string {
  const n = new Map<string, number>();
  for (const o of outages) n.set(o.reason, (n.get(o.reason) ?? 0) + 1);
  return n.size ? [...n].map(([r, k]) => `${r} ${k}`).join(', ') : 'none';
}

function termWords(t: LowerBoundTerm): string {
  switch (t.kind) {
    case 'pdb':
      return `PDB ${t.pdb}: ${t.pods} pods, ${t.allowed} at a time, ${t.rounds} rounds`;
    case 'max-unavailable':
      return `${t.workers} workers, ${t.max} per batch: ${t.batches} batches`;
    case 'capacity':
      return `${t.resource}: ${t.batches} batches to move the requests through the spare room`;
  }
}

export const bench: Bench = {
  name: 'workers',
  summary:
    "the worker roll on a lab: ferry's batches vs one node at a time, PDB floors, canary requests; planning at scale",
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs({
      args,
      options: {
        snapshot: { type: 'string' },
        generate: { type: 'string' },
        subnet: { type: 'string' },
        orders: { type: 'string' },
        'plan-small': { type: 'string' },
        'plan-large': { type: 'string' },
        pin: { type: 'boolean' },
        'no-pin': { type: 'boolean' },
        verbose: { type: 'boolean' },
        ...LAB_CLOCK_OPTIONS,
      },
    });
    const clock = parseLabClock(values, BENCH_CLOCK);
    console.log(
      `lab clock: ${clockWords(clock)} (--boot-seconds, --decommission-seconds, --jitter; 0 and 0: the lab's own speed)`,
    );
    if (values.pin && values['no-pin']) throw new Error('--pin and --no-pin: give one (neither runs both)');
    if (values.snapshot !== undefined && values.generate !== undefined)
      throw new Error('--snapshot and --generate: give one (--generate writes its own snapshot)');
    let generated: string | undefined;
    if (values.generate !== undefined) {
      const n = Number(values.generate);
      generated = await mkdtemp(join(tmpdir(), 'ferry-bench-workers-lab-'));
      const lab = await writeWorkerLab('examples/lab-cluster', join(generated, `lab-${n}`), n);
      console.log(
        `generated lab: 3 control planes, ${n} workers (${Object.entries(lab.pools)
          .map(([p, ns]) => `${p} ${ns.length}`)
          .join(
            ', ',
          )}), ${lab.workloadPods} workload pods, ${lab.pdbRules.length} PDBs, ${lab.localVolumePods.length} pods on node-local volumes`,
      );
    }
    const snapshotPath = generated
      ? join(generated, `lab-${values.generate}`)
      : (values.snapshot ?? 'examples/lab-cluster');
    const base = Number(values.subnet ?? 125);
    const orders = (values.orders?.split(',') ?? [...ORDERS]) as Order[];
    const unknown = orders.filter((o) => !ORDERS.includes(o));
    if (unknown.length)
      throw new Error(`--orders: unknown ${unknown.join(', ')}; known: ${ORDERS.join(', ')}`);
    const log = values.verbose ? (l: string) => console.log(`  ${l}`) : () => {};
    // Both by default: the issue asks for pinned and unpinned figures side by side.
    const support = pinSupport();
    let modes: Mode[] = values.pin ? ['pinned'] : values['no-pin'] ? ['unpinned'] : ['unpinned', 'pinned'];
    if (!support.ok && modes.includes('pinned')) {
      console.log(`pinning: not possible here (${support.why}); running unpinned only`);
      modes = ['unpinned'];
    } else if (modes.includes('pinned'))
      console.log(
        `pinning: lab (etcd members, API servers) on core ${LAB_CORE}, orchestrator and probes on core ${RUN_CORE}`,
      );
    const outcomes: Outcome[] = [];
    for (const mode of modes)
      for (const order of orders) {
        // Subnets: one per (order, mode) from --subnet on, so no lab reuses a just-freed address.
        const subnet = base + ORDERS.indexOf(order) + ORDERS.length * (mode === 'pinned' ? 1 : 0);
        const o = await rollWorkers(order, mode, snapshotPath, subnet, clock, log);
        outcomes.push(o);
        const label = `${order} ${mode}`.padEnd(22);
        const pad = ''.padEnd(22);
        console.log(
          `${label} ${o.completed ? 'completed' : `FAILED (${o.detail})`}: workers in ${o.makespanSeconds.toFixed(1)} s over ${o.batches} batches; at measured timings lower bound ${o.lowerBoundSeconds.toFixed(1)} s (${o.boundBy}); PDB violations ${o.violations}; canary ${o.canaryFailed}/${o.canaryAttempts} requests failed`,
        );
        // An estimate covers every batch: no ratio for a run that stopped part-way.
        const made = o.completed ? o.makespanSeconds : undefined;
        console.log(
          `${pad} plan estimate: ${o.clockEstimateSeconds.toFixed(1)} s at the lab's clock, measured/estimate ${ratio(made, o.clockEstimateSeconds)} (of which ${o.graceSeconds.charged.toFixed(1)} s: drain rounds charged the pods' termination grace, up to ${o.graceSeconds.longest} s, over a drain round); ${o.estimateSeconds.toFixed(1)} s at this run's medians, measured/estimate ${ratio(made, o.estimateSeconds)}`,
        );
        console.log(
          `${pad} estimate priced at (the clock's boot and power-off, the rest medians): ${o.clockTimings}`,
        );
        console.log(`${pad} timings: ${o.timings}`);
        console.log(`${pad} batches: ${describeBatching(o.batching)}`);
        console.log(
          `${pad} makespan/lower bound under the planner's batching rule: ${ratio(made, o.batching.ruleBoundSeconds)}`,
        );
        console.log(`${pad} phase 3 by step kind: ${o.where}`);
        console.log(`${pad} plan outages: ${o.outages}`);
        console.log(`${pad} canary failures while workers were replaced: ${o.canaryFailedWorkers}`);
        if (o.violated.length) console.log(`${pad} below their PDB: ${o.violated.join(', ')}`);
        if (o.unsettled.length)
          console.log(`${pad} lab not settled when the roll began: ${o.unsettled.join('; ')}`);
        console.log(
          `${pad} at production's expected durations the plan says: estimate ${o.planned.estimateSeconds} s, lower bound ${o.planned.lowerBoundSeconds} s`,
        );
      }
    await disposeAllLabs();
    if (generated) await rm(generated, { recursive: true, force: true });

    const small = Number(values['plan-small'] ?? 500);
    const large = Number(values['plan-large'] ?? 2000);
    planScaleOnce(Math.min(200, small)); // warm the JIT
    const [ps, pl] = [planScaleOnce(small), planScaleOnce(large)];
    console.log(
      `plan ${small} workers / ${ps.pods} pods: ${ms(ps.ms)}; ${large} workers / ${pl.pods} pods: ${ms(pl.ms)} (target < 5 s) ${pl.ms < 5000 ? 'ok' : 'MISSED'}`,
    );
    console.log(
      `plan ${large}/${small}: ${(pl.ms / ps.ms).toFixed(2)}× (linear: ${(large / small).toFixed(1)}×)`,
    );

    const sum = (f: (o: Outcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
    // A bound over every batch is no floor for a run that stopped part-way: no ratio then.
    const done = (o: Outcome | undefined) => (o?.completed ? o : undefined);
    const why = (o: Outcome | undefined, name: string) =>
      o === undefined ? ` (${name} not run)` : o.completed ? '' : ` (${name}'s run did not complete)`;
    const figures = (mode: Mode) => {
      const ferry = outcomes.find((o) => o.order === 'ferry' && o.mode === mode);
      const one = outcomes.find((o) => o.order === 'one-at-a-time' && o.mode === mode);
      const est = (o: Outcome | undefined, name: string) =>
        `${name} ${ratio(done(o)?.makespanSeconds, o?.clockEstimateSeconds)} (at medians ${ratio(done(o)?.makespanSeconds, o?.estimateSeconds)})${why(o, name)}`;
      const batches = (o: Outcome | undefined, name: string) =>
        o
          ? `${name} ${o.batching.planned} against ${o.batching.ruleBatches} (${o.batching.ruleBoundBy})`
          : `${name} not run`;
      return {
        bound: `${ratio(done(ferry)?.makespanSeconds, done(ferry)?.lowerBoundSeconds)}${why(ferry, 'ferry')}`,
        rule: `${ratio(done(ferry)?.makespanSeconds, done(ferry)?.batching.ruleBoundSeconds)}${why(ferry, 'ferry')}`,
        one: `${ratio(done(one)?.makespanSeconds, done(ferry)?.makespanSeconds)}${why(ferry, 'ferry')}${why(one, 'one-at-a-time')}`,
        estimate: `${est(ferry, 'ferry')}, ${est(one, 'one-at-a-time')}`,
        batches: `${batches(ferry, 'ferry')}, ${batches(one, 'one-at-a-time')}`,
      };
    };
    // The first figure is the pinned one when there is one (production has ferry elsewhere); the
    // unpinned one follows in brackets.
    const main = modes.includes('pinned') ? 'pinned' : 'unpinned';
    const other = modes.find((m) => m !== main);
    const line = (f: keyof ReturnType<typeof figures>) =>
      `${figures(main)[f]} (${main}${other ? `; ${other}: ${figures(other)[f]}` : ''})`;
    // Production's provision and decommission take minutes, which batching pays once per batch;
    // the lab's clock stands in for them at a scale. The plans' own estimates at those durations:
    const planned = (order: Order) => outcomes.find((o) => o.order === order)?.planned.estimateSeconds;
    console.log(
      `one-at-a-time/ferry at production's expected durations (the plans' estimates, not measured): ${ratio(planned('one-at-a-time'), planned('ferry'))}`,
    );
    console.log(`lab clock: ${clockWords(clock)}`);
    console.log(`makespan/lower bound: ${line('bound')}`);
    console.log(`one-at-a-time/ferry: ${line('one')}`);
    // The plan's estimate at the lab's clock (clockTiming), so that a wrong estimate shows.
    console.log(`measured/plan estimate at the lab's clock: ${line('estimate')}`);
    console.log(`batches, the plan's against the most any term of the bound needs: ${line('batches')}`);
    console.log(`makespan/lower bound under the planner's batching rule: ${line('rule')}`);
    console.log(`PDB violations: ${sum((o) => o.violations)}`);
    console.log(`canary failed requests: ${sum((o) => o.canaryFailed)}`);
  },
};
