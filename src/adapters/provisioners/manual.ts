/**
 * The `manual` provisioner: ferry says what to boot (name, role, address, Talos version, machine
 * config) and waits until the machine shows up — its Node registered or its etcd member listed —
 * or the step's timeout. Decommissioning likewise: ferry says what to wipe and waits until nothing
 * answers on the machine's ports.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../errors.js';
import type {
  ActionContext,
  DecommissionRequest,
  MachineState,
  NodeView,
  ProvisionerPort,
  ProvisionRequest,
  ProvisionResult,
} from '../../ports/run.js';
import { errorSummary, incurableByWaiting } from '../errors.js';
import { describePorts, machineStateByPorts, machineStateOf, probeMachinePorts } from './tcp.js';

export interface ManualProvisionerOptions {
  /** Where instructions go (the terminal). */
  say: (line: string) => void;
  /** Finds the booted machine: its Node or etcd member. Undefined while not there. */
  detect: (req: ProvisionRequest) => Promise<ProvisionResult | undefined>;
  pollMs?: number;
}

export function provisionInstructions(req: ProvisionRequest): string[] {
  const role = req.role === 'controlplane' ? 'control plane' : 'worker';
  return [
    `Boot a Talos ${req.talosVersion} ${role} to replace ${req.replaces}:`,
    `  hostname:       ${req.name ?? '(your choice; never the name of a live node or etcd member)'}`,
    `  address:        ${req.address ?? '(your choice)'}`,
    `  machine config: ${req.machineConfig ?? '(generate it with `ferry generate`)'}`,
    ...(req.endpoint ? [`  endpoint:       ${req.endpoint}`] : []),
    req.role === 'controlplane'
      ? '  It joins etcd by itself as a learner; ferry waits for its member and its Node.'
      : '  ferry waits for its Node.',
  ];
}

/**
 * The Node of a machine booted without a name from the plan (a Talos worker keeps the stable
 * hostname Talos gives it): a Talos Node that is none of `req.claimed`, at the planned address when
 * there is one. Several candidates (machines booted ahead): the first by name, each replacement
 * taking its own, as `claimed` grows with every one bound.
 */
export function newTalosNode(req: ProvisionRequest, nodes: readonly NodeView[]): NodeView | undefined {
  const claimed = new Set(req.claimed.map((n) => n.toLowerCase()));
  const isControlPlane = (n: NodeView) => 'node-role.kubernetes.io/control-plane' in n.labels;
  return nodes
    .filter(
      (n) =>
        !claimed.has(n.name.toLowerCase()) &&
        /\btalos\b/i.test(n.osImage ?? '') &&
        isControlPlane(n) === (req.role === 'controlplane') &&
        (req.address === null || n.addresses.includes(req.address)),
    )
    .sort((a, b) => a.name.localeCompare(b.name))[0];
}

/** Stops a wait at once on an error that waiting cannot cure: a gate, so the run resumes after the fix. */
function stopIfIncurable(err: unknown, doing: string): void {
  const stop = incurableByWaiting(err);
  if (!stop) return;
  throw new FerryError('gate', `${doing}: ${stop.reason}`, {
    remediation: `${stop.remediation}; then run ferry run --resume`,
    cause: err,
  });
}

/** The last error of a polling loop, told to the operator once when it appears or changes. */
class ErrorWatch {
  last: { err: unknown; summary: string; at: Date } | undefined;
  #shown: string | undefined;

  constructor(private readonly tell: (summary: string) => void) {}

  failed(err: unknown): void {
    const summary = errorSummary(err);
    this.last = { err, summary, at: new Date() };
    if (summary !== this.#shown) this.tell(summary);
    this.#shown = summary;
  }

  /** A poll that worked: the next error is news again. */
  ok(): void {
    this.#shown = undefined;
  }

  /** For the final message: the last error, and whether the last poll still had it. */
  lastText(): string {
    if (!this.last) return '';
    const still = this.#shown !== undefined;
    return `; ${still ? 'the last look failed' : `looking last failed at ${this.last.at.toISOString()}`}: ${this.last.summary}`;
  }
}

export class ManualProvisioner implements ProvisionerPort {
  readonly kind = 'manual';
  readonly #opts: ManualProvisionerOptions;
  /** Nodes this run's detections bound: another detection of the batch never takes them. */
  readonly #taken = new Set<string>();

  constructor(opts: ManualProvisionerOptions) {
    this.#opts = opts;
  }

  async provision(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    for (const line of provisionInstructions(req)) this.#opts.say(line);
    return this.detect(req, ctx);
  }

  /** A worker batch: every machine's instructions at once, so they are booted side by side. */
  async requestBatch(reqs: ProvisionRequest[]): Promise<void> {
    if (reqs.length > 1)
      this.#opts.say(
        `Boot these ${reqs.length} machines side by side; ferry binds each Node as it registers.`,
      );
    for (const req of reqs) for (const line of provisionInstructions(req)) this.#opts.say(line);
  }

  /**
   * Waits for the machine to show up. Detections of one batch run side by side: a Node one of
   * them took is no candidate for the others (taken the moment it is found, before any await).
   */
  async detect(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    const who = `the Talos node replacing ${req.replaces}`;
    const deadline = Date.now() + ctx.timeoutMs;
    const seen = new ErrorWatch((summary) =>
      this.#opts.say(`  cannot look for ${who} yet (ferry keeps waiting): ${summary}`),
    );
    while (Date.now() < deadline) {
      ctx.signal.throwIfAborted();
      let found: ProvisionResult | undefined;
      try {
        found = await this.#opts.detect({ ...req, claimed: [...req.claimed, ...this.#taken] });
        seen.ok();
      } catch (err) {
        stopIfIncurable(err, `cannot look for ${who}`);
        seen.failed(err);
      }
      if (found && !this.#taken.has(found.name.toLowerCase())) {
        this.#taken.add(found.name.toLowerCase());
        return found;
      }
      await sleep(this.#opts.pollMs ?? 5_000, undefined, { signal: ctx.signal });
    }
    throw new FerryError(
      'gate',
      `${who} did not show up within ${Math.round(ctx.timeoutMs / 1000)} s: no Node ${req.name ?? ''} and no etcd member for it${seen.lastText()}`,
      {
        remediation:
          'boot it as shown above (check its console: talosctl -n ADDRESS dmesg), then run ferry run --resume',
        ...(seen.last && { cause: seen.last.err }),
      },
    );
  }

  async decommission(req: DecommissionRequest, ctx: ActionContext): Promise<void> {
    this.#opts.say(
      `Reset and power off ${req.node}${req.address ? ` (${req.address})` : ''}; ferry waits until nothing answers on its kubelet, apiserver and etcd ports.`,
    );
    const deadline = Date.now() + ctx.timeoutMs;
    let ports: string | undefined;
    while (Date.now() < deadline) {
      ctx.signal.throwIfAborted();
      if (req.address) {
        const probes = await probeMachinePorts(req.address);
        if (machineStateOf(probes) === 'decommissioned') return;
        // A name that does not resolve answers "cannot be checked" for two hours: stop now.
        for (const p of probes)
          if (p.error) stopIfIncurable(p.error, `cannot check ${req.node} at ${req.address}`);
        const now = describePorts(probes);
        if (now !== ports) this.#opts.say(`  ${req.node} (${req.address}): ${now}`);
        ports = now;
      }
      await sleep(this.#opts.pollMs ?? 5_000, undefined, { signal: ctx.signal });
    }
    throw new FerryError(
      'gate',
      `${req.node} still answers (or cannot be checked) after ${Math.round(ctx.timeoutMs / 1000)} s${ports ? `: ${ports}` : req.address ? '' : ': ferry has no address for it to check'}`,
      {
        remediation: `power it off, then run ferry run --resume`,
      },
    );
  }

  async machineState(_node: string, address: string | null): Promise<MachineState | undefined> {
    return address ? machineStateByPorts(address) : undefined;
  }
}
