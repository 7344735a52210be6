/**
 * Crash harness for `ferry run` against a lab: the lab lives in this process (its control socket
 * served here), each run is a child process (`node --import tsx src/cli/main.ts run … --provisioner
 * lab`) that can be SIGKILLed at a chosen moment and resumed with `--resume`.
 *
 * - `CrashLab`: lab up, plan written, control socket served; starts run children, kills them when a
 *   condition holds, reads the journal read-only (src/run/kill-resume.real.test.ts uses this much).
 * - `crashRun`: the crash sweep's unit. SIGKILLs the run in the middle of a step of each kind asked
 *   for (after its `action-started` is journalled, before its `done`), resumes until the plan
 *   completes (as an operator would when a resume stops at a step ferry cannot judge), and checks
 *   the invariants (`checkInvariants`). scripts/crash-sweep.ts runs it kind by kind;
 *   src/run/crash-sweep.real.test.ts runs three kinds.
 *
 * To hit a window of a few milliseconds (a cordon's verification), the run is single-stepped near
 * the target step: SIGSTOP, read the journal, SIGCONT for ~2 ms, again; the SIGKILL lands while it
 * is stopped, so the moment recorded is exactly the journal's last word on the step.
 *
 * Test-only: nothing under src/ imports this file, and tsconfig.build.json ships src/ only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { readyzProbe, writeReadProbe } from '../adapters/probes/api.js';
import { EtcdProbeProcess } from '../adapters/probes/etcd-process.js';
import { downsample } from '../adapters/probes/window.js';
import { labNodeName, serveLabControl } from '../adapters/provisioners/lab-control.js';
import {
  DEFAULT_REHEARSAL_PHASES,
  LAB_RUN_DEFAULTS,
  prepareLabRun,
  REHEARSAL_PHASES,
  rehearsalChecks,
} from '../app/rehearse.js';
import type { LabCluster, LabClusterOptions } from '../lab/cluster.js';
import type { LabFault } from '../lab/faults.js';
import { apiPath } from '../lab/nodes/world.js';
import type { MemberRef, NodeRef } from '../plan/expected-state.js';
import { allSteps, type PhaseId, type Plan, type Step, type StepKind } from '../plan/model.js';
import type { Probe, ProbeRecord } from '../ports/run.js';
import { scaled } from '../util/testing-slowness.js';
import { type Check, observable } from './gates.js';
import {
  FINISHED,
  HALTED,
  Journal,
  journalPathFor,
  type StepTransition,
  type TransitionRow,
} from './journal.js';
import type { RunResult } from './orchestrator.js';
import type { ReportCheck } from './report.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'src', 'cli', 'main.ts');

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** One `ferry run` child. */
export interface RunChild {
  child: ChildProcess;
  /** Everything it wrote, stdout and stderr interleaved. */
  out: string[];
  exit: Promise<Exit>;
  /** What it was started with beyond the base flags. */
  flags: RunFlags;
}

export interface RunFlags {
  resume?: boolean;
  markDone?: string[];
  retry?: string[];
}

export interface CrashLabOptions {
  dir: string;
  /** Third octet of the lab's loopback addresses; one subnet per lab alive at a time. */
  subnet: number;
  snapshotPath?: string;
  phases?: PhaseId[];
  lab?: Partial<LabClusterOptions>;
  faults?: LabFault[];
  /** Flags added to every `ferry run` (after the base ones). */
  runFlags?: string[];
  /** Each child's output is also appended here. */
  logFile?: string;
  log?: (line: string) => void;
}

/** The flags the kill-resume test runs with: the lab's fast gates, load balancer and polling. */
export const FAST_RUN_FLAGS = [
  '--gate-stable',
  '1',
  '--lb-settle',
  '1',
  '--poll-ms',
  '200',
  '--probe-interval-ms',
  '50',
];

/**
 * ... and what `ferry rehearse` adds (LAB_RUN_DEFAULTS): a bounded gate grace and step timeouts, and
 * the example's bare pod accepted as lost (`evictBarePods`: default/netshoot on worker-2, else a
 * worker drain stops; no control plane runs a bare pod, so the control planes' runs are as before).
 */
export function rehearsalRunFlags(): string[] {
  const flags = ['--gate-grace', String(LAB_RUN_DEFAULTS.gateGraceSeconds ?? 20), '--evict-bare-pods'];
  for (const [kind, s] of Object.entries(LAB_RUN_DEFAULTS.timeouts ?? {}))
    flags.push('--step-timeout', `${kind}=${s}`);
  return flags;
}

const live = new Set<CrashLab>();
process.once('exit', () => {
  for (const cl of live) cl.killRuns();
});

/**
 * Disposes every CrashLab of this process and SIGKILLs their runs; a disposed CrashLab starts no
 * run. For a test's afterAll: a timed-out test's body goes on in the background.
 */
export async function disposeAllCrashLabs(): Promise<void> {
  await Promise.allSettled([...live].map((cl) => cl.dispose()));
}

/** A lab with its plan written and its control socket served; `ferry run` children drive it. */
export class CrashLab {
  readonly lab: LabCluster;
  readonly plan: Plan;
  readonly planFile: string;
  readonly socket: string;
  readonly runs: RunChild[] = [];
  /** The etcd flags every run gets: the members at the start, as an operator's command line would keep them. */
  readonly etcd: ReturnType<LabCluster['etcdClientSettings']>;
  readonly #served: { close(): Promise<void> };
  readonly #o: CrashLabOptions;
  readonly #logFile: WriteStream | undefined;
  #phases: PhaseId[];
  #disposed = false;

  private constructor(
    o: CrashLabOptions,
    parts: {
      lab: LabCluster;
      plan: Plan;
      planFile: string;
      socket: string;
      served: { close(): Promise<void> };
    },
  ) {
    this.#o = o;
    this.lab = parts.lab;
    this.plan = parts.plan;
    this.planFile = parts.planFile;
    this.socket = parts.socket;
    this.#served = parts.served;
    this.#phases = o.phases ?? REHEARSAL_PHASES;
    this.etcd = parts.lab.etcdClientSettings();
    this.#logFile = o.logFile ? createWriteStream(o.logFile, { flags: 'a' }) : undefined;
    live.add(this);
  }

  static async start(o: CrashLabOptions): Promise<CrashLab> {
    await mkdir(o.dir, { recursive: true });
    const setup = await prepareLabRun({
      snapshotPath: o.snapshotPath ?? 'examples/lab-cluster',
      dir: o.dir,
      subnet: o.subnet,
      log: o.log ?? (() => {}),
      ...(o.lab && { lab: o.lab }),
      ...(o.faults && { faults: o.faults }),
    });
    const socket = join(o.dir, 'lab.sock');
    try {
      const served = await serveLabControl(setup.control, socket);
      return new CrashLab(o, { lab: setup.lab, plan: setup.plan, planFile: setup.planFile, socket, served });
    } catch (err) {
      await setup.lab.dispose();
      throw err;
    }
  }

  /** The phases every run of this lab gets (`--phases`). */
  get phases(): PhaseId[] {
    return this.#phases;
  }

  /**
   * Runs these phases instead: the plan is the same whatever the phases, so a lab started to read
   * it can serve a kind that needs others (the sweep's first lab). Only before the first run: a
   * resume must run the phases its run did.
   */
  usePhases(phases: PhaseId[]): void {
    if (phases.join(',') === this.#phases.join(',')) return;
    if (this.runs.length) throw new Error(`--phases ${this.#phases.join(',')} already ran here`);
    this.#phases = [...phases];
  }

  /** `ferry run PLAN --provisioner lab …` as the kill-resume test has always run it. */
  args(flags: RunFlags = {}): string[] {
    const etcd = this.etcd;
    return [
      '--import',
      'tsx',
      CLI,
      'run',
      this.planFile,
      '--provisioner',
      'lab',
      '--lab-socket',
      this.socket,
      '--kubeconfig',
      this.lab.kubeconfigPath,
      '--etcd-endpoints',
      etcd.endpoints.join(','),
      '--etcd-cacert',
      etcd.caFile,
      '--etcd-cert',
      etcd.certFile,
      '--etcd-key',
      etcd.keyFile,
      '--phases',
      this.phases.join(','),
      ...FAST_RUN_FLAGS,
      ...(this.#o.runFlags ?? []),
      '--yes',
      ...(flags.resume ? ['--resume'] : []),
      ...(flags.markDone ?? []).flatMap((s) => ['--mark-done', s]),
      ...(flags.retry ?? []).flatMap((s) => ['--retry', s]),
    ];
  }

  start(flags: RunFlags = {}): RunChild {
    if (this.#disposed) throw new Error('this CrashLab was disposed: no more runs');
    const child = spawn(process.execPath, this.args(flags), { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: string[] = [];
    const n = this.runs.length + 1;
    this.#logFile?.write(
      `\n===== run ${n}${flags.resume ? ' --resume' : ''}${flags.markDone?.length ? ` --mark-done ${flags.markDone.join(',')}` : ''}${flags.retry?.length ? ` --retry ${flags.retry.join(',')}` : ''} (pid ${child.pid}) =====\n`,
    );
    const take = (c: Buffer) => {
      out.push(c.toString());
      this.#logFile?.write(c);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    const exit = once(child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    const run = { child, out, exit, flags };
    this.runs.push(run);
    return run;
  }

  /** Reads the journal (read-only); undefined while it does not exist yet. */
  journal<T>(fn: (j: Journal) => T): T | undefined {
    const file = journalPathFor(this.planFile);
    if (!existsSync(file)) return undefined;
    const j = Journal.open(file, { readonly: true });
    try {
      return fn(j);
    } finally {
      j.close();
    }
  }

  /** A condition on the journal for `killWhen`; false while there is no journal. */
  journalSays(pred: (j: Journal) => boolean): () => Promise<boolean> {
    return async () => this.journal(pred) ?? false;
  }

  /** Polls `cond` while the run lives; SIGKILLs it as soon as `cond` holds. */
  async killWhen(run: RunChild, what: string, cond: () => Promise<boolean>): Promise<void> {
    let exited = false;
    void run.exit.then(() => (exited = true));
    for (let i = 0; i < 3000 && !exited; i++) {
      if (await cond().catch(() => false)) {
        run.child.kill('SIGKILL');
        const e = await run.exit;
        if (e.signal !== 'SIGKILL')
          throw new Error(`${what}: the run ended by itself (${describeExit(e)}):\n${tail(run)}`);
        return;
      }
      await sleep(50);
    }
    throw new Error(`${what} never happened; the run said:\n${tail(run)}`);
  }

  /** Waits for a run to end; SIGKILLs it after `timeoutMs`. */
  async wait(run: RunChild, timeoutMs: number): Promise<Exit & { timedOut: boolean }> {
    const t = sleep(timeoutMs, 'timeout' as const, { ref: false });
    const r = await Promise.race([run.exit, t]);
    if (r !== 'timeout') return { ...r, timedOut: false };
    run.child.kill('SIGKILL');
    return { ...(await run.exit), timedOut: true };
  }

  /** SIGKILLs the runs still alive. */
  killRuns(): void {
    for (const r of this.runs)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    live.delete(this);
    this.killRuns();
    await Promise.allSettled(this.runs.map((r) => r.exit));
    await this.#served.close().catch(() => undefined);
    await this.lab.dispose();
    await new Promise<void>((r) => (this.#logFile ? this.#logFile.end(() => r()) : r()));
  }
}

export function tail(run: RunChild, chars = 3000): string {
  return run.out.join('').slice(-chars);
}

function describeExit(e: Exit): string {
  return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
}

// ---- the crash sweep ----------------------------------------------------------------------------

/** Journal states between `action-started` and `done`: the middle of a step. */
export type Moment = 'started' | 'gate-passed' | 'action-started' | 'action-done';

/**
 * Where a kind is killed. `accept`: the step's last journal state when the kill may land. `effect`:
 * while at `action-started`, wait until the lab shows the action took effect (the run has not
 * learned it yet: the resume must re-observe, not repeat); at `action-done` (verifying) the kill
 * lands at once. Kinds without an action of their own (gates, waits) are killed during their
 * verification.
 */
export interface KillPoint {
  accept: Moment[];
  effect?: (lab: CrashLab, step: Step) => Promise<boolean>;
  /** A workload or fault the kill needs (a drain with something to evict, slowly). */
  prepare?: (lab: CrashLab, step: Step) => Promise<() => Promise<void>>;
  /** What an operator checks when a resume says ferry cannot tell whether the step took effect. */
  operatorCheck?: (lab: CrashLab, step: Step) => Promise<boolean | undefined>;
}

const ACTION: Moment[] = ['action-started', 'action-done'];
const VERIFYING: Moment[] = ['action-done'];

/** The lab name of a node a step names (Talos replacements: the plan's name, or the lab's choice). */
export function labName(ref: NodeRef | MemberRef): string {
  if (ref.kind === 'kubeadm') return ref.name;
  return ref.name ?? labNodeName({ replaces: ref.replaces, name: null } as Parameters<typeof labNodeName>[0]);
}

async function nodeObject(
  lab: CrashLab,
  name: string,
): Promise<{ spec?: { unschedulable?: boolean } } | null> {
  try {
    return await lab.lab.client.get(apiPath('v1', 'nodes', undefined, name));
  } catch (err) {
    if ((err as { status?: number }).status === 404) return null;
    throw err;
  }
}

async function memberNames(lab: CrashLab): Promise<string[]> {
  return (await lab.lab.etcd.memberList()).map((m) => m.name || `unstarted:${m.ID}`);
}

function backendListed(lab: CrashLab, node: string): boolean | undefined {
  const ip = lab.lab.provisioner.node(node)?.labAddress ?? lab.lab.addresses.byName(node)?.lab;
  if (!ip) return undefined;
  return lab.lab.lb.backends().some((b) => b.address === `${ip}:6443`);
}

/**
 * Whether the lab started every machine of a provision-request step: true all, false none,
 * undefined some (neither --mark-done nor --retry is the operator's whole answer then).
 */
function batchStarted(lab: CrashLab, step: Step): boolean | undefined {
  if (step.kind !== 'provision-request') return undefined;
  const known = step.params.machines.map((m) => lab.lab.provisioner.node(labName(m.node)) !== undefined);
  if (known.every(Boolean)) return true;
  return known.some(Boolean) ? undefined : false;
}

function nodeOf(step: Step): NodeRef | undefined {
  return (step.params as { node?: NodeRef }).node ?? step.target.node;
}

/** One pod that only `node` may run, with a grace period: a drain of `node` has something to evict. */
export function pinnedDeployment(node: string, name = 'pinned') {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          tolerations: [
            { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
          ],
          terminationGracePeriodSeconds: 30,
          containers: [
            { name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m' } } },
          ],
        },
      },
    },
  };
}

const evictedCount = (lab: CrashLab) =>
  lab.lab.evictionLog.all().filter((e) => e.outcome === 'evicted').length;

export const KILL_POINTS: Partial<Record<StepKind, KillPoint>> = {
  'preflight-audit': { accept: VERIFYING },
  gate: { accept: VERIFYING },
  'verify-membership': { accept: VERIFYING },
  // The lab's machine adds its learner as it is provisioned; a real one boots for minutes first.
  // slow-boot gives the step that wait to be killed in.
  'wait-member-joined': {
    accept: VERIFYING,
    prepare: async (lab, step) => {
      const slow = await lab.lab.inject({ kind: 'slow-boot', node: labName(nodeOf(step)!), seconds: 4 });
      return () => slow.clear();
    },
  },
  'wait-member-voter': { accept: VERIFYING },
  'wait-node-ready': { accept: VERIFYING },
  'etcd-snapshot': {
    accept: ACTION,
    operatorCheck: async (lab, step) =>
      step.kind === 'etcd-snapshot'
        ? existsSync(resolve(dirname(lab.planFile), step.params.file))
        : undefined,
  },
  provision: {
    accept: ACTION,
    effect: async (lab, step) => lab.lab.provisioner.node(labName(nodeOf(step)!)) !== undefined,
    operatorCheck: async (lab, step) => lab.lab.provisioner.node(labName(nodeOf(step)!)) !== undefined,
  },
  // Every machine of the batch started (the lab knows each): asking again would start a second.
  'provision-request': {
    accept: ACTION,
    effect: async (lab, step) => batchStarted(lab, step) === true,
    operatorCheck: async (lab, step) => batchStarted(lab, step),
  },
  // The lab's request binds the machine and the lab reports a booting machine provisioned, so the
  // step finds its effect there before its gate (already-done, a few ms after `started`): that is
  // the only middle it has with the lab. A slow boot does not change it (wait-node-ready waits).
  'provision-detect': { accept: ['started'] },
  'lb-add': {
    accept: ACTION,
    effect: async (lab, step) => backendListed(lab, labName(nodeOf(step)!)) === true,
    operatorCheck: async (lab, step) => backendListed(lab, labName(nodeOf(step)!)),
  },
  'lb-remove': {
    accept: ACTION,
    effect: async (lab, step) => backendListed(lab, labName(nodeOf(step)!)) === false,
    operatorCheck: async (lab, step) => {
      const listed = backendListed(lab, labName(nodeOf(step)!));
      return listed === undefined ? undefined : !listed;
    },
  },
  cordon: {
    accept: ACTION,
    effect: async (lab, step) =>
      (await nodeObject(lab, labName(nodeOf(step)!)))?.spec?.unschedulable === true,
    operatorCheck: async (lab, step) =>
      (await nodeObject(lab, labName(nodeOf(step)!)))?.spec?.unschedulable === true,
  },
  drain: {
    accept: ACTION,
    // The first eviction went through and the pod takes 4 s to stop: killed mid-drain.
    effect: async (lab, step) => {
      const before = drainBaseline.get(step.id) ?? 0;
      return evictedCount(lab) > before;
    },
    prepare: async (lab, step) => {
      const node = labName(nodeOf(step)!);
      await lab.lab.client.create(apiPath('apps/v1', 'deployments', 'default'), pinnedDeployment(node));
      const settled = await lab.lab.waitSettled(30_000);
      if (!settled.settled) throw new Error(`the pinned pod on ${node} did not settle: ${settled.pending}`);
      const slow = await lab.lab.inject({ kind: 'slow-drain', node, graceSeconds: 4 });
      drainBaseline.set(step.id, evictedCount(lab));
      return () => slow.clear();
    },
  },
  'stop-apiserver': {
    accept: ACTION,
    effect: async (lab, step) => lab.lab.apiServer(labName(nodeOf(step)!)) === undefined,
    operatorCheck: async (lab, step) => lab.lab.apiServer(labName(nodeOf(step)!)) === undefined,
  },
  'etcd-move-leader': {
    accept: ACTION,
    effect: async (lab, step) => {
      if (step.kind !== 'etcd-move-leader') return false;
      const leader = await lab.lab.etcd.leader();
      return leader !== undefined && leader !== labName(step.params.from);
    },
    operatorCheck: async (lab, step) => {
      if (step.kind !== 'etcd-move-leader') return undefined;
      const leader = await lab.lab.etcd.leader();
      return leader === undefined ? undefined : leader !== labName(step.params.from);
    },
  },
  'etcd-remove-member': {
    accept: ACTION,
    effect: async (lab, step) =>
      step.kind === 'etcd-remove-member' && !(await memberNames(lab)).includes(labName(step.params.member)),
    operatorCheck: async (lab, step) =>
      step.kind === 'etcd-remove-member'
        ? !(await memberNames(lab)).includes(labName(step.params.member))
        : undefined,
  },
  decommission: {
    accept: ACTION,
    effect: async (lab, step) => lab.lab.provisioner.node(labName(nodeOf(step)!))?.state === 'decommissioned',
    operatorCheck: async (lab, step) => {
      const rec = lab.lab.provisioner.node(labName(nodeOf(step)!));
      return rec === undefined ? undefined : rec.state === 'decommissioned';
    },
  },
  'delete-node': {
    accept: ACTION,
    effect: async (lab, step) => (await nodeObject(lab, labName(nodeOf(step)!))) === null,
    operatorCheck: async (lab, step) => (await nodeObject(lab, labName(nodeOf(step)!))) === null,
  },
};

const drainBaseline = new Map<string, number>();

/** The step kinds a run of these phases acts on, in plan order of their first step. */
export function kindsOf(plan: Plan, phases: PhaseId[]): StepKind[] {
  const kinds: StepKind[] = [];
  for (const s of allSteps(plan))
    if (phases.includes(s.phase) && !kinds.includes(s.kind) && !s.optional) kinds.push(s.kind);
  return kinds;
}

/** Every phase `ferry rehearse` runs: the sweep's kinds are those of these phases. */
export const SWEEP_ALL_PHASES: PhaseId[] = DEFAULT_REHEARSAL_PHASES;

/**
 * The phases a run killing `kinds` uses: the control planes' (0, 2, 4, REHEARSAL_PHASES) when each
 * kind has a step there, so a kind's run and its result stay what they were before the workers
 * joined the sweep; else every phase of the rehearsal (0, 2, 3, 4): the workers' phase needs the
 * control planes of phase 2 replaced first.
 */
export function sweepPhases(plan: Plan, kinds: StepKind[]): PhaseId[] {
  const controlPlanes = kindsOf(plan, REHEARSAL_PHASES);
  return kinds.every((k) => controlPlanes.includes(k)) ? REHEARSAL_PHASES : SWEEP_ALL_PHASES;
}

export interface KillOutcome {
  kind: StepKind;
  stepId: string;
  moment: Moment;
  /** The lab showed the action's effect when the run was killed. */
  effectSeen: boolean;
  /** Instances of the kind passed by before one was hit (skipped, already done, too fast). */
  passed: string[];
}

const isEnd = (s: string) => FINISHED.has(s as StepTransition) || HALTED.has(s as StepTransition);

/**
 * SIGKILLs `run` in the middle of the first of `instances` it reaches (a step's last state in this
 * run in `point.accept`, and the effect seen when one is asked for at `action-started`). Returns
 * the exit instead when the run ended by itself first.
 */
export async function killInStep(
  lab: CrashLab,
  run: RunChild,
  kind: StepKind,
  instances: Step[],
  point: KillPoint,
  opts: { sliceMs?: number; leadSteps?: number; log?: (l: string) => void } = {},
): Promise<{ killed: KillOutcome } | { exited: Exit; passed: string[] }> {
  const pid = run.child.pid!;
  const position = new Map(allSteps(lab.plan).map((s, i) => [s.id, i]));
  const slice = opts.sliceMs ?? 2;
  const lead = opts.leadSteps ?? 2;
  let exited = false;
  void run.exit.then(() => (exited = true));
  let stopped = false;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
      return true;
    } catch {
      return false;
    }
  };
  const stop = () => {
    if (!stopped && signal('SIGSTOP')) stopped = true;
  };
  const resumeChild = () => {
    if (stopped) {
      signal('SIGCONT');
      stopped = false;
    }
  };
  const passed: string[] = [];
  let idx = 0;
  let stepping = false;
  let reader: Journal | undefined;
  let runId: string | undefined;
  try {
    for (;;) {
      try {
        if (exited) return { exited: await run.exit, passed };
        if (stepping) stop();
        reader ??= openReader(lab.planFile);
        runId ??= reader?.runs().find((r) => r.pid === pid)?.runId;
        if (reader && runId) {
          let target = instances[idx];
          while (target) {
            const rows = reader.transitions(target.id).filter((r) => r.runId === runId);
            const state = rows.at(-1)?.state;
            if (state !== undefined && isEnd(state)) {
              passed.push(`${target.id} (${state})`);
              target = instances[++idx];
              continue;
            }
            if (state && (point.accept as string[]).includes(state)) {
              const effectAsked = point.effect !== undefined && state === 'action-started';
              const effectSeen = point.effect ? await point.effect(lab, target).catch(() => false) : false;
              if (!effectAsked || effectSeen) {
                if (!stopped) stop();
                // The last word, read while it cannot write another.
                const last = reader
                  .transitions(target.id)
                  .filter((r) => r.runId === runId)
                  .at(-1)!;
                if (!(point.accept as string[]).includes(last.state)) continue;
                signal('SIGKILL');
                stopped = false;
                await run.exit;
                return {
                  killed: {
                    kind,
                    stepId: target.id,
                    moment: last.state as Moment,
                    effectSeen,
                    passed,
                  },
                };
              }
            }
            break;
          }
          if (!target) {
            // Every instance went by: let the run go on to its end.
            resumeChild();
            return { exited: await run.exit, passed };
          }
          if (!stepping) {
            const latest = lastRow(reader, runId);
            const at = latest ? (position.get(latest.stepId) ?? 0) : 0;
            if (at >= (position.get(target.id) ?? 0) - lead) {
              stepping = true;
              opts.log?.(`single-stepping the run (pid ${pid}) towards ${target.id}`);
              continue;
            }
          }
        } else if (!stepping && instances[0] && (position.get(instances[0].id) ?? 0) < lead) {
          stepping = true;
          continue;
        }
        resumeChild();
        await sleep(stepping ? slice : 10);
      } catch (err) {
        // The run holds the journal's lock (it may be stopped holding it): let it go on, read later.
        if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
        resumeChild();
        await sleep(slice);
      }
    }
  } finally {
    if (!exited) resumeChild();
    reader?.close();
  }
}

/** The journal read-only, once the run has created it (its schema included); else undefined. */
function openReader(planFile: string): Journal | undefined {
  if (!existsSync(journalPathFor(planFile))) return undefined;
  try {
    // Never wait for the run's lock: the run may be SIGSTOPped holding it (while it creates the
    // journal), and a blocking wait here would stall the lab's API servers in this process.
    return Journal.open(journalPathFor(planFile), { readonly: true, busyTimeoutMs: 0 });
  } catch {
    return undefined;
  }
}

function lastRow(j: Journal, runId: string): TransitionRow | undefined {
  const all = j.transitions();
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.runId === runId) return all[i];
  return undefined;
}

/** An etcd write probe and the API probes through the endpoint, run by the harness across every run and kill. */
class HarnessProbes {
  readonly #probes: Probe[];
  readonly #etcd: EtcdProbeProcess;
  readonly #startedAt = new Date().toISOString();
  #steer: NodeJS.Timeout | undefined;
  #steering = false;

  constructor(lab: CrashLab) {
    const runId = `crash-${randomUUID().slice(0, 8)}`;
    // An answer later than 2 s is an API error; on a machine measured k× slow, later than 2k s.
    const timeoutMs = scaled(2_000);
    const requester = createRequester(loadKubeconfig(lab.lab.kubeconfigPath), {
      timeoutMs,
      keepAlive: false,
    });
    const s = lab.lab.etcdClientSettings();
    this.#etcd = new EtcdProbeProcess({
      endpoints: s.endpoints,
      caFile: s.caFile,
      certFile: s.certFile,
      keyFile: s.keyFile,
      runId,
    });
    this.#probes = [
      readyzProbe({ requester, timeoutMs }),
      writeReadProbe({ requester, runId, timeoutMs }),
      this.#etcd,
    ];
    const etcd = lab.lab.etcd;
    // Writes follow the membership (the runs steer their own probes; nobody steers this one): the
    // running voters, from the lab's own records (no etcd round trip), whenever they change.
    let last = '';
    this.#steer = setInterval(() => {
      if (this.#steering) return;
      const urls = etcd.endpoints();
      const key = urls.join(',');
      if (key === last || urls.length === 0) return;
      this.#steering = true;
      this.#etcd
        .setEndpoints(urls)
        .then(() => {
          last = key;
        })
        .catch(() => undefined)
        .finally(() => {
          this.#steering = false;
        });
    }, 500);
    this.#steer.unref();
  }

  start(): void {
    for (const p of this.#probes) p.start();
  }

  async stop(): Promise<ProbeRecord[]> {
    clearInterval(this.#steer);
    const out: ProbeRecord[] = [];
    for (const p of this.#probes) {
      const summary = await p.stop();
      out.push({ summary, samples: downsample(p.samples(), 600), startedAt: this.#startedAt });
    }
    this.#etcd.close();
    return out;
  }
}

export interface Invariant {
  name: string;
  ok: boolean;
  detail: string;
}

export interface TargetResult {
  kind: StepKind;
  /** The step killed, and the moment: its last journal state when the SIGKILL landed. */
  stepId?: string;
  moment?: Moment;
  effectSeen?: boolean;
  /** Runs started with --resume after this kill, until the next kill or the end. */
  resumes: number;
  /** What the operator was asked to decide (--mark-done / --retry), after checking the lab. */
  operator: string[];
  /** Stops of resumed runs that were not questions for the operator. */
  stops: string[];
  passed: string[];
  error?: string;
}

export interface CrashResult {
  kinds: StepKind[];
  targets: TargetResult[];
  completed: boolean;
  invariants: Invariant[];
  ok: boolean;
  durationMs: number;
  runs: number;
  dir: string;
  /** The harness probes' failures, each with the step the run was in then (the first 10 per probe). */
  probeFailures: string[];
}

export interface CrashRunOptions {
  dir: string;
  subnet: number;
  /** Kinds to kill, in the order the plan reaches them (each at its first instance after the last kill). */
  kinds: StepKind[];
  /** A lab already started (the sweep reuses the one it read the plan from); no run yet. */
  crashLab?: CrashLab;
  /** Default: `sweepPhases` of the plan and `kinds`. */
  phases?: PhaseId[];
  /** Runs that end by themselves (stops not meant for the operator) before the case gives up. */
  maxUnexpectedStops?: number;
  /** Per child run. */
  runTimeoutMs?: number;
  log?: (line: string) => void;
  /** Keep the work directory (journal, plan, run logs). */
  keep?: boolean;
}

/** The lab options the sweep uses: ferry's lb-add step puts a joined control plane in rotation, not the lab. */
export const SWEEP_LAB: Partial<LabClusterOptions> = { addJoinedToLoadBalancer: false };

export async function startSweepLab(o: {
  dir: string;
  subnet: number;
  phases?: PhaseId[];
  log?: (l: string) => void;
}): Promise<CrashLab> {
  return CrashLab.start({
    dir: o.dir,
    subnet: o.subnet,
    lab: SWEEP_LAB,
    runFlags: rehearsalRunFlags(),
    logFile: join(o.dir, 'runs.log'),
    ...(o.phases && { phases: o.phases }),
    ...(o.log && { log: o.log }),
  });
}

const UNTELLABLE = /cannot tell whether it took effect|has no way to observe whether it took effect/;

/**
 * One lab: SIGKILL the run in the middle of a step of each of `kinds` in turn, resume until the
 * plan completes, check the invariants.
 */
export async function crashRun(o: CrashRunOptions): Promise<CrashResult> {
  const t0 = Date.now();
  const log = o.log ?? (() => {});
  const cl =
    o.crashLab ??
    (await startSweepLab({ dir: o.dir, subnet: o.subnet, log, ...(o.phases && { phases: o.phases }) }));
  const targets: TargetResult[] = [];
  const retriedPids = new Map<number, string[]>();
  const runTimeout = o.runTimeoutMs ?? 300_000;
  let completed = false;
  let probes: ProbeRecord[] = [];
  let invariants: Invariant[] = [];
  let probeFailures: string[] = [];
  const probe = new HarnessProbes(cl);
  try {
    cl.usePhases(o.phases ?? sweepPhases(cl.plan, o.kinds));
    probe.start();
    const steps = allSteps(cl.plan).filter((s) => cl.phases.includes(s.phase));
    let pending: RunFlags = {};
    let started = false;
    let unexpected = 0;
    let after = -1;
    let current: TargetResult | undefined;
    /** Starts the next run (resume after the first) and notes operator flags; returns it. */
    const next = (): RunChild => {
      const flags: RunFlags = started ? { resume: true, ...pending } : {};
      pending = {};
      started = true;
      const run = cl.start(flags);
      if (flags.resume && current) current.resumes++;
      if (flags.retry?.length) retriedPids.set(run.child.pid!, flags.retry);
      return run;
    };
    /** After a run ended by itself: true when it completed; else sets `pending` as an operator would. */
    const afterExit = async (run: RunChild, e: Exit & { timedOut?: boolean }): Promise<boolean> => {
      const runId = cl.journal((j) => j.runs().find((r) => r.pid === run.child.pid)?.runId);
      if (e.code === 0) return true;
      const end = cl.journal((j) => j.runEnds().at(-1));
      const msg = (end?.detail as { message?: string } | null)?.message ?? tail(run, 600);
      const stoppedStep = cl.journal(
        (j) =>
          j
            .transitions()
            .filter((t) => t.runId === runId && t.state === 'stopped')
            .at(-1)?.stepId,
      );
      const step = steps.find((s) => s.id === stoppedStep);
      if (e.code === 3 && step && UNTELLABLE.test(msg)) {
        const check = KILL_POINTS[step.kind]?.operatorCheck;
        const happened = check ? await check(cl, step).catch(() => undefined) : undefined;
        if (happened === undefined)
          throw new Error(
            `${step.id}: ferry cannot tell whether it took effect, and neither can the sweep: ${msg}`,
          );
        pending = happened ? { markDone: [step.id] } : { retry: [step.id] };
        current?.operator.push(`${happened ? '--mark-done' : '--retry'} ${step.id}`);
        log(`operator: ${step.id} ${happened ? 'happened: --mark-done' : 'did not happen: --retry'}`);
        return false;
      }
      unexpected++;
      const why = `${e.timedOut ? 'timed out' : describeExit(e)}${stoppedStep ? ` at ${stoppedStep}` : ''}: ${msg.split('\n')[0]}`;
      current?.stops.push(why);
      log(`run stopped: ${why}`);
      if (unexpected > (o.maxUnexpectedStops ?? 2)) throw new Error(`the run keeps stopping: ${why}`);
      return false;
    };

    for (const kind of o.kinds) {
      const point = KILL_POINTS[kind] ?? { accept: ACTION };
      current = { kind, resumes: 0, operator: [], stops: [], passed: [] };
      targets.push(current);
      const instances = steps.filter((s) => s.kind === kind && steps.indexOf(s) > after);
      if (instances.length === 0) {
        current.error = `no ${kind} step after the previous kill`;
        continue;
      }
      const undo = point.prepare ? await point.prepare(cl, instances[0]!) : undefined;
      try {
        for (;;) {
          // Instances finished by earlier runs are out of reach.
          const open = instances.filter((s) => {
            const last = cl.journal((j) => j.transitions(s.id).at(-1)?.state);
            return last === undefined || !FINISHED.has(last as StepTransition);
          });
          const run = next();
          const r = await Promise.race([
            killInStep(cl, run, kind, open, point, { log }),
            sleep(runTimeout, 'timeout' as const, { ref: false }),
          ]);
          if (r === 'timeout') {
            run.child.kill('SIGKILL');
            await run.exit;
            throw new Error(`${kind}: no kill within ${runTimeout / 1000} s`);
          }
          if ('killed' in r) {
            Object.assign(current, {
              stepId: r.killed.stepId,
              moment: r.killed.moment,
              effectSeen: r.killed.effectSeen,
            });
            current.passed.push(...r.killed.passed);
            after = steps.findIndex((s) => s.id === r.killed.stepId);
            log(
              `killed in ${r.killed.stepId} at ${r.killed.moment}${r.killed.effectSeen ? ' (its effect in the lab)' : ''}`,
            );
            break;
          }
          current.passed.push(...r.passed);
          if (await afterExit(run, r.exited)) {
            current.error = `the run completed before a ${kind} step could be killed (passed: ${current.passed.join(', ') || 'none'})`;
            completed = true;
            break;
          }
        }
      } finally {
        await undo?.();
      }
      if (completed) break;
    }
    // Resume to the end.
    while (!completed) {
      const run = next();
      const e = await cl.wait(run, runTimeout);
      completed = await afterExit(run, e);
    }
  } catch (err) {
    const msg = (err as Error).message;
    const t = targets.at(-1);
    if (t) t.error ??= msg;
    else targets.push({ kind: o.kinds[0]!, resumes: 0, operator: [], stops: [], passed: [], error: msg });
    log(`error: ${msg}`);
  } finally {
    probes = await probe.stop().catch(() => []);
    probeFailures = failuresByStep(cl, probes);
    for (const f of probeFailures) log(`probe failure: ${f}`);
    try {
      invariants = await checkInvariants(cl, probes, retriedPids);
    } catch (err) {
      invariants = [{ name: 'invariants checked', ok: false, detail: (err as Error).message }];
    }
    if (!o.crashLab) await cl.dispose();
    if (!o.keep && !o.crashLab) await rm(o.dir, { recursive: true, force: true });
  }
  const ok = completed && invariants.every((i) => i.ok) && targets.every((t) => !t.error);
  return {
    kinds: o.kinds,
    targets,
    completed,
    invariants,
    ok,
    durationMs: Date.now() - t0,
    runs: cl.runs.length,
    dir: o.dir,
    probeFailures,
  };
}

/**
 * Each failed probe sample with the journal's last transition before it: an API error under a
 * kill or a resume reads differently from one during an etcd member's swap.
 */
function failuresByStep(cl: CrashLab, probes: ProbeRecord[]): string[] {
  const rows = cl.journal((j) => j.transitions().filter((r) => r.stepId !== '')) ?? [];
  const out: string[] = [];
  for (const p of probes) {
    const start = Date.parse(p.startedAt);
    for (const f of p.samples.filter((x) => !x.ok).slice(0, 10)) {
      const at = new Date(start + f.t).toISOString();
      const last = rows.filter((r) => r.at <= at).at(-1);
      out.push(
        `${p.summary.name} at ${at} (${last ? `${last.stepId} ${last.state}` : 'before the first step'}): ${(f.error ?? '').split('\n')[0]}`,
      );
    }
  }
  return out;
}

/** A read of the lab retried for up to 30 s: a busy machine's lab drops connections now and then. */
async function settle<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message}`);
      await sleep(500);
    }
  }
}

/**
 * A check on a replacement the journal has no name for yet (gates.ts): ferry counts it as not
 * provisioned, but nothing was looked at. A kill between the provisioner starting the machine and
 * the run journalling its name leaves exactly that: it proves no absence.
 */
const nameUnknown = (c: Check) => c.seen.startsWith('its name is not known yet');

/** Each replacement a provision-request asked for has exactly one running Talos machine in the lab. */
function oneMachineEach(cl: CrashLab, step: Step): boolean {
  if (step.kind !== 'provision-request') return false;
  const talos = cl.lab.provisioner
    .nodes()
    .filter((n) => n.flavor === 'talos' && n.state !== 'decommissioned');
  return step.params.machines.every((m) => {
    const name = labName(m.node);
    return talos.filter((n) => n.name === name).length === 1;
  });
}

/** The invariants of a crashed-and-resumed run, read from the journal and the lab. */
export async function checkInvariants(
  cl: CrashLab,
  probes: ProbeRecord[],
  /** Runs (by pid) the operator started with --retry of these steps. */
  retriedPids: ReadonlyMap<number, string[]> = new Map(),
): Promise<Invariant[]> {
  const plan = cl.plan;
  const steps = allSteps(plan).filter((s) => cl.phases.includes(s.phase));
  const out: Invariant[] = [];
  const j = Journal.open(journalPathFor(cl.planFile), { readonly: true });
  let result: RunResult;
  try {
    // (1) No destructive action twice: a destructive step (or a provision, a batch's request: asking
    // twice for a machine starts a second one) starts its action again
    // only in a run whose resume re-observed, from observable checks, that the earlier attempt had
    // not taken effect, or that the operator told to --retry it; and it finishes once.
    const repeats: string[] = [];
    const counts: string[] = [];
    const resumeObs = j.observations({ purpose: 'resume' });
    const runRows = j.runs();
    const pidOf = new Map(runRows.map((r) => [r.runId, r.pid]));
    const order = new Map(runRows.map((r, i) => [r.runId, i]));
    const runsBetween = (a: TransitionRow, b: TransitionRow) =>
      runRows.slice(order.get(a.runId)! + 1, order.get(b.runId)! + 1).map((r) => r.runId);
    for (const s of steps) {
      if (!s.destructive && s.kind !== 'provision' && s.kind !== 'provision-request') continue;
      const rows = j.transitions(s.id);
      const starts = rows.filter((r) => r.state === 'action-started');
      if (starts.length > 1) counts.push(`${s.id} ×${starts.length}`);
      for (const [k, again] of starts.entries()) {
        if (k === 0) continue;
        const before = starts[k - 1]!;
        // Between the two starts (times: the two tables have separate sequences), a resume saw
        // the effect absent in a way that proves it, or the operator checked and said --retry.
        const seen = resumeObs.some((o) => {
          if (o.stepId !== s.id || o.at < before.at || o.at > again.at || o.ok !== false) return false;
          const checks = ((o.data as { checks?: Check[] } | null)?.checks ?? []) as Check[];
          return observable(checks) && checks.some((c) => c.status === 'mismatch' && !nameUnknown(c));
        });
        const guessed =
          !seen &&
          resumeObs.some((o) => o.stepId === s.id && o.at >= before.at && o.at <= again.at && o.ok === false);
        const retried = runsBetween(before, again).some(
          (runId) => retriedPids.get(pidOf.get(runId) ?? -1)?.includes(s.id) ?? false,
        );
        // A batch's request asked again where its rule is redo (capi, manual, the lab: asking
        // twice starts no second machine, by the provisioner's contract): what must hold is the
        // effect, one machine per replacement, which the lab shows.
        const reasked =
          s.kind === 'provision-request' && s.idempotencyCheck.ifNotDone === 'redo' && oneMachineEach(cl, s);
        if (!seen && !retried && !reasked)
          repeats.push(
            `${s.id}: action started again (journal seq ${again.seq}, run ${again.runId.slice(0, 8)}) though no resume re-observed that the start at seq ${before.seq} had not taken effect${guessed ? ' (its resume saw only a machine whose name the journal had not recorded)' : ''}`,
          );
      }
      const finishes = rows.filter((r) => r.state === 'done' || r.state === 'already-done');
      if (finishes.length > 1) repeats.push(`${s.id}: finished ${finishes.length} times`);
    }
    out.push({
      name: 'no destructive action twice',
      ok: repeats.length === 0,
      detail: repeats.length
        ? repeats.join('; ')
        : counts.length
          ? `re-observed redo: ${counts.join(', ')}`
          : 'every destructive action and provision started at most once',
    });

    // (2) No node left cordoned that the plan did not cordon.
    const cordoned = new Set(
      steps.filter((s) => s.kind === 'cordon' || s.kind === 'drain').map((s) => labName(nodeOf(s)!)),
    );
    for (const o of j.observations({ purpose: 'cordon-before' })) {
      const d = o.data as { node: string; unschedulable: boolean };
      if (d.unschedulable) cordoned.add(d.node);
    }
    const nodes = await settle('list the nodes', () =>
      cl.lab.client.list<{ metadata: { name: string }; spec?: { unschedulable?: boolean } }>(
        apiPath('v1', 'nodes', undefined),
      ),
    );
    const stray = nodes
      .filter((n) => n.spec?.unschedulable && !cordoned.has(n.metadata.name))
      .map((n) => n.metadata.name);
    out.push({
      name: 'no node left cordoned that the plan did not cordon',
      ok: stray.length === 0,
      detail: stray.length
        ? `cordoned: ${stray.join(', ')}`
        : `${nodes.filter((n) => n.spec?.unschedulable).length} of ${nodes.length} nodes unschedulable, all by the plan`,
    });

    const ends = j.runEnds();
    const last = j.lastStates();
    const completed = ends.at(-1)?.state === 'completed';
    result = {
      status: completed ? 'completed' : 'stopped',
      steps: steps.flatMap((s) => {
        const st = last.get(s.id)?.state;
        return st && FINISHED.has(st as StepTransition) ? [{ id: s.id, outcome: st as StepTransition }] : [];
      }),
      ...(!completed && {
        stoppedAt: steps.find((s) => !FINISHED.has(last.get(s.id)?.state as StepTransition))?.id ?? '?',
      }),
    };
    out.push({
      name: 'one completed run end',
      ok: completed && ends.filter((e) => e.state === 'completed').length === 1,
      detail: `${j.runs().length} runs; ends: ${ends.map((e) => e.state).join(', ') || 'none (killed)'}`,
    });
  } finally {
    j.close();
  }

  // (3) The rehearsal's checks over the harness's probes (they ran across every kill), and the
  // membership the plan ends with.
  const checks: ReportCheck[] = await rehearsalChecks(cl.lab, plan, probes, result);
  for (const c of checks) {
    // A gap is a measure of the swap, not of resuming: reported, not judged (nobody steers the
    // harness's etcd probe away from a member before ferry removes it).
    if (c.name === 'longest etcd write gap')
      out.push({ name: c.name, ok: true, detail: `${c.detail} (not judged)` });
    else out.push({ name: c.name, ok: c.ok, detail: c.detail });
  }
  if (result.status === 'completed') {
    const names = (
      await settle('list the etcd members', () => memberNames(cl)).catch(() => [] as string[])
    ).sort();
    const want = plan.controlPlanes.map((c) => labName(c.replacement)).sort();
    out.push({
      name: 'etcd membership as planned',
      ok: JSON.stringify(names) === JSON.stringify(want),
      detail: `members: ${names.join(', ')}${JSON.stringify(names) === JSON.stringify(want) ? '' : `; expected ${want.join(', ')}`}`,
    });
  }
  return out;
}

// ---- reporting ----------------------------------------------------------------------------------

export function momentLabel(t: TargetResult): string {
  if (!t.moment) return '—';
  const m =
    t.moment === 'action-done'
      ? 'action-done (verifying)'
      : t.moment === 'action-started'
        ? 'action-started'
        : t.moment;
  return `${m}${t.effectSeen ? ', effect applied' : ''}`;
}

export interface SweepRow {
  kind: StepKind;
  stepId: string;
  moment: string;
  resumes: number;
  operator: string;
  invariants: string;
  ok: boolean;
  durationS: number;
}

export function sweepRows(results: CrashResult[]): SweepRow[] {
  const rows: SweepRow[] = [];
  for (const r of results) {
    const failed = r.invariants.filter((i) => !i.ok);
    for (const t of r.targets) {
      const problems = [...(t.error ? [t.error] : []), ...failed.map((i) => `${i.name}: ${i.detail}`)];
      rows.push({
        kind: t.kind,
        stepId: t.stepId ?? '—',
        moment: momentLabel(t),
        resumes: t.resumes,
        operator: t.operator.length ? `yes: ${t.operator.join('; ')}` : 'no',
        invariants: problems.length
          ? `FAILED: ${problems.join(' | ')}`
          : `ok${t.stops.length ? ` (after ${t.stops.length} extra stop(s): ${t.stops.join(' | ')})` : ''}`,
        ok: problems.length === 0,
        durationS: Math.round(r.durationMs / 100) / 10,
      });
    }
  }
  return rows;
}

export function renderTable(rows: SweepRow[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [
    '| kind | step killed | moment killed | resumes | operator needed | invariants | duration |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${r.stepId} | ${esc(r.moment)} | ${r.resumes} | ${esc(r.operator)} | ${esc(r.invariants)} | ${r.durationS} s |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
