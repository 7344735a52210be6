/**
 * The orchestrator: runs a plan's steps in order, one at a time, but for the steps of a worker
 * batch whose kind runs side by side (its cordons, node waits, decommissions and Node deletions;
 * concurrentGroup). For each step:
 *   journal `started` → (resume: is its effect already there?) → the handler's `beforeGate` (a
 *   condition, what a stop gives back) → gate (the step's expected state, observed) →
 *   `gate-passed` → `action-started` → action through a port → `action-done` → verification
 *   (observed until it holds or the step's timeout) → `done`.
 * A mismatch stops the run (FerryError 'gate', exit 3) saying what was expected, what was seen and
 * what to do; the handlers' `onStop` hooks give back what the run changed (a node's cordon, a
 * workload's replica count). A resumed run never repeats an action whose outcome it has not
 * re-observed. The orchestrator knows no step kind: what differs by kind is the handler's
 * (handlers/context.ts).
 */
import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ExpectedState, isEmptyExpectation, type NodeRef } from '../plan/expected-state.js';
import { allSteps, nodeLabel, type Step } from '../plan/model.js';
import type { EtcdView } from '../ports/run.js';
import { errText, gateError, runStop, stepStop } from '../ports/stop.js';
import { Bindings, type NodeBinding, resolveMember, talosMemberIds } from './bindings.js';
import type { RunDeps, RunOptions, RunResult } from './deps.js';
import {
  type Check,
  describeChecks,
  evaluate,
  type GateContext,
  holds,
  onlyQuestionsLeft,
  remediationFor,
} from './gates.js';
import { performByOperator } from './handlers/by-operator.js';
import type { RunView, StopContext } from './handlers/context.js';
import { type ActionResult, HANDLERS, handlerOf, type StepContext } from './handlers/index.js';
import type { StepTransition } from './journal.js';
import { type ObserveDeps, observe } from './observe.js';
import { probeEndpoints } from './probe-steering.js';
import { type InFlight, type InFlightVerdict, inFlightVerdict, reobserved, resumePoint } from './resume.js';
import { holdSignals, silenceFor } from './signals.js';
import { stepTimeoutSeconds } from './step-timeout.js';
import { applyAcceptance, checkName } from './unobserved.js';

export type { RunOptions, RunResult } from './deps.js';

/** A step's kind runs its gate and verification every time, never "already done". */
function observesOnly(step: Step): boolean {
  return HANDLERS[step.kind].mode === 'observe';
}

/**
 * The steps from `i` on that run side by side: consecutive steps of one worker batch whose kind
 * the handler marks `concurrent` (each acts on its own node), or the one step at `i`.
 */
export function concurrentGroup(steps: readonly Step[], i: number): Step[] {
  const first = steps[i]!;
  if (first.batch === undefined || HANDLERS[first.kind].concurrent !== true) return [first];
  const alike = (s?: Step) => s?.kind === first.kind && s.batch === first.batch && s.phase === first.phase;
  let j = i + 1;
  while (alike(steps[j])) j++;
  return steps.slice(i, j);
}

/** What a stop gives back, each hook once, in the handler table's order (cordons before replicas). */
const STOP_HOOKS = [...new Set(Object.values(HANDLERS).flatMap((h) => (h.onStop ? [h.onStop] : [])))];

/** After this step, a node's cordon is not given back: its member or machine is gone. */
function pointOfNoReturn(step: Step): boolean {
  const h = HANDLERS[step.kind];
  return h.mode === 'act' && h.pointOfNoReturn === true;
}

export class Orchestrator {
  readonly #d: RunDeps;
  readonly #o: RunOptions;
  readonly #bindings: Bindings;
  readonly #kubeadmIds: Set<string>;
  readonly #confirmed = new Map<string, Set<string>>();
  readonly #steps: Step[];
  readonly #ctl = new AbortController();
  #finished = new Set<string>();
  #done: RunResult['steps'] = [];

  constructor(deps: RunDeps, options: RunOptions = {}) {
    this.#d = deps;
    this.#o = options;
    this.#steps = allSteps(deps.plan);
    const j = deps.journal;
    this.#bindings = Bindings.from(j.observations({ purpose: 'binding' }).map((o) => o.data as NodeBinding));
    for (const o of j.observations({ purpose: 'note' })) {
      const d = o.data as { confirmed?: string };
      if (o.stepId && d?.confirmed) this.#confirmedFor(o.stepId).add(d.confirmed);
    }
    this.#kubeadmIds = new Set(
      this.#steps.flatMap((s) => (s.target.member?.kind === 'kubeadm' ? [s.target.member.id] : [])),
    );
    deps.signal?.addEventListener('abort', () => this.#ctl.abort(deps.signal?.reason), { once: true });
    // A batch's steps side by side each wait on this signal (a 60-worker batch: 15 at once).
    setMaxListeners(256, this.#ctl.signal);
  }

  #confirmedFor(stepId: string): Set<string> {
    if (!this.#confirmed.has(stepId)) this.#confirmed.set(stepId, new Set());
    return this.#confirmed.get(stepId)!;
  }

  #log(line: string): void {
    this.#d.log(line);
  }

  #timeoutSeconds(step: Step): number {
    return stepTimeoutSeconds(step, this.#o);
  }

  #gateContext(): GateContext {
    return { bindings: this.#bindings, kubeadmIds: this.#kubeadmIds };
  }

  #observeDeps(stepId: string): ObserveDeps {
    return {
      etcd: this.#d.etcd,
      kube: this.#d.kube,
      provisioner: this.#d.provisioner,
      lb: this.#d.lb ?? { kind: 'none', add: async () => {}, remove: async () => {} },
      ...(this.#d.apiservers && { apiservers: this.#d.apiservers }),
      bindings: this.#bindings,
      baseDir: dirname(this.#d.planFile),
      audit: { blockers: this.#d.plan.audit.blockers },
      confirmed: this.#confirmedFor(stepId),
    };
  }

  async #check(expect: ExpectedState, stepId: string): Promise<Check[]> {
    const world = await observe(expect, this.#observeDeps(stepId));
    // A Talos member found by its name gets its id bound, so later looks find it by id.
    if (world.etcd?.ok)
      for (const b of talosMemberIds(this.#steps, world.etcd.value.members, this.#bindings)) this.#bind(b);
    return evaluate(expect, world, this.#gateContext());
  }

  #bind(b: NodeBinding): void {
    if (this.#bindings.merge(b))
      this.#d.journal.observe(null, 'binding', true, this.#bindings.get(b.replaces));
  }

  /** Observes until `expect` holds or `timeoutMs` passes; journals changes of what is seen. */
  async #waitFor(
    step: Step,
    expect: ExpectedState,
    purpose: 'gate' | 'verify',
    timeoutMs: number,
    opts: { stableMs?: number; ask?: boolean } = {},
  ): Promise<Check[]> {
    const deadline = Date.now() + timeoutMs;
    const poll = this.#o.pollMs ?? 1_000;
    let lastSeen = '';
    let lastAt = 0;
    let stableSince: number | undefined;
    for (;;) {
      this.#ctl.signal.throwIfAborted();
      let checks = this.#accept(step, await this.#check(expect, step.id));
      if (opts.ask && onlyQuestionsLeft(checks) && !holds(checks))
        checks = this.#accept(step, await this.#askUnknowns(step, expect, checks));
      const ok = holds(checks);
      const seen = JSON.stringify(describeChecks(checks));
      const last = Date.now() >= deadline;
      // Journal the first look, what changed, at most every 10 s while waiting (a lag count changes
      // every look), and always the outcome.
      if (ok || last || (seen !== lastSeen && Date.now() - lastAt >= 10_000)) {
        this.#d.journal.observe(step.id, purpose, ok, {
          checks: checks.filter((c) => c.status !== 'ok'),
          ok: checks.filter((c) => c.status === 'ok').length,
        });
        lastSeen = seen;
        lastAt = Date.now();
      }
      if (ok) {
        if (!opts.stableMs) return checks;
        stableSince ??= Date.now();
        if (Date.now() - stableSince >= opts.stableMs) return checks;
      } else {
        stableSince = undefined;
      }
      if (last) {
        const lines = describeChecks(checks);
        throw gateError(
          `${purpose === 'gate' ? 'gate before' : 'verification of'} ${step.id} (${step.title}) did not hold within ${Math.round(timeoutMs / 1000)} s:\n  ${lines.join('\n  ')}`,
          remediationFor(checks),
        );
      }
      await sleep(poll, undefined, { signal: this.#ctl.signal });
    }
  }

  readonly #acceptedNoted = new Set<string>();

  /** Lets pass the unobserved checks the operator accepted (--accept-unobserved); journals each once per step. */
  #accept(step: Step, checks: Check[]): Check[] {
    const r = applyAcceptance(checks, this.#o.acceptUnobserved ?? []);
    for (const a of r.accepted) {
      const key = `${step.id} ${checkName(a.check)}`;
      if (this.#acceptedNoted.has(key)) continue;
      this.#acceptedNoted.add(key);
      this.#d.journal.observe(step.id, 'note', null, {
        acceptedUnobserved: a.by.raw,
        check: checkName(a.check),
        expected: a.check.expected,
        seen: a.check.seen,
      });
      this.#log(
        `  passed unobserved (--accept-unobserved ${a.by.raw}): ${a.check.section} ${a.check.subject}: ${a.check.seen}`,
      );
    }
    return r.checks;
  }

  #asking: Promise<unknown> = Promise.resolve();

  /** Steps side by side ask a person one question at a time, never two prompts at once. */
  #oneQuestionAtATime<T>(ask: () => Promise<T>): Promise<T> {
    const next = this.#asking.then(ask, ask);
    this.#asking = next.catch(() => undefined);
    return next;
  }

  /** Asks the operator what ferry cannot observe; a "no" stops the run. */
  async #askUnknowns(step: Step, expect: ExpectedState, checks: Check[]): Promise<Check[]> {
    const questions = [
      ...new Set(checks.filter((c) => c.status === 'unknown' && c.confirm).map((c) => c.confirm!)),
    ];
    const confirmed = this.#confirmedFor(step.id);
    for (const q of questions) {
      const yes = await this.#oneQuestionAtATime(() => this.#d.operator.ask(step.id, q, this.#ctl.signal));
      this.#d.journal.observe(step.id, 'note', yes, yes ? { confirmed: q } : { refused: q });
      if (!yes) {
        throw gateError(
          `${step.id}: the operator answered no to "${q}"`,
          'do what the step asks, then run ferry run --resume',
        );
      }
      confirmed.add(q);
    }
    return questions.length ? this.#check(expect, step.id) : checks;
  }

  // ---- the run ----------------------------------------------------------------------------------

  #lastEndpoints = '';

  /** Journals the etcd client URLs when they change: a resumed run starts from them. */
  #noteEtcdEndpoints(): void {
    const eps = this.#d.etcd.endpoints();
    const key = JSON.stringify(eps);
    if (key === this.#lastEndpoints) return;
    this.#lastEndpoints = key;
    this.#d.journal.observe(null, 'note', null, { etcdEndpoints: eps });
  }

  async run(): Promise<RunResult> {
    const j = this.#d.journal;
    const point = resumePoint(j.transitions(), j.observations(), this.#steps);
    this.#finished = point.finished;
    for (const r of point.rewound) this.#log(`resume: ${r.stepId} runs again: ${r.why}`);
    for (const f of point.inFlight)
      this.#log(
        `resume: ${f.stepId} was in flight (${f.last}${f.actionStarted ? ', its action had started' : ''})`,
      );
    try {
      // The etcd probe writes to the leader from the first step on (see #steerProbe).
      if (this.#d.etcdProbe)
        await this.#d.etcd.observe().then(
          (v) => this.#steerProbe(v),
          () => undefined,
        );
      for (let i = 0; i < this.#steps.length; ) {
        const group = concurrentGroup(this.#steps, i);
        i += group.length;
        const todo = group.filter((s) => !this.#finished.has(s.id));
        if (todo.length === 0) continue;
        const why = this.#d.interrupt?.();
        if (why)
          throw gateError(
            `the run stops before ${todo[0]!.id}: ${why}`,
            'run ferry run --resume once the cause is gone',
          );
        // Side by side (a batch's cordons, decommissions…): each step journals its own
        // transitions; the first to stop stops the run once the others have ended.
        const settled = await Promise.allSettled(
          todo.map((step) =>
            this.#step(
              step,
              point.inFlight.find((f) => f.stepId === step.id),
            ),
          ),
        );
        let stop: { step: Step; err: unknown } | undefined;
        settled.forEach((r, k) => {
          const step = todo[k]!;
          if (r.status === 'rejected') {
            stop ??= { step, err: r.reason };
            return;
          }
          this.#finished.add(step.id);
          this.#done.push({ id: step.id, outcome: r.value });
        });
        this.#noteEtcdEndpoints();
        if (stop) {
          await this.#afterStop(stop.step);
          throw stop.err;
        }
      }
      j.endRun('completed', { steps: this.#done.length });
      return { status: 'completed', steps: this.#done };
    } catch (err) {
      const fe = runStop(err, this.#ctl.signal.aborted);
      j.endRun('stopped', { message: fe.message, remediation: fe.remediation });
      const stoppedAt = this.#steps.find((s) => !this.#finished.has(s.id))?.id;
      return { status: 'stopped', ...(stoppedAt && { stoppedAt }), error: fe, steps: this.#done };
    }
  }

  async #step(step: Step, inFlight: InFlight | undefined): Promise<StepTransition> {
    const j = this.#d.journal;
    const attempt = j.nextAttempt(step.id);
    const t = (state: StepTransition, detail?: unknown) => j.transition(step.id, attempt, state, detail);
    const skip = (reason: string): StepTransition => {
      t('skipped', { reason });
      return 'skipped';
    };
    t('started', { title: step.title, kind: step.kind });
    this.#log(`▶ ${step.id}  ${step.title}`);
    try {
      if (this.#o.phases && !this.#o.phases.includes(step.phase) && !this.#o.alsoKinds?.includes(step.kind))
        return skip(`phase ${step.phase} not selected`);
      if (inFlight?.actionStarted) {
        const v = await this.#resumeInFlight(step);
        if (v.state === 'already-done') {
          t(v.state, { reason: v.reason });
          this.#log(`  ${v.state}: ${v.reason}`);
          return v.state;
        }
        if (v.note) this.#log(`  resume: ${v.note}`);
      }
      if (step.optional && !this.#o.drill) return skip('optional: pass --drill to run it');
      const h = handlerOf(step);
      const before = await h.beforeGate?.(step, this.#stepContext(step));
      if (before) {
        this.#log(`  skipped: ${before.skip}`);
        return skip(before.skip);
      }
      // A non-destructive step whose effect is there, before its gate or once the gate stops (the lab
      // put a joined node behind the load balancer meanwhile, a node cordoned by hand), is not redone.
      let there = await this.#effectThere(step);
      if (!there)
        await this.#gate(step).catch(async (e: unknown) => {
          if (this.#ctl.signal.aborted || !(await this.#effectThere(step))) throw e;
          there = true;
        });
      if (there) {
        t('already-done', { reason: step.idempotencyCheck.description });
        this.#log(`  already done: ${step.idempotencyCheck.description}`);
        return 'already-done';
      }
      t('gate-passed');
      const expected = () => h.expectedAlerts?.(step, this.#stepContext(step)) ?? [];
      const log = (l: string) => this.#log(`  ${l}`);
      const o = { timeoutMs: this.#timeoutSeconds(step) * 1000, log, signal: this.#ctl.signal };
      const unsilence = await silenceFor(this.#d, step.id, expected, o);
      try {
        t('action-started', { performer: step.action.performer, summary: step.action.summary });
        const result = await this.#act(step);
        t('action-done', result ?? {});
        await this.#verify(step);
      } finally {
        await unsilence();
      }
      t('done');
      return 'done';
    } catch (err) {
      const fe = stepStop(step, err, this.#ctl.signal.aborted);
      t(fe.kind === 'gate' ? 'stopped' : 'failed', { message: fe.message, remediation: fe.remediation });
      this.#log(`■ ${step.id} stopped: ${fe.message}`);
      throw fe;
    }
  }

  async #effectThere(step: Step): Promise<boolean> {
    const doneWhen = step.idempotencyCheck.doneWhen;
    if (step.destructive || observesOnly(step) || isEmptyExpectation(doneWhen)) return false;
    const checks = await this.#check(doneWhen, step.id);
    return checks.length > 0 && checks.every((c) => c.status === 'ok');
  }

  /** A stop gives back what the run changed and can give back (cordons, replica counts): each once. */
  async #afterStop(step: Step): Promise<void> {
    const ctx: StopContext = {
      ...this.#runView(),
      stepId: step.id,
      log: (l) => this.#log(`  ${l}`),
      pointOfNoReturn,
    };
    for (const hook of STOP_HOOKS)
      await hook
        .giveBack(ctx)
        .catch((e: unknown) => this.#log(`  could not restore ${hook.what}: ${errText(e)}`));
  }

  /** The step's action may have happened before the last run ended: observe whether it took effect. */
  async #resumeInFlight(step: Step): Promise<InFlightVerdict> {
    const check = step.idempotencyCheck;
    if (isEmptyExpectation(check.doneWhen)) return inFlightVerdict(step, undefined, this.#o);
    const checks = await this.#check(check.doneWhen, step.id);
    this.#d.journal.observe(step.id, 'resume', reobserved(checks), {
      doneWhen: check.description,
      checks: checks.filter((c) => c.status !== 'ok'),
    });
    return inFlightVerdict(step, checks, this.#o);
  }

  // ---- gates ------------------------------------------------------------------------------------

  async #gate(step: Step): Promise<void> {
    const spec = handlerOf(step).gate?.(step, this.#runView()) ?? { expect: step.expect };
    const grace = (this.#o.gateGraceSeconds ?? 30) * 1000;
    await holdSignals(this.#d, step.id, {
      graceMs: grace,
      pollMs: this.#o.pollMs ?? 1000,
      signal: this.#ctl.signal,
    });
    if (isEmptyExpectation(spec.expect)) return;
    const opts = { stableMs: spec.stableMs, ask: true };
    await this.#waitFor(step, spec.expect, 'gate', spec.timeoutMs ?? grace, opts);
  }

  #runView(): RunView {
    return { deps: this.#d, options: this.#o, steps: this.#steps, finished: this.#finished };
  }

  async #verify(step: Step): Promise<void> {
    const expect = step.verify.expect;
    if (isEmptyExpectation(expect)) return;
    // What ferry cannot see is asked of a person (the lab, or --yes, answers for one).
    await this.#waitFor(step, expect, 'verify', this.#timeoutSeconds(step) * 1000, { ask: true });
  }

  // ---- actions ----------------------------------------------------------------------------------

  async #act(step: Step): Promise<ActionResult> {
    const ctx = this.#stepContext(step);
    if (step.action.performer === 'operator') return performByOperator(step, ctx);
    const h = handlerOf(step);
    return h.mode === 'act' ? h.act(step, ctx) : undefined;
  }

  #stepContext(step: Step): StepContext {
    const log = (l: string) => this.#log(`  ${l}`);
    const ctx: StepContext = {
      deps: this.#d,
      options: this.#o,
      bindings: this.#bindings,
      kubeadmIds: this.#kubeadmIds,
      action: {
        stepId: step.id,
        timeoutMs: this.#timeoutSeconds(step) * 1000,
        signal: this.#ctl.signal,
        log,
      },
      log,
      requireName: (ref) => this.#requireName(ref),
      bind: (b) => this.#bind(b),
      operatorAction: () => performByOperator(step, ctx),
      steerProbe: (view, exceptId, firstId) => this.#steerProbe(view, exceptId, firstId),
      resolveMember: (ref, view) => resolveMember(ref, view.members, this.#bindings, this.#kubeadmIds),
    };
    return ctx;
  }

  #requireName(ref: NodeRef): string {
    const n = this.#bindings.nodeName(ref);
    if (!n) {
      throw gateError(
        `the name of ${nodeLabel(ref)} is not known: the provision step did not report it`,
        'run ferry run --resume so the provision step is re-observed',
      );
    }
    return n;
  }

  /** Points the etcd probe (when there is one) and waits until no write is on its way to a member left out. */
  async #steerProbe(view: EtcdView, exceptId?: string, firstId?: string): Promise<void> {
    if (!this.#d.etcdProbe) return;
    const urls = probeEndpoints(view, exceptId, firstId);
    if (urls.length > 0) await this.#d.etcdProbe.setEndpoints(urls);
  }
}

export async function runPlan(deps: RunDeps, options: RunOptions = {}): Promise<RunResult> {
  return new Orchestrator(deps, options).run();
}
