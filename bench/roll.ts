/**
 * bench/roll (docs/benchmarks.md "roll"): rotate the three control planes of examples/lab-cluster twice, each
 * on a fresh lab, while probing etcd writes and the API through the endpoint:
 *   - ferry's order: the plan run by the orchestrator (learner first, LB out, drain, move
 *     leadership off the old member if it leads, remove it through another member, …);
 *   - the naive order: join the Talos member, then remove the old member directly — the leader's
 *     first — with no load-balancer step and no leadership move.
 *   - idle: a third fresh lab with the same probes and no change at all, for as long as ferry's
 *     run took: the noise floor of this machine (a gap no order can go below).
 * Prints the longest etcd write gap and the API error count of each, and the naive/ferry ratio.
 * Targets: ferry ≤ 30 ms and 0 API errors; naive/ferry ≥ 40×.
 *
 *   npm run bench -- roll [--snapshot DIR] [--subnet N] [--repeat N] [--gaps N] [--etcd-interval MS]
 *                         [--orders ferry,naive,idle] [--keep] [--verbose]
 *
 * --repeat N rotates N times in each order and reports the medians (a shared machine is noisy).
 * --gaps N lists the N longest etcd write gaps of each of ferry's runs with the steps running then:
 * where to look when the figure is off. --etcd-interval MS pauses between etcd probe writes
 * (default 0: back to back). --orders runs only some orders (e.g. `idle` to measure the floor).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { requestProbe } from '../src/adapters/probes/http.js';
import { type Gap, longestGaps } from '../src/adapters/probes/window.js';
import { assemble } from '../src/app/assemble.js';
import { LAB_RUN_DEFAULTS, type LabRunSetup, prepareLabRun } from '../src/app/rehearse.js';
import { runSession } from '../src/app/session.js';
import { disposeAllLabs } from '../src/lab/etcd/cluster.js';
import type { Probe, ProbeSample, ProbeSummary } from '../src/ports/run.js';
import { Journal, journalPathFor } from '../src/run/journal.js';
import { TerminalOperator } from '../src/run/operator.js';
import { timeline } from '../src/run/report.js';
import { type Bench, ms } from './lib/bench.js';

const TARGET_GAP_MS = 30;
const TARGET_RATIO = 40;

interface Outcome {
  order: 'ferry' | 'naive' | 'idle';
  completed: boolean;
  detail: string;
  etcd: ProbeSummary | undefined;
  api: ProbeSummary[];
  canary: ProbeSummary | undefined;
  seconds: number;
  /** ferry's order: the longest etcd write gaps and the steps in flight during each. */
  gaps?: { gap: Gap; steps: string[] }[];
}

/** What every order shares: its directory, the log, and the etcd probe's pause between writes. */
interface Ctx {
  dir: string;
  log: (l: string) => void;
  etcdIntervalMs: number;
}

/** The API and etcd probes, and the request probe against the lab's canary Service (every 10 ms). */
function probesFor(setup: LabRunSetup, { dir, log, etcdIntervalMs }: Ctx) {
  const a = assemble({
    connection: { kubeconfig: setup.lab.kubeconfigPath, etcd: setup.lab.etcdClientSettings() },
    provisioner: 'lab',
    lab: setup.control,
    operator: new TerminalOperator({ say: log, confirmDir: join(dir, 'confirm'), interactive: false }),
    probes: { runId: `bench-${Date.now().toString(36)}`, apiIntervalMs: 20, etcdIntervalMs },
    log,
  });
  const canary = setup.lab.info().canary?.url;
  const probes: Probe[] = canary
    ? [...a.probes, requestProbe({ url: `${canary}/`, name: 'canary-request', intervalMs: 10 })]
    : a.probes;
  return { ...a, probes };
}

function summarize(
  order: Outcome['order'],
  probes: { summary: ProbeSummary }[],
  completed: boolean,
  detail: string,
  t0: number,
): Outcome {
  return {
    order,
    completed,
    detail,
    etcd: probes.find((p) => p.summary.name === 'etcd-write')?.summary,
    api: probes.filter((p) => p.summary.name.startsWith('api-')).map((p) => p.summary),
    canary: probes.find((p) => p.summary.name === 'canary-request')?.summary,
    seconds: (Date.now() - t0) / 1000,
  };
}

async function ferryOrder(setup: LabRunSetup, ctx: Ctx, gaps: number): Promise<Outcome> {
  const t0 = Date.now();
  const { log } = ctx;
  const a = probesFor(setup, ctx);
  try {
    const s = await runSession({
      planFile: setup.planFile,
      plan: setup.plan,
      ports: a.ports,
      probes: a.probes,
      log,
      liveSeconds: 3600,
      run: { ...LAB_RUN_DEFAULTS, phases: [2, 4] },
    });
    const o = summarize(
      'ferry',
      s.probes,
      s.result.status === 'completed',
      s.result.error?.message ?? '',
      t0,
    );
    const etcd = s.probes.find((p) => p.summary.name === 'etcd-write');
    const samples = a.probes.find((p) => p.name === 'etcd-write')?.samples() ?? [];
    if (gaps > 0 && etcd) o.gaps = gapsWithSteps(setup, Date.parse(etcd.startedAt), samples, gaps);
    return o;
  } finally {
    a.close();
  }
}

/** The longest gaps, each with the steps whose span overlaps it (from the run's journal). */
function gapsWithSteps(setup: LabRunSetup, startedAt: number, samples: ProbeSample[], n: number) {
  const journal = Journal.open(journalPathFor(setup.planFile), { readonly: true });
  try {
    const spans = timeline({ plan: setup.plan, transitions: journal.transitions() });
    return longestGaps(samples, n).map((gap) => {
      const from = startedAt + gap.fromMs;
      const to = from + gap.gapMs;
      const steps = spans
        .filter((sp) => sp.start <= to && sp.end >= from)
        .map((sp) => `${sp.kind} (${sp.title})`);
      return { gap, steps };
    });
  } finally {
    journal.close();
  }
}

async function naiveOrder(setup: LabRunSetup, ctx: Ctx): Promise<Outcome> {
  const t0 = Date.now();
  const { lab } = setup;
  const { log } = ctx;
  const a = probesFor(setup, ctx);
  const probes: Probe[] = a.probes;
  const etcdProbe = a.ports.etcdProbe;
  for (const p of probes) p.start();
  let completed = true;
  let detail = '';
  try {
    const old = setup.plan.controlPlanes.map((c) => ({
      node: c.node,
      talos: c.replacement.name ?? `${c.node}-talos`,
    }));
    const left = new Set(old.map((o) => o.node));
    for (const o of old) {
      // Join the Talos member (learner, start, promote: the lab provisioner waits for all of it).
      await lab.provisioner.provisionControlPlane({ name: o.talos, address: '' });
      await new Promise((r) => setTimeout(r, 1_000));
      // Remove an old member directly, the leader first; keep the probe on members that stay.
      const leader = await lab.etcd.leader();
      const victim = leader && left.has(leader) ? leader : [...left][0]!;
      left.delete(victim);
      const stays = lab.etcd
        .members()
        .filter((m) => m.state === 'running' && !m.isLearner && m.name !== victim);
      await etcdProbe?.setEndpoints(stays.map((m) => m.clientUrl));
      log(`naive: removing ${victim}${victim === leader ? ' (the leader)' : ''} directly`);
      await lab.etcd.removeMember(victim);
      await new Promise((r) => setTimeout(r, 2_500));
      await lab.provisioner.decommission(victim);
    }
  } catch (err) {
    completed = false;
    detail = (err as Error).message;
  }
  const summaries = await Promise.all(probes.map(async (p) => ({ summary: await p.stop() })));
  a.close();
  return summarize('naive', summaries, completed, detail, t0);
}

/** The probes alone on an untouched lab for `seconds`: what the machine costs the writes. */
async function idle(setup: LabRunSetup, ctx: Ctx, seconds: number): Promise<Outcome> {
  const t0 = Date.now();
  const a = probesFor(setup, ctx);
  for (const p of a.probes) p.start();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const summaries = await Promise.all(a.probes.map(async (p) => ({ summary: await p.stop() })));
  a.close();
  return summarize('idle', summaries, true, '', t0);
}

function apiErrors(o: Outcome): number {
  return o.api.reduce((n, s) => n + s.failures, 0);
}

function line(o: Outcome): string {
  const e = o.etcd;
  return `${o.order.padEnd(6)} ${o.completed ? 'completed' : `FAILED (${o.detail})`} in ${o.seconds.toFixed(0)} s: longest etcd write gap ${e ? ms(e.longestGapMs) : '?'} (${e?.failures ?? '?'} failed puts of ${e?.attempts ?? '?'}, ${e?.extra?.['lost'] ?? '?'} acknowledged lost); API errors through the endpoint ${apiErrors(o)} (${o.api.map((a) => `${a.name} ${a.failures}/${a.attempts}, longest outage ${ms(a.longestFailureWindowMs)}`).join('; ')}); canary requests failed ${o.canary ? `${o.canary.failures}/${o.canary.attempts}, p99 ${o.canary.extra?.['p99LatencyMs']} ms` : '?'}`;
}

export const bench: Bench = {
  name: 'roll',
  summary:
    "rotate three control planes on fresh labs: ferry's order vs the naive order (etcd write gap, API errors)",
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs({
      args,
      options: {
        snapshot: { type: 'string' },
        subnet: { type: 'string' },
        repeat: { type: 'string' },
        gaps: { type: 'string' },
        'etcd-interval': { type: 'string' },
        orders: { type: 'string' },
        keep: { type: 'boolean' },
        verbose: { type: 'boolean' },
      },
    });
    const snapshotPath = values.snapshot ?? 'examples/lab-cluster';
    const base = Number(values.subnet ?? 57);
    const repeat = Math.max(1, Number(values.repeat ?? 1));
    const gaps = Math.max(0, Number(values.gaps ?? 0));
    const etcdIntervalMs = Math.max(0, Number(values['etcd-interval'] ?? 0));
    const ORDERS = ['ferry', 'naive', 'idle'] as const;
    const orders = (values.orders?.split(',') ?? ORDERS) as (typeof ORDERS)[number][];
    const unknown = orders.filter((o) => !ORDERS.includes(o));
    if (unknown.length)
      throw new Error(`--orders: unknown ${unknown.join(', ')}; known: ${ORDERS.join(', ')}`);
    const log = values.verbose ? (l: string) => console.log(`  ${l}`) : () => {};
    const outcomes: Outcome[] = [];
    for (let r = 0; r < repeat; r++) {
      for (const order of orders) {
        const i = ORDERS.indexOf(order);
        const dir = await mkdtemp(join(tmpdir(), `ferry-bench-roll-${order}-`));
        const setup = await prepareLabRun({ snapshotPath, dir, subnet: base + i, log });
        try {
          const ferrySeconds = outcomes.findLast((x) => x.order === 'ferry')?.seconds ?? 15;
          const ctx = { dir, log, etcdIntervalMs };
          const o =
            order === 'ferry'
              ? await ferryOrder(setup, ctx, gaps)
              : order === 'naive'
                ? await naiveOrder(setup, ctx)
                : await idle(setup, ctx, ferrySeconds);
          outcomes.push(o);
          console.log(line(o));
          for (const p of [...o.api, ...(o.etcd ? [o.etcd] : [])])
            for (const e of p.failures > 0 ? p.errors : [])
              console.log(`    ${p.name}: ${e.count}× ${e.message}`);
          for (const g of o.gaps ?? []) {
            const failed = g.gap.failures ? `, ${g.gap.failures} failed: ${g.gap.errors.join('; ')}` : '';
            console.log(
              `    gap ${ms(g.gap.gapMs)} at +${ms(g.gap.fromMs)}${failed} during ${g.steps.join(', ') || 'no step (between steps)'}`,
            );
          }
        } finally {
          await setup.lab.dispose();
          if (!values.keep) await rm(dir, { recursive: true, force: true });
        }
      }
    }
    await disposeAllLabs();
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const of = (order: Outcome['order']) => outcomes.filter((o) => o.order === order);
    const fg = median(of('ferry').map((o) => o.etcd?.longestGapMs ?? Number.NaN));
    const ng = median(of('naive').map((o) => o.etcd?.longestGapMs ?? Number.NaN));
    const fe = median(of('ferry').map(apiErrors));
    const ne = median(of('naive').map(apiErrors));
    const ig = median(of('idle').map((o) => o.etcd?.longestGapMs ?? Number.NaN));
    const ratio = ng / Math.max(fg, 1);
    const label = repeat > 1 ? `median of ${repeat}` : 'one run each';
    if (orders.length < ORDERS.length) {
      for (const o of orders)
        console.log(
          `longest etcd write gap, ${o} (${label}): ${ms(o === 'ferry' ? fg : o === 'naive' ? ng : ig)}`,
        );
      return;
    }
    console.log(
      `longest etcd write gap (${label}): ferry ${ms(fg)}, naive ${ms(ng)}; ratio naive/ferry ${ratio.toFixed(1)}×`,
    );
    console.log(
      `noise floor (${label}): an untouched lab's longest gap ${ms(ig)}; ferry/idle ${(fg / Math.max(ig, 1)).toFixed(2)}×`,
    );
    console.log(`API errors through the endpoint (${label}): ferry ${fe}, naive ${ne}`);
    const canaryFailed = median(of('ferry').map((o) => o.canary?.failures ?? Number.NaN));
    const verdicts = [
      `ferry gap ${ms(fg)} ${fg <= TARGET_GAP_MS ? '≤' : '>'} ${TARGET_GAP_MS} ms`,
      `ferry API errors ${fe} ${fe === 0 ? '=' : '>'} 0`,
      `ratio ${ratio.toFixed(1)}× ${ratio >= TARGET_RATIO ? '≥' : '<'} ${TARGET_RATIO}×`,
    ];
    console.log(`targets: ${verdicts.join('; ')}`);
    console.log(`canary failed requests: ${canaryFailed}`);
  },
};
