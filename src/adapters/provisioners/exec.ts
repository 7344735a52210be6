/**
 * The `exec` provisioner: ferry runs the operator's commands (e.g. `tofu apply -var ...`) with the
 * step's facts in the environment:
 *   NODE_NAME, ROLE (controlplane|worker), ADDRESS, REPLACES, TALOS_VERSION, MACHINE_CONFIG,
 *   CLUSTER_ENDPOINT, FERRY_ACTION (provision|decommission|lb-add|lb-remove), FERRY_STEP,
 *   and for the load balancer LB_ACTION (add|remove) and PORT.
 * A provision command that chooses the node's name or address prints `FERRY_NODE_NAME=…` and
 * `FERRY_ADDRESS=…` on stdout. A non-zero exit stops the run at a gate with the output's tail.
 */
import { usageError } from '../../errors.js';
import type {
  ActionContext,
  BackendRef,
  DecommissionRequest,
  LoadBalancerPort,
  MachineState,
  ProvisionerPort,
  ProvisionRequest,
  ProvisionResult,
} from '../../ports/run.js';
import { inParallel } from '../../util/parallel.js';
import { runHook } from './command.js';
import { machineStateByPorts } from './tcp.js';

export interface ExecProvisionerOptions {
  provisionCmd?: string;
  decommissionCmd?: string;
  cwd?: string;
  /** How many provision commands of a worker batch run side by side. Default 4. */
  provisionConcurrency?: number;
}

export class ExecProvisioner implements ProvisionerPort {
  readonly kind = 'exec';
  readonly #opts: ExecProvisionerOptions;

  constructor(opts: ExecProvisionerOptions) {
    this.#opts = opts;
  }

  async provision(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    const command = this.#opts.provisionCmd;
    if (!command) {
      throw usageError(
        'the exec provisioner needs --provision-cmd',
        'e.g. --provision-cmd "tofu apply -auto-approve -var node=$NODE_NAME"',
      );
    }
    const r = await runHook({
      what: `provision command for ${req.name ?? `the node replacing ${req.replaces}`}`,
      flag: '--provision-cmd',
      command,
      env: {
        NODE_NAME: req.name ?? '',
        ROLE: req.role,
        ADDRESS: req.address ?? '',
        REPLACES: req.replaces,
        TALOS_VERSION: req.talosVersion,
        MACHINE_CONFIG: req.machineConfig ?? '',
        CLUSTER_ENDPOINT: req.endpoint ?? '',
        FERRY_ACTION: 'provision',
        FERRY_STEP: ctx.stepId,
      },
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      log: ctx.log,
      ...(this.#opts.cwd && { cwd: this.#opts.cwd }),
    });
    const name = r.outputs['FERRY_NODE_NAME'] || req.name;
    if (!name) {
      throw usageError(
        `the provision command for the node replacing ${req.replaces} succeeded but did not say which node it created`,
        'print FERRY_NODE_NAME=<hostname> (and FERRY_ADDRESS=<ip>) on stdout when the plan leaves the name to the provisioner',
      );
    }
    return { name, address: r.outputs['FERRY_ADDRESS'] || req.address };
  }

  /**
   * A worker batch's commands side by side, at most --provision-concurrency at once: each says the
   * node it created, so nothing is left to detect. A failed command fails the batch once the
   * started ones have finished (those are bound: a resume asks only for the rest).
   */
  requestBatch(
    reqs: ProvisionRequest[],
    ctx: ActionContext,
    started: (req: ProvisionRequest, result: ProvisionResult) => void,
  ): Promise<void> {
    return inParallel(reqs, this.#opts.provisionConcurrency ?? 4, async (req) =>
      started(req, await this.provision(req, ctx)),
    );
  }

  async decommission(req: DecommissionRequest, ctx: ActionContext): Promise<void> {
    const command = this.#opts.decommissionCmd;
    if (!command) {
      throw usageError(
        'the exec provisioner needs --decommission-cmd',
        'e.g. --decommission-cmd "tofu destroy -auto-approve -target=module.node[\\"$NODE_NAME\\"]"',
      );
    }
    await runHook({
      what: `decommission command for ${req.node}`,
      flag: '--decommission-cmd',
      command,
      env: {
        NODE_NAME: req.node,
        ROLE: req.role,
        ADDRESS: req.address ?? '',
        FERRY_ACTION: 'decommission',
        FERRY_STEP: ctx.stepId,
      },
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      log: ctx.log,
      ...(this.#opts.cwd && { cwd: this.#opts.cwd }),
    });
  }

  async machineState(_node: string, address: string | null): Promise<MachineState | undefined> {
    return address ? machineStateByPorts(address) : undefined;
  }
}

export class ExecLoadBalancer implements LoadBalancerPort {
  readonly kind = 'exec';
  readonly #cmd: string;
  readonly #cwd: string | undefined;

  constructor(lbCmd: string, cwd?: string) {
    this.#cmd = lbCmd;
    this.#cwd = cwd;
  }

  #run(op: 'add' | 'remove', b: BackendRef, ctx: ActionContext): Promise<unknown> {
    return runHook({
      what: `load-balancer command (${op} ${b.node})`,
      flag: '--lb-cmd',
      command: this.#cmd,
      env: {
        LB_ACTION: op,
        NODE_NAME: b.node,
        ADDRESS: b.address ?? '',
        PORT: String(b.port),
        FERRY_ACTION: `lb-${op}`,
        FERRY_STEP: ctx.stepId,
      },
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
      log: ctx.log,
      ...(this.#cwd && { cwd: this.#cwd }),
    });
  }

  async add(b: BackendRef, ctx: ActionContext): Promise<void> {
    await this.#run('add', b, ctx);
  }

  async remove(b: BackendRef, ctx: ActionContext): Promise<void> {
    await this.#run('remove', b, ctx);
  }
}
