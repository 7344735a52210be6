/**
 * The etcd write probe run in a child process (etcd-child.ts), driven over IPC. Same Probe and
 * EtcdProbeControl as the in-process EtcdWriteProbe; only the measurement is isolated from the
 * run's own pauses.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EtcdProbeControl, Probe, ProbeSample, ProbeSummary } from '../../ports/run.js';
import type { EtcdChildConfig, FromChild, ToChild } from './etcd-child.js';
import { summarize } from './window.js';

const DESCRIPTION =
  'sequential etcd puts (300 ms deadline each) from a separate process to the leader; gap = time between two acknowledged writes';

/** A write in flight has 300 ms; connecting to new members gets the rest. */
const STEER_WAIT_MS = 2_000;

function childModule(): { path: string; execArgv: string[] } {
  const js = fileURLToPath(new URL('./etcd-child.js', import.meta.url));
  if (existsSync(js)) return { path: js, execArgv: [] };
  // Running from the TypeScript sources (tests, `npx tsx`): load them through tsx.
  return { path: fileURLToPath(new URL('./etcd-child.ts', import.meta.url)), execArgv: ['--import', 'tsx'] };
}

export class EtcdProbeProcess implements Probe, EtcdProbeControl {
  readonly name = 'etcd-write';
  readonly #config: EtcdChildConfig;
  #child: ChildProcess | undefined;
  #last: ProbeSummary;
  #samples: ProbeSample[] = [];
  #done: Promise<ProbeSummary> | undefined;
  #error: string | undefined;
  #nextId = 0;
  readonly #steered = new Map<number, () => void>();

  constructor(config: EtcdChildConfig) {
    this.#config = config;
    this.#last = summarize(this.name, DESCRIPTION, []);
  }

  start(): void {
    if (this.#child) return;
    const m = childModule();
    const child = fork(m.path, [], { execArgv: m.execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.#child = child;
    child.on('message', (raw) => {
      const msg = raw as FromChild;
      if (msg.type === 'summary') this.#last = { ...msg.summary, description: DESCRIPTION };
      else if (msg.type === 'done') {
        this.#last = { ...msg.summary, description: DESCRIPTION };
        this.#samples = msg.samples;
      } else if (msg.type === 'steered') {
        this.#steered.get(msg.id)?.();
        this.#steered.delete(msg.id);
      } else if (msg.type === 'error') this.#error = msg.message;
    });
    this.#send({ type: 'start', config: this.#config });
  }

  #send(m: ToChild): void {
    if (this.#child?.connected) this.#child.send(m);
  }

  /** Resolves when the child writes to `endpoints`, or after STEER_WAIT_MS: the run never waits on its probe for long. */
  setEndpoints(endpoints: string[]): Promise<void> {
    if (endpoints.length === 0 || !this.#child?.connected) return Promise.resolve();
    const id = ++this.#nextId;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#steered.delete(id);
        resolve();
      }, STEER_WAIT_MS);
      timer.unref();
      this.#steered.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      this.#send({ type: 'endpoints', endpoints, id });
    });
  }

  stop(): Promise<ProbeSummary> {
    this.#done ??= (async () => {
      const child = this.#child;
      if (!child) return this.#last;
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      this.#send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(timer);
      if (this.#error) this.#last = { ...this.#last, extra: { ...this.#last.extra, error: this.#error } };
      return this.#last;
    })();
    return this.#done;
  }

  summary(): ProbeSummary {
    return this.#last;
  }

  samples(): ProbeSample[] {
    return [...this.#samples];
  }

  close(): void {
    if (this.#child && this.#child.exitCode === null) this.#child.kill('SIGTERM');
  }
}
