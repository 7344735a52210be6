/**
 * Crash harness for `ferry run` against a lab: the lab lives in this process (its control socket
 * served here), each run is a child process (`node --import tsx src/cli/main.ts run … --provisioner
 * lab`) that can be SIGKILLed at a chosen moment and resumed with `--resume`.
 *
 * `CrashLab`: lab up, plan written, control socket served; starts run children, kills them when a
 * condition holds, reads the journal read-only (src/run/kill-resume.test.ts).
 *
 * Test-only: nothing under src/ imports this file, and tsconfig.build.json ships src/ only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serveLabControl } from '../../src/adapters/provisioners/lab-control.js';
import type { LabCluster, LabClusterOptions } from '../../src/lab/cluster.js';
import type { LabFault } from '../../src/lab/faults.js';
import type { PhaseId, Plan } from '../../src/plan/model.js';
import { Journal, journalPathFor } from '../../src/run/journal.js';
import { LAB_RUN_DEFAULTS, prepareLabRun, REHEARSAL_PHASES } from '../../src/run/rehearse.js';

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

/** ... and what `ferry rehearse` adds (LAB_RUN_DEFAULTS): a bounded gate grace and step timeouts. */
export function rehearsalRunFlags(): string[] {
  const flags = ['--gate-grace', String(LAB_RUN_DEFAULTS.gateGraceSeconds ?? 20)];
  for (const [kind, s] of Object.entries(LAB_RUN_DEFAULTS.timeouts ?? {}))
    flags.push('--step-timeout', `${kind}=${s}`);
  return flags;
}

/** A lab with its plan written and its control socket served; `ferry run` children drive it. */
export class CrashLab {
  readonly lab: LabCluster;
  readonly plan: Plan;
  readonly planFile: string;
  readonly socket: string;
  readonly phases: PhaseId[];
  readonly runs: RunChild[] = [];
  /** The etcd flags every run gets: the members at the start, as an operator's command line would keep them. */
  readonly etcd: ReturnType<LabCluster['etcdClientSettings']>;
  readonly #served: { close(): Promise<void> };
  readonly #o: CrashLabOptions;
  readonly #logFile: WriteStream | undefined;

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
    this.phases = o.phases ?? REHEARSAL_PHASES;
    this.etcd = parts.lab.etcdClientSettings();
    this.#logFile = o.logFile ? createWriteStream(o.logFile, { flags: 'a' }) : undefined;
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

  async dispose(): Promise<void> {
    for (const r of this.runs)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
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
