/**
 * The lab provisioner, load balancer and stand-in operator for `ferry run` against a lab
 * (`ferry rehearse`, the tests, the benchmark), over a LabControl (in-process or a unix socket).
 * The lab has no node shell: operator steps it cannot act out (kubeadm-side edits on a node, wiping
 * PKI copies) are confirmed automatically, and the journal says so.
 */
import type { Step } from '../../plan/model.js';
import type {
  ActionContext,
  ApiserverStatusPort,
  BackendRef,
  DecommissionRequest,
  LoadBalancerPort,
  MachineState,
  OperatorPort,
  ProvisionerPort,
  ProvisionRequest,
  ProvisionResult,
} from '../../ports/run.js';
import type { LabControl } from './lab-control.js';

export class LabProvisionerAdapter implements ProvisionerPort {
  readonly kind = 'lab';
  readonly #c: LabControl;

  constructor(control: LabControl) {
    this.#c = control;
  }

  async provision(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    const r = await this.#c.provision(req);
    ctx.log(
      `lab: ${req.role === 'controlplane' ? 'Talos control plane' : 'Talos worker'} ${r.name} booting at ${r.address}`,
    );
    return r;
  }

  /** The lab names and addresses each machine as it starts it; the run waits for them to boot. */
  async requestBatch(
    reqs: ProvisionRequest[],
    ctx: ActionContext,
    started: (req: ProvisionRequest, result: ProvisionResult) => void,
  ): Promise<void> {
    await Promise.all(reqs.map(async (req) => started(req, await this.provision(req, ctx))));
  }

  async decommission(req: DecommissionRequest, ctx: ActionContext): Promise<void> {
    await this.#c.decommission(req.node);
    ctx.log(`lab: ${req.node} powered off`);
  }

  machineState(node: string): Promise<MachineState | undefined> {
    return this.#c.machineState(node);
  }
}

export class LabLoadBalancerAdapter implements LoadBalancerPort {
  readonly kind = 'lab';
  readonly #c: LabControl;

  constructor(control: LabControl) {
    this.#c = control;
  }

  add(b: BackendRef): Promise<void> {
    return this.#c.lb('add', b.node);
  }

  remove(b: BackendRef): Promise<void> {
    return this.#c.lb('remove', b.node);
  }

  inRotation(b: BackendRef): Promise<boolean | undefined> {
    return this.#c.inRotation(b.node);
  }
}

export class LabApiserverStatus implements ApiserverStatusPort {
  readonly #c: LabControl;

  constructor(control: LabControl) {
    this.#c = control;
  }

  serving(node: string): Promise<boolean | undefined> {
    return this.#c.apiserverServing(node);
  }
}

export class LabOperator implements OperatorPort {
  readonly #c: LabControl;
  readonly #log: (line: string) => void;

  constructor(control: LabControl, log: (line: string) => void) {
    this.#c = control;
    this.#log = log;
  }

  async perform(step: Step, ctx: ActionContext & { node: string | undefined }): Promise<boolean> {
    if (step.kind === 'stop-apiserver' && ctx.node) {
      await this.#c.stopApiserver(ctx.node);
      ctx.log(
        `lab: apiserver instance of ${ctx.node} stopped (stands in for moving its static pod manifest away)`,
      );
      return true;
    }
    if (step.kind === 'decommission' && ctx.node) {
      await this.#c.decommission(ctx.node);
      ctx.log(`lab: ${ctx.node} powered off (stands in for reset + power off)`);
      return true;
    }
    return false;
  }

  instruct(stepId: string, lines: string[]): void {
    for (const l of lines) this.#log(`[${stepId}] ${l}`);
  }

  async ask(stepId: string, question: string): Promise<boolean> {
    this.#log(
      `[${stepId}] lab: "${question}" — yes, assumed: the lab has no node shell to do or check this by hand`,
    );
    return true;
  }
}
