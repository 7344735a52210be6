/**
 * The orchestrator: runs a plan's steps in order, one at a time. For each step:
 *   journal `started` → (resume: is its effect already there?) → condition → gate (the step's
 *   expected state, observed) → `gate-passed` → `action-started` → action through a port →
 *   `action-done` → verification (observed until it holds or the step's timeout) → `done`.
 * A mismatch stops the run (FerryError 'gate', exit 3) saying what was expected, what was seen and
 * what to do; the cordon state recorded before the run touched a node is restored. A resumed run
 * never repeats an action whose outcome it has not re-observed.
 */
import { dirname, isAbsolute, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../errors.js';
import {
  type ExpectedState,
  isEmptyExpectation,
  type MemberRef,
  type NodeRef,
} from '../plan/expected-state.js';
import {
  allSteps,
  nodeLabel,
  type PhaseId,
  type Plan,
  type Step,
  type StepKind,
  type StepOf,
} from '../plan/model.js';
import { Bindings, type NodeBinding, resolveMember } from './bindings.js';
import {
  type Check,
  describeChecks,
  evaluate,
  type GateContext,
  holds,
  mismatches,
  observable,
  remediationFor,
} from './gates.js';
import type { Journal, StepTransition } from './journal.js';
import { type ObserveDeps, observe } from './observe.js';
import type {
  ApiserverStatusPort,
  EtcdAdminPort,
  EtcdProbeControl,
  EtcdView,
  KubeAdminPort,
  LoadBalancerPort,
  OperatorPort,
  ProvisionerPort,
} from './ports.js';
import { type CordonRestored, type InFlight, resumePoint } from './resume.js';

export interface RunOptions {
  /** Continue a stopped or crashed run of the same plan. */
  resume?: boolean;
  /** Per step kind, seconds: replaces the plan's timeout (tests, rehearsals, impatient operators). */
  timeouts?: Partial<Record<StepKind, number>>;
  drainTimeoutSeconds?: number;
  /** Replaces the plan's gate stability interval (two observations this far apart). */
  gateStableSeconds?: number;
  /** Replaces the plan's wait after a load-balancer change. */
  lbSettleSeconds?: number;
  /** How long a step's precondition may take to hold before the run stops. Default 30 s. */
  gateGraceSeconds?: number;
  /** Pause between observations while waiting. Default 1 s. */
  pollMs?: number;
  /** Run only these phases (the others are journalled as skipped). */
  phases?: PhaseId[];
  /** Run the optional drill. */
  drill?: boolean;
  /** Steps the operator checked by hand and declares done (a step whose outcome ferry cannot tell). */
  markDone?: string[];
  /** Steps the operator checked by hand and wants run again. */
  retry?: string[];
}

export interface RunDeps {
  plan: Plan;
  planFile: string;
  journal: Journal;
  etcd: EtcdAdminPort;
  kube: KubeAdminPort;
  provisioner: ProvisionerPort;
  /** Without one, load-balancer steps are operator steps. */
  lb: LoadBalancerPort | undefined;
  operator: OperatorPort;
  apiservers?: ApiserverStatusPort;
  /** The etcd write probe, steered away from a member before it is removed. */
  etcdProbe?: EtcdProbeControl;
  /** Writes an etcd snapshot file (etcd-snapshot steps); without it they are operator steps. */
  etcdSnapshot?: (file: string, signal: AbortSignal) => Promise<void>;
  log: (line: string) => void;
  signal?: AbortSignal;
  /** Checked before each step: a reason to stop (the cluster Lease was lost), or undefined. */
  interrupt?: () => string | undefined;
}

export interface RunResult {
  status: 'completed' | 'stopped';
  stoppedAt?: string;
  error?: FerryError;
  /** Steps finished by this run (done, already-done, skipped), in order. */
  steps: { id: string; outcome: StepTransition }[];
}

const OPERATOR_KINDS: ReadonlySet<StepKind> = new Set([
  'kubeadm-prep',
  'manual',
  'apply-kit-file',
  'stop-apiserver',
  'delete-bootstrap-token',
  'relabel-kube-proxy',
  'wipe-pki-copies',
  'drill',
]);

/** Steps that only observe: they run (observe) every time, never "already done". */
const OBSERVE_ONLY: ReadonlySet<StepKind> = new Set(['gate', 'verify-membership', 'preflight-audit']);

/** Steps after which a node's cordon is not given back: its member or machine is gone. */
const POINT_OF_NO_RETURN: ReadonlySet<StepKind> = new Set([
  'etcd-remove-member',
  'decommission',
  'delete-node',
]);

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function gateError(message: string, remediation: string, cause?: unknown): FerryError {
  return new FerryError('gate', message, { remediation, ...(cause !== undefined && { cause }) });
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
  }

  get bindings(): Bindings {
    return this.#bindings;
  }

  #confirmedFor(stepId: string): Set<string> {
    let s = this.#confirmed.get(stepId);
    if (!s) {
      s = new Set();
      this.#confirmed.set(stepId, s);
    }
    return s;
  }

  #log(line: string): void {
    this.#d.log(line);
  }

  #timeoutSeconds(step: Step): number {
    if (step.kind === 'drain' && this.#o.drainTimeoutSeconds !== undefined)
      return this.#o.drainTimeoutSeconds;
    return this.#o.timeouts?.[step.kind] ?? step.timeoutSeconds;
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
    this.#learnMemberBindings(world.etcd?.ok ? world.etcd.value : undefined);
    return evaluate(expect, world, this.#gateContext());
  }

  /** A Talos member found by its name gets its id bound, so later looks find it by id. */
  #learnMemberBindings(view: EtcdView | undefined): void {
    if (!view) return;
    for (const s of this.#steps) {
      const m = s.target.member;
      if (m?.kind !== 'talos' || this.#bindings.get(m.replaces)?.memberId) continue;
      const name = this.#bindings.memberName(m);
      const found = name ? view.members.find((x) => x.name === name) : undefined;
      if (found) this.#bind({ replaces: m.replaces, memberId: found.id, name: found.name });
    }
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
      let checks = await this.#check(expect, step.id);
      if (opts.ask && holds(checks)) checks = await this.#askUnknowns(step, expect, checks);
      const ok = holds(checks);
      const seen = JSON.stringify(describeChecks(checks));
      const last = Date.now() >= deadline;
      // Journal what changed, at most every 10 s while waiting (a lag count changes every look),
      // and always the outcome.
      if (ok || last || (seen !== lastSeen && Date.now() - lastAt >= 10_000) || lastAt === 0) {
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

  /** Asks the operator what ferry cannot observe; a "no" stops the run. */
  async #askUnknowns(step: Step, expect: ExpectedState, checks: Check[]): Promise<Check[]> {
    const questions = [
      ...new Set(checks.filter((c) => c.status === 'unknown' && c.confirm).map((c) => c.confirm!)),
    ];
    const confirmed = this.#confirmedFor(step.id);
    for (const q of questions) {
      if (confirmed.has(q)) continue;
      const yes = await this.#d.operator.ask(step.id, q, this.#ctl.signal);
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
    if (point.inFlight) {
      this.#log(
        `resume: ${point.inFlight.stepId} was in flight (${point.inFlight.last}${point.inFlight.actionStarted ? ', its action had started' : ''})`,
      );
    }
    try {
      // The etcd probe writes to the leader from the first step on (see #steerProbe).
      if (this.#d.etcdProbe)
        await this.#d.etcd.observe().then(
          (v) => this.#steerProbe(v),
          () => undefined,
        );
      for (const step of this.#steps) {
        if (this.#finished.has(step.id)) continue;
        const why = this.#d.interrupt?.();
        if (why)
          throw gateError(
            `the run stops before ${step.id}: ${why}`,
            'run ferry run --resume once the cause is gone',
          );
        const inFlight = point.inFlight?.stepId === step.id ? point.inFlight : undefined;
        const outcome = await this.#step(step, inFlight);
        this.#noteEtcdEndpoints();
        this.#finished.add(step.id);
        this.#done.push({ id: step.id, outcome });
      }
      j.endRun('completed', { steps: this.#done.length });
      return { status: 'completed', steps: this.#done };
    } catch (err) {
      const fe =
        err instanceof FerryError
          ? err
          : this.#ctl.signal.aborted
            ? gateError('the run was interrupted', 'run ferry run --resume to continue', err)
            : new FerryError('internal', errText(err), {
                cause: err,
                remediation: 'run ferry run --resume once the cause is fixed',
              });
      j.endRun('stopped', { message: fe.message, remediation: fe.remediation });
      const stoppedAt = this.#steps.find((s) => !this.#finished.has(s.id))?.id;
      return { status: 'stopped', ...(stoppedAt && { stoppedAt }), error: fe, steps: this.#done };
    }
  }

  async #step(step: Step, inFlight: InFlight | undefined): Promise<StepTransition> {
    const j = this.#d.journal;
    const attempt = j.nextAttempt(step.id);
    const t = (state: StepTransition, detail?: unknown) => j.transition(step.id, attempt, state, detail);
    t('started', { title: step.title, kind: step.kind });
    this.#log(`▶ ${step.id}  ${step.title}`);
    try {
      if (this.#o.phases && !this.#o.phases.includes(step.phase)) {
        t('skipped', { reason: `phase ${step.phase} not selected` });
        return 'skipped';
      }
      if (inFlight?.actionStarted) {
        const r = await this.#resumeInFlight(step);
        if (r) {
          t(r.state, r.detail);
          this.#log(`  ${r.state}: ${r.detail.reason}`);
          return r.state;
        }
      }
      if (step.optional && !this.#o.drill) {
        t('skipped', { reason: 'optional: pass --drill to run it' });
        return 'skipped';
      }
      if (step.condition === 'if-member-leads' && step.kind === 'etcd-move-leader') {
        const leads = await this.#memberLeads(step.params.from);
        j.observe(step.id, 'condition', leads, {
          condition: step.condition,
          member: step.params.from.name,
          leads,
        });
        if (!leads) {
          t('skipped', { reason: `${step.params.from.name} does not lead` });
          this.#log(`  skipped: ${step.params.from.name} does not lead`);
          return 'skipped';
        }
      }
      await this.#recordCordonBefore(step);
      // A non-destructive step whose effect is already there (the lab put a joined node behind the
      // load balancer, a node was cordoned by hand) is not done twice.
      if (
        !step.destructive &&
        !OBSERVE_ONLY.has(step.kind) &&
        !isEmptyExpectation(step.idempotencyCheck.doneWhen)
      ) {
        const checks = await this.#check(step.idempotencyCheck.doneWhen, step.id);
        if (checks.length > 0 && checks.every((c) => c.status === 'ok')) {
          t('already-done', { reason: step.idempotencyCheck.description });
          this.#log(`  already done: ${step.idempotencyCheck.description}`);
          return 'already-done';
        }
      }
      await this.#gate(step);
      t('gate-passed');
      t('action-started', { performer: step.action.performer, summary: step.action.summary });
      const result = await this.#act(step);
      t('action-done', result ?? {});
      await this.#verify(step);
      t('done');
      return 'done';
    } catch (err) {
      const fe = this.#asStop(step, err);
      t(fe.kind === 'gate' ? 'stopped' : 'failed', { message: fe.message, remediation: fe.remediation });
      this.#log(`■ ${step.id} stopped: ${fe.message}`);
      await this.#restoreCordons(step).catch((e: unknown) =>
        this.#log(`  could not restore cordon state: ${errText(e)}`),
      );
      throw fe;
    }
  }

  #asStop(step: Step, err: unknown): FerryError {
    if (this.#ctl.signal.aborted) {
      return gateError(
        `${step.id} was interrupted`,
        'run ferry run --resume to continue; the step is re-observed first',
        err,
      );
    }
    if (err instanceof FerryError && (err.kind === 'gate' || err.kind === 'usage' || err.kind === 'input'))
      return err;
    // Anything an action throws stops the run at this step: resumable, never half-forgotten.
    return gateError(
      `${step.id} (${step.title}) failed: ${errText(err)}`,
      err instanceof FerryError && err.remediation
        ? err.remediation
        : 'fix the cause, then run ferry run --resume (the step is re-observed first)',
      err,
    );
  }

  /**
   * The step's action may have happened before the last run ended: observe whether it took effect.
   * Returns the transition to record, or undefined to run the step again (from its gate).
   */
  async #resumeInFlight(
    step: Step,
  ): Promise<{ state: 'already-done'; detail: { reason: string } } | undefined> {
    const check = step.idempotencyCheck;
    if (isEmptyExpectation(check.doneWhen)) {
      if (this.#o.markDone?.includes(step.id))
        return { state: 'already-done', detail: { reason: 'the operator marked it done' } };
      if (check.ifNotDone === 'redo') return undefined;
    } else {
      const checks = await this.#check(check.doneWhen, step.id);
      const ok = checks.length > 0 && holds(checks) && !checks.some((c) => c.status === 'unknown');
      this.#d.journal.observe(step.id, 'resume', ok, {
        doneWhen: check.description,
        checks: checks.filter((c) => c.status !== 'ok'),
      });
      if (ok) return { state: 'already-done', detail: { reason: `re-observed: ${check.description}` } };
      if (this.#o.markDone?.includes(step.id))
        return { state: 'already-done', detail: { reason: 'the operator marked it done' } };
      if (this.#o.retry?.includes(step.id)) return undefined;
      // A destructive step is repeated only when the world clearly shows it did not happen.
      if (check.ifNotDone === 'redo' && (!step.destructive || observable(checks))) {
        this.#log(
          `  resume: not done yet (${describeChecks(checks).join('; ') || 'unknown'}); running it again from its gate`,
        );
        return undefined;
      }
      throw gateError(
        `${step.id} (${step.title}) was in flight when the last run ended and ferry cannot tell whether it took effect: expected ${check.description}; saw ${describeChecks(checks, { includeUnknown: true }).join('; ')}`,
        `check by hand, then run ferry run --resume --mark-done ${step.id} if it happened, or --retry ${step.id} if it did not`,
      );
    }
    if (this.#o.retry?.includes(step.id)) return undefined;
    throw gateError(
      `${step.id} (${step.title}) was in flight when the last run ended and ferry has no way to observe whether it took effect`,
      `check by hand, then run ferry run --resume --mark-done ${step.id} if it happened, or --retry ${step.id} if it did not`,
    );
  }

  async #memberLeads(ref: MemberRef): Promise<boolean> {
    const view = await this.#d.etcd.observe();
    const r = resolveMember(ref, view.members, this.#bindings, this.#kubeadmIds);
    return r.found && r.member.id === view.leaderId;
  }

  // ---- gates ------------------------------------------------------------------------------------

  async #gate(step: Step): Promise<void> {
    const expect = step.kind === 'gate' ? this.#withInvariants(step.expect) : step.expect;
    if (isEmptyExpectation(expect)) return;
    if (step.kind === 'gate') {
      const stable = (this.#o.gateStableSeconds ?? step.params.stableSeconds) * 1000;
      await this.#waitFor(step, expect, 'gate', this.#timeoutSeconds(step) * 1000, {
        stableMs: stable,
        ask: true,
      });
      return;
    }
    await this.#waitFor(step, expect, 'gate', (this.#o.gateGraceSeconds ?? 30) * 1000, { ask: true });
  }

  /**
   * Swap gates also demand that every control-plane apiserver still in service answers: a
   * cluster that lost one instance must not lose another to the swap.
   */
  #withInvariants(expect: ExpectedState): ExpectedState {
    const serving: NonNullable<ExpectedState['apiservers']> = [];
    for (const cp of this.#d.plan.controlPlanes) {
      const stopped = this.#steps.find((s) => s.kind === 'stop-apiserver' && s.subject === cp.node);
      if (!stopped || !this.#finished.has(stopped.id)) {
        serving.push({ node: { kind: 'kubeadm', name: cp.node, address: cp.address }, serving: true });
      }
      const added = this.#steps.find((s) => s.kind === 'wait-node-ready' && s.subject === cp.node);
      if (added && this.#finished.has(added.id)) serving.push({ node: cp.replacement, serving: true });
    }
    return { ...expect, apiservers: [...(expect.apiservers ?? []), ...serving] };
  }

  async #verify(step: Step): Promise<void> {
    const expect = step.verify.expect;
    if (isEmptyExpectation(expect)) return;
    await this.#waitFor(step, expect, 'verify', this.#timeoutSeconds(step) * 1000, {
      ask: step.action.performer === 'operator' || !!expect.operator,
    });
  }

  // ---- cordon state -----------------------------------------------------------------------------

  #nodeName(ref: NodeRef): string | undefined {
    return this.#bindings.nodeName(ref);
  }

  async #recordCordonBefore(step: Step): Promise<void> {
    if (step.kind !== 'cordon' && step.kind !== 'drain') return;
    const node = step.params.node;
    const name = this.#nodeName(node);
    if (!name) return;
    const seen = this.#d.journal
      .observations({ purpose: 'cordon-before' })
      .some((o) => (o.data as { node: string }).node === name);
    if (seen) return;
    const n = await this.#d.kube.getNode(name);
    if (!n) return;
    this.#d.journal.observe(step.id, 'cordon-before', null, {
      node: name,
      subject: step.subject,
      unschedulable: n.unschedulable,
    });
  }

  /** Gives back the cordon state recorded before the run touched a node, unless its swap passed the point of no return. */
  async #restoreCordons(step: Step): Promise<void> {
    const j = this.#d.journal;
    for (const o of j.observations({ purpose: 'cordon-before' })) {
      const { node, subject, unschedulable } = o.data as {
        node: string;
        subject: string;
        unschedulable: boolean;
      };
      if (unschedulable) continue;
      // Its member or machine is gone: a schedulable node there would only attract pods to a dying machine.
      const gone = this.#steps.some(
        (s) => s.subject === subject && POINT_OF_NO_RETURN.has(s.kind) && this.#finished.has(s.id),
      );
      if (gone) continue;
      const n = await this.#d.kube.getNode(node);
      if (!n?.unschedulable) continue;
      await this.#d.kube.setUnschedulable(node, false);
      j.observe(step.id, 'cordon-restored', true, { node, subject } satisfies CordonRestored);
      this.#log(`  restored: ${node} is schedulable again, as it was before the run cordoned it`);
    }
  }

  // ---- actions ----------------------------------------------------------------------------------

  #ctx(step: Step) {
    return {
      stepId: step.id,
      timeoutMs: this.#timeoutSeconds(step) * 1000,
      signal: this.#ctl.signal,
      log: (l: string) => this.#log(`  ${l}`),
    };
  }

  async #act(step: Step): Promise<Record<string, unknown> | undefined> {
    if (
      step.action.performer === 'operator' ||
      (OPERATOR_KINDS.has(step.kind) && step.action.performer !== 'provisioner')
    ) {
      return this.#operatorAction(step);
    }
    switch (step.kind) {
      case 'preflight-audit':
      case 'gate':
      case 'wait-member-joined':
      case 'wait-member-voter':
      case 'wait-node-ready':
      case 'verify-membership':
        return undefined;
      case 'etcd-snapshot':
        return this.#etcdSnapshot(step);
      case 'provision':
        return this.#provision(step);
      case 'lb-add':
      case 'lb-remove':
        return this.#loadBalancer(step);
      case 'cordon': {
        const name = this.#requireName(step.params.node);
        await this.#d.kube.setUnschedulable(name, true);
        return { node: name };
      }
      case 'drain': {
        const name = this.#requireName(step.params.node);
        const r = await this.#d.kube.drain(name, {
          timeoutMs: this.#timeoutSeconds(step) * 1000,
          signal: this.#ctl.signal,
          onProgress: (p) => {
            if (p.kind === 'evicted') this.#log(`  evicted ${p.pod}`);
            else if (p.kind === 'blocked')
              this.#log(
                `  eviction of ${p.pod} refused${p.pdb ? ` by PodDisruptionBudget ${p.pdb}` : ''}: ${p.message}`,
              );
          },
        });
        return { node: name, evicted: r.evicted };
      }
      case 'etcd-move-leader':
        return this.#moveLeader(step);
      case 'etcd-remove-member':
        return this.#removeMember(step);
      case 'decommission': {
        const name = this.#requireName(step.params.node);
        await this.#d.provisioner.decommission(
          {
            node: name,
            address: this.#bindings.nodeAddress(step.params.node),
            role: this.#d.plan.controlPlanes.some((c) => c.node === name) ? 'controlplane' : 'worker',
          },
          this.#ctx(step),
        );
        return { node: name };
      }
      case 'delete-node': {
        const name = this.#requireName(step.params.node);
        await this.#d.kube.deleteNode(name);
        return { node: name };
      }
      default:
        return this.#operatorAction(step);
    }
  }

  #requireName(ref: NodeRef): string {
    const n = this.#nodeName(ref);
    if (!n) {
      throw gateError(
        `the name of ${nodeLabel(ref)} is not known: the provision step did not report it`,
        'run ferry run --resume so the provision step is re-observed',
      );
    }
    return n;
  }

  async #operatorAction(step: Step): Promise<Record<string, unknown>> {
    const node = step.target.node ? this.#nodeName(step.target.node) : undefined;
    const ctx = { ...this.#ctx(step), node };
    if (this.#d.operator.perform && (await this.#d.operator.perform(step, ctx)))
      return { performedBy: 'lab' };
    const lines = [
      step.action.summary,
      ...step.action.commands.map(
        (c) =>
          `${c.where.kind === 'node' ? `[on ${c.where.node}] ` : ''}${c.run}${c.note ? `   # ${c.note}` : ''}`,
      ),
    ];
    this.#d.operator.instruct(step.id, lines);
    return { performedBy: 'operator' };
  }

  async #etcdSnapshot(step: StepOf<'etcd-snapshot'>): Promise<Record<string, unknown>> {
    if (!this.#d.etcdSnapshot) return this.#operatorAction(step);
    const file = isAbsolute(step.params.file)
      ? step.params.file
      : join(dirname(this.#d.planFile), step.params.file);
    await this.#d.etcdSnapshot(file, this.#ctl.signal);
    return { file };
  }

  async #provision(step: StepOf<'provision'>): Promise<Record<string, unknown>> {
    const p = step.params;
    const r = await this.#d.provisioner.provision(
      {
        replaces: p.node.replaces,
        name: this.#bindings.nodeName(p.node) ?? null,
        address: this.#bindings.nodeAddress(p.node),
        role: p.role,
        talosVersion: p.talosVersion,
        machineConfig: p.machineConfig,
        endpoint: this.#d.plan.cluster.endpoint,
        claimed: this.#claimedNames(p.node.replaces),
      },
      this.#ctx(step),
    );
    this.#bind({ replaces: p.node.replaces, name: r.name, address: r.address });
    return { name: r.name, address: r.address };
  }

  /** Every node the plan replaces, and the names of the other replacements known so far. */
  #claimedNames(replaces: string): string[] {
    const plan = this.#d.plan;
    const bound = this.#bindings
      .all()
      .filter((b) => b.replaces !== replaces && b.name)
      .map((b) => b.name!);
    const planned = [...plan.controlPlanes, ...plan.workers]
      .map((x) => x.replacement)
      .filter((r) => r.replaces !== replaces && r.name)
      .map((r) => r.name!);
    return [
      ...new Set([
        ...plan.controlPlanes.map((c) => c.node),
        ...plan.workers.map((w) => w.node),
        ...planned,
        ...bound,
      ]),
    ];
  }

  async #loadBalancer(step: StepOf<'lb-add'> | StepOf<'lb-remove'>): Promise<Record<string, unknown>> {
    const p = step.params;
    const name = this.#requireName(p.node);
    const ref = { node: name, address: this.#bindings.nodeAddress(p.node) ?? p.address, port: p.port };
    if (!this.#d.lb) return this.#operatorAction(step);
    if (step.kind === 'lb-add') await this.#d.lb.add(ref, this.#ctx(step));
    else await this.#d.lb.remove(ref, this.#ctx(step));
    const settle = Math.min(p.settleSeconds, this.#o.lbSettleSeconds ?? p.settleSeconds);
    if (settle > 0) {
      this.#log(`  waiting ${settle} s for the load balancer to settle`);
      await sleep(settle * 1000, undefined, { signal: this.#ctl.signal });
    }
    return { backend: ref };
  }

  /**
   * Points the etcd probe at the started, healthy voters other than `exceptId`, `firstId` (by
   * default the leader) first, and waits until no probe write is on its way to the member left out.
   * The probe stays on the leader through a leadership move: raft drops proposals that reach the
   * leader while it hands over, and a follower that forwarded one is never told, so its write hangs
   * to its deadline; the leader's own writes are refused at once and retried.
   */
  async #steerProbe(view: EtcdView, exceptId?: string, firstId = view.leaderId): Promise<void> {
    if (!this.#d.etcdProbe) return;
    const members = view.members.filter(
      (m) => !m.isLearner && m.name !== '' && m.id !== exceptId && view.healthy.includes(m.id),
    );
    const ordered = [...members.filter((m) => m.id === firstId), ...members.filter((m) => m.id !== firstId)];
    const urls = ordered.flatMap((m) => m.clientURLs.slice(0, 1));
    if (urls.length > 0) await this.#d.etcdProbe.setEndpoints(urls);
  }

  async #moveLeader(step: StepOf<'etcd-move-leader'>): Promise<Record<string, unknown>> {
    const view = await this.#d.etcd.observe();
    const from = resolveMember(step.params.from, view.members, this.#bindings, this.#kubeadmIds);
    if (!from.found)
      throw gateError(`etcd member ${step.params.from.name} is not in the member list`, remediationFor([]));
    if (view.leaderId !== from.member.id) {
      await this.#steerProbe(view, from.member.id);
      return { moved: false, reason: 'it does not lead (any more)' };
    }
    const leaderStatus = view.statuses.find((s) => s.memberId === view.leaderId);
    const leaderIndex = leaderStatus?.ok ? BigInt(leaderStatus.raftIndex) : undefined;
    for (const ref of step.params.to) {
      const r = resolveMember(ref, view.members, this.#bindings, this.#kubeadmIds);
      if (!r.found || r.member.isLearner || !view.healthy.includes(r.member.id)) continue;
      const st = view.statuses.find((s) => s.memberId === r.member.id);
      if (leaderIndex !== undefined && st?.ok && leaderIndex - BigInt(st.raftAppliedIndex) > 1000n) continue;
      await this.#steerProbe(view);
      await this.#d.etcd.moveLeader(r.member.id, this.#ctl.signal);
      this.#log(`  etcd leadership moved from ${from.member.name} to ${r.member.name}`);
      await this.#steerProbe(view, from.member.id, r.member.id);
      return { moved: true, from: from.member.id, to: r.member.id };
    }
    throw gateError(
      `no caught-up, healthy voter to move etcd leadership to (candidates: ${step.params.to.map((m) => m.name ?? m.kind).join(', ')})`,
      'wait until the new members are healthy voters (etcdctl endpoint status --cluster -w table), then run ferry run --resume',
    );
  }

  async #removeMember(step: StepOf<'etcd-remove-member'>): Promise<Record<string, unknown>> {
    const view = await this.#d.etcd.observe();
    const ref = step.params.member;
    const r = resolveMember(ref, view.members, this.#bindings, this.#kubeadmIds);
    if (!r.found) {
      // The gate saw it: it went in between. Nothing to send.
      return { removed: false, reason: `${ref.name} is no longer listed${r.note ? ` (${r.note})` : ''}` };
    }
    await this.#steerProbe(view, r.member.id);
    const outcome = await this.#d.etcd.removeMember(r.member.id, this.#ctl.signal);
    this.#log(
      `  etcd member ${r.member.name} (${r.member.id}) ${outcome === 'removed' ? 'removed' : 'was already gone'}`,
    );
    try {
      const after = await this.#d.etcd.observe();
      await this.#steerProbe(after);
    } catch {
      // the probe keeps its endpoints; the verification reports etcd trouble
    }
    return { memberId: r.member.id, outcome };
  }
}

export async function runPlan(deps: RunDeps, options: RunOptions = {}): Promise<RunResult> {
  return new Orchestrator(deps, options).run();
}

export function stopDescription(r: RunResult): string {
  return r.error ? r.error.message : 'stopped';
}

export { mismatches };
