/**
 * The `capi` provisioner: a replacement comes from Cluster API on the management cluster.
 * - Control plane: the TalosControlPlane is unpaused for the one scale step (replicas + 1, never
 *   down: capi.md H3, H8), paused again as soon as its new Machine exists, and ferry waits for the
 *   Machine's nodeRef. It is never unpaused while a control-plane Machine has a Node and an etcd
 *   member no Machine names remains: its etcd audit (H1) would remove those members in that window
 *   (a gate stop). The member list is compared before and after the window too: a member lost in
 *   it stops the run at once, naming it.
 * - Worker: the MachineDeployment whose `ferry.dev/replaces` names the kubeadm node is scaled by
 *   one (never down); same wait.
 * A Machine sitting in Provisioned without a providerID past a bound stops the run (H11) with the
 * kit's CCM as the fix. The Node name is the Machine's nodeRef, its address the Node's InternalIP.
 * Decommissioning an old kubeadm machine is not Cluster API's: a second provisioner does it
 * (ferry has drained it and removed its member itself, H3, H4).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { auditGuard } from '../../capi/audit-guard.js';
import { providerIdGate } from '../../capi/providerid-gate.js';
import { tcpScale } from '../../capi/tcp-scale.js';
import { inputError } from '../../errors.js';
import type {
  ActionContext,
  DecommissionRequest,
  EtcdAdminPort,
  EtcdMemberInfo,
  KubeAdminPort,
  ProvisionerPort,
  ProvisionRequest,
  ProvisionResult,
} from '../../run/ports.js';
import { errText, gateError } from '../../run/stop.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type MgmtApi, nodeRefName } from '../capi/mgmt-api.js';

export interface CapiProvisionerOptions {
  api: MgmtApi;
  /** The workload cluster: the new Node and its InternalIP. */
  workload: Pick<KubeAdminPort, 'getObject'>;
  /** The workload cluster's etcd: the members before and after an unpause window. */
  etcd: Pick<EtcdAdminPort, 'observe'>;
  /** Does what Cluster API does not: decommissioning the old kubeadm machines. */
  decommissioner: ProvisionerPort;
  /** The kit's infrastructure machine templates (their providerID injection setting). */
  templates: KubeObject[];
  kitDir: string;
  pollMs?: number;
  /** How long a Machine may sit in Provisioned without a providerID. Default 300 s. */
  providerIdGraceMs?: number;
  /** How long the TalosControlPlane may take to create its Machine while unpaused. Default 120 s. */
  unpausedMs?: number;
  /** Whether a cloud-controller-manager runs in the workload cluster; null when not observed. */
  ccmRunning?: () => Promise<boolean | null>;
}

const lower = (s: string) => s.toLowerCase();

function taken(m: KubeObject, req: ProvisionRequest, ctx: ActionContext): string {
  ctx.log(`Machine ${m.metadata.name} already exists for ${req.replaces}: no second scale step`);
  return m.metadata.name;
}

export class CapiProvisioner implements ProvisionerPort {
  readonly kind = 'capi';
  readonly #o: CapiProvisionerOptions;

  constructor(o: CapiProvisionerOptions) {
    this.#o = o;
  }

  async provision(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    const deadline = Date.now() + ctx.timeoutMs;
    const claimed = new Set(req.claimed.map(lower));
    // A Machine that is no known node's: ours, from this step's earlier attempt (a resumed run).
    const unclaimed = (ms: KubeObject[]) =>
      ms.find((m) => !claimed.has(lower(nodeRefName(m) ?? m.metadata.name)));
    let machine: string;
    let list: () => Promise<KubeObject[]>;
    if (req.role === 'controlplane') {
      list = () => this.#o.api.machines({ controlPlane: true });
      const existing = await list();
      const mine = unclaimed(existing);
      machine = mine ? taken(mine, req, ctx) : await this.#scaleControlPlane(existing, ctx, deadline);
    } else {
      const md = this.#o.api.names.machineDeployments.find((d) => d.replaces.includes(req.replaces));
      if (!md)
        throw inputError(
          `the kit has no MachineDeployment whose ferry.dev/replaces names ${req.replaces}`,
          { field: 'metadata.annotations.ferry.dev/replaces' },
          'generate the kit again with `ferry generate --provisioner capi` for this snapshot',
        );
      list = () => this.#o.api.machines({ machineDeployment: md.name });
      const existing = await list();
      const mine = unclaimed(existing);
      machine = mine
        ? taken(mine, req, ctx)
        : await this.#scaleWorkers(md.name, existing, list, ctx, deadline);
    }
    const name = await this.#waitNodeRef(machine, list, ctx, deadline);
    if (lower(name) !== lower(machine))
      ctx.log(
        `Machine ${machine}'s Node is ${name}: the Talos host name is not the Machine name (hostname.source InfrastructureName keeps them equal)`,
      );
    const address = await this.#internalIp(name, ctx, deadline);
    return { name, address };
  }

  decommission(req: DecommissionRequest, ctx: ActionContext): Promise<void> {
    return this.#o.decommissioner.decommission(req, ctx);
  }

  get #pollMs() {
    return this.#o.pollMs ?? 1000;
  }

  async #scaleControlPlane(existing: KubeObject[], ctx: ActionContext, deadline: number): Promise<string> {
    const { api } = this.#o;
    const tcp = await api.controlPlane();
    if (!tcp)
      throw gateError(
        `TalosControlPlane ${api.names.namespace}/${api.names.controlPlane} does not exist`,
        'adopt first (the capi-adopt step of phase 1), then run ferry run --resume',
      );
    const current = tcp.replicas ?? 0;
    const target = existing.length + 1;
    if (current !== target) {
      const s = tcpScale(current, target);
      if (s.kind === 'refused') throw gateError(s.reason, s.remediation);
    }
    const before = await this.#members();
    // Prevent, not only detect: once a control-plane Machine has a Node, the unpaused
    // TalosControlPlane's etcd audit removes every kubeadm member before it creates a Machine (H1).
    const guard = auditGuard(before, existing);
    if (guard.kind === 'refused')
      throw gateError(
        `refusing to unpause TalosControlPlane ${api.names.controlPlane}: Machine(s) ${guard.machinesWithNode.join(', ')} already have a Node, so its etcd audit would remove the member(s) ${guard.unowned.join(', ')} that no Machine names (the kubeadm members) before it creates the next Machine; it stays paused`,
        'keep the TalosControlPlane paused and create the next control-plane Machine while it is paused (a ferry built with that scale step does it), or finish replacing every kubeadm etcd member first; then run ferry run --resume',
      );
    const known = new Set(existing.map((m) => m.metadata.name));
    let created: string | undefined;
    ctx.log(
      `TalosControlPlane ${api.names.controlPlane}: unpaused for one scale step, replicas ${current} → ${target}`,
    );
    try {
      await api.unpauseControlPlane();
      if (current !== target) await api.setControlPlaneReplicas(target);
      const until = Math.min(deadline, Date.now() + (this.#o.unpausedMs ?? 120_000));
      while (!created) {
        created = (await api.machines({ controlPlane: true })).find((m) => !known.has(m.metadata.name))
          ?.metadata.name;
        if (created) break;
        if (Date.now() > until)
          throw gateError(
            `TalosControlPlane ${api.names.controlPlane} created no Machine for replicas ${target}`,
            `look at its conditions (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${api.names.namespace} describe taloscontrolplanes.controlplane.cluster.x-k8s.io ${api.names.controlPlane}); it is paused again; then run ferry run --resume`,
          );
        await sleep(this.#pollMs, undefined, { signal: ctx.signal });
      }
    } finally {
      await api.pauseControlPlane();
      ctx.log(`TalosControlPlane ${api.names.controlPlane}: paused again`);
    }
    const after = await this.#members();
    const ids = new Set(after.map((m) => m.id));
    const lost = before.filter((m) => !ids.has(m.id));
    if (lost.length > 0)
      throw gateError(
        `etcd lost member(s) ${lost.map((m) => m.name || m.id).join(', ')} while the TalosControlPlane was unpaused to create Machine ${created}: its etcd audit removes members no Machine names`,
        'the TalosControlPlane is paused again; add the members back or restore the etcd snapshot before going on, then run ferry run --resume',
      );
    ctx.log(`Machine ${created} created; no etcd member lost`);
    return created!;
  }

  async #scaleWorkers(
    md: string,
    existing: KubeObject[],
    list: () => Promise<KubeObject[]>,
    ctx: ActionContext,
    deadline: number,
  ): Promise<string> {
    const { api } = this.#o;
    const current = await api.machineDeploymentReplicas(md);
    if (current === undefined)
      throw gateError(
        `MachineDeployment ${api.names.namespace}/${md} does not exist`,
        'adopt first (the capi-adopt step of phase 1), then run ferry run --resume',
      );
    // Up only: lowering replicas lets Cluster API pick and delete a Machine itself.
    const target = Math.max(current, existing.length) + 1;
    ctx.log(`MachineDeployment ${md}: replicas ${current} → ${target}`);
    await api.setMachineDeploymentReplicas(md, target);
    const known = new Set(existing.map((m) => m.metadata.name));
    for (;;) {
      const created = (await list()).find((m) => !known.has(m.metadata.name));
      if (created) return created.metadata.name;
      if (Date.now() > deadline)
        throw gateError(
          `MachineDeployment ${md} created no Machine for replicas ${target}`,
          `look at it (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${api.names.namespace} describe machinedeployments.cluster.x-k8s.io ${md}), then run ferry run --resume`,
        );
      await sleep(this.#pollMs, undefined, { signal: ctx.signal });
    }
  }

  async #waitNodeRef(
    machine: string,
    list: () => Promise<KubeObject[]>,
    ctx: ActionContext,
    deadline: number,
  ): Promise<string> {
    let stuckSince: number | undefined;
    const grace = this.#o.providerIdGraceMs ?? 300_000;
    for (;;) {
      const m = (await list()).find((x) => x.metadata.name === machine);
      if (!m)
        throw gateError(
          `Machine ${machine} is gone before it got a Node`,
          'look at the MachineSet or TalosControlPlane events in the management cluster, then run ferry run --resume',
        );
      const node = nodeRefName(m);
      if (node) return node;
      const stuck = m.status?.['phase'] === 'Provisioned' && typeof m.spec?.['providerID'] !== 'string';
      stuckSince = stuck ? (stuckSince ?? Date.now()) : undefined;
      if (stuckSince !== undefined && Date.now() - stuckSince >= grace) {
        const ccmRunning = this.#o.ccmRunning ? await this.#o.ccmRunning().catch(() => null) : null;
        const gate = providerIdGate({
          machines: [m],
          templates: this.#o.templates,
          ccmRunning,
          kitDir: this.#o.kitDir,
        });
        if (gate.kind === 'stop') throw gateError(gate.reason, gate.remediation);
      }
      if (Date.now() > deadline)
        throw gateError(
          `Machine ${machine} has no nodeRef yet (phase ${String(m.status?.['phase'] ?? 'unknown')})`,
          `watch it (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${this.#o.api.names.namespace} get machines.cluster.x-k8s.io ${machine} -w), then run ferry run --resume`,
        );
      await sleep(this.#pollMs, undefined, { signal: ctx.signal });
    }
  }

  async #internalIp(node: string, ctx: ActionContext, deadline: number): Promise<string | null> {
    for (;;) {
      const n = await this.#o.workload.getObject('v1', 'Node', undefined, node);
      const addrs = (n?.['status'] as { addresses?: { type?: string; address?: string }[] } | undefined)
        ?.addresses;
      const ip = addrs?.find((a) => a.type === 'InternalIP')?.address;
      if (n && ip) return ip;
      if (Date.now() > deadline) return null;
      await sleep(this.#pollMs, undefined, { signal: ctx.signal });
    }
  }

  async #members(): Promise<EtcdMemberInfo[]> {
    try {
      return (await this.#o.etcd.observe()).members;
    } catch (err) {
      // Fail closed: without the members before, a loss in the window could not be told.
      throw gateError(
        `cannot read the etcd member list before or after unpausing the TalosControlPlane: ${errText(err)}`,
        'check the --etcd-* flags and etcd health, then run ferry run --resume',
        err,
      );
    }
  }
}
