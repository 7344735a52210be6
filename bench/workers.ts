/**
 * bench/workers (docs/benchmarks.md "workers"): the worker roll on a lab, in one run: ferry's plan (computed
 * batches) against one node at a time (kops-style: --max-unavailable 1), each on a fresh lab of the
 * snapshot, with the canary request probe every 10 ms and every workload's Ready pods watched
 * against its PDB; then the planner at 500 and 2,000 synthetic workers (bench/plan-scale's).
 *
 * Figures: ferry's worker makespan (first to last step of phase 3 in the journal), the plan's lower
 * bound, the one-at-a-time makespan, PDB violations (a workload below its PDB's minimum Ready at
 * any sample), failed canary requests. Targets: makespan ≤ 1.1× the lower bound, one-at-a-time ≥ 3×
 * slower than ferry, 0 PDB violations, 0 failed canary requests, planning 2,000 workers < 5 s.
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
import { LAB_CLOCK_OPTIONS, parseLabClock } from '../src/cli/args.js';
import { disposeAllLabs } from '../src/lab/etcd/cluster.js';
import { LabKubeClient } from '../src/lab/nodes/client.js';
import type { LabClock } from '../src/lab/provisioner/clock.js';
import { writeWorkerLab } from '../src/lab/testing-worker-lab.js';
import { repriced } from '../src/plan/batches/estimate.js';
import type { LowerBoundTerm } from '../src/plan/batches/model.js';
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
  /** The plan's estimate at the measured medians. */
  estimateSeconds: number;
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
    const o: Outcome = {
      order,
      mode,
      completed: s.result.status === 'completed',
      detail: s.result.error?.message ?? '',
      makespanSeconds,
      where: whereTimeWent(spans, makespanSeconds),
      lowerBoundSeconds: bound.lowerBoundSeconds,
      boundBy: top ? termWords(top) : 'no term',
      estimateSeconds: repriced(terms, measured.typical).estimateSeconds,
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
          `${label} ${o.completed ? 'completed' : `FAILED (${o.detail})`}: workers in ${o.makespanSeconds.toFixed(1)} s over ${o.batches} batches; at measured timings lower bound ${o.lowerBoundSeconds.toFixed(1)} s (${o.boundBy}), plan estimate ${o.estimateSeconds.toFixed(1)} s; PDB violations ${o.violations}; canary ${o.canaryFailed}/${o.canaryAttempts} requests failed`,
        );
        console.log(`${pad} timings: ${o.timings}`);
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

    const ratio = (a: number | undefined, b: number | undefined) =>
      a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0
        ? `${(a / b).toFixed(2)}×`
        : 'n/a';
    const sum = (f: (o: Outcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
    // A bound over every batch is no floor for a run that stopped part-way: no ratio then.
    const done = (o: Outcome | undefined) => (o?.completed ? o : undefined);
    const why = (o: Outcome | undefined, name: string) =>
      o === undefined ? ` (${name} not run)` : o.completed ? '' : ` (${name}'s run did not complete)`;
    const figures = (mode: Mode) => {
      const ferry = outcomes.find((o) => o.order === 'ferry' && o.mode === mode);
      const one = outcomes.find((o) => o.order === 'one-at-a-time' && o.mode === mode);
      return {
        bound: `${ratio(done(ferry)?.makespanSeconds, done(ferry)?.lowerBoundSeconds)}${why(ferry, 'ferry')}`,
        one: `${ratio(done(one)?.makespanSeconds, done(ferry)?.makespanSeconds)}${why(ferry, 'ferry')}${why(one, 'one-at-a-time')}`,
      };
    };
    // The first figure is the pinned one when there is one (production has ferry elsewhere); the
    // unpinned one follows in brackets.
    const main = modes.includes('pinned') ? 'pinned' : 'unpinned';
    const other = modes.find((m) => m !== main);
    const line = (f: 'bound' | 'one') =>
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
    console.log(`PDB violations: ${sum((o) => o.violations)}`);
    console.log(`canary failed requests: ${sum((o) => o.canaryFailed)}`);
  },
};
