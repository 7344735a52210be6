/**
 * The `capi` provisioner: a replacement comes from Cluster API on the management cluster.
 * - Control plane: the TalosControlPlane stays paused (adoption recipe (c), capi.md §2): unpaused,
 *   its etcd audit (H1) removes every kubeadm member as soon as a control-plane Machine has a
 *   Node, before it even creates the next Machine. So ferry raises its replicas by one (never
 *   down: H3, H8) and creates the Machine, TalosConfig and infrastructure machine itself, as CACPPT
 *   would (capi/cp-create.ts, CRD-checked first); the Machine and infrastructure controllers boot
 *   it (only a paused Cluster stops them). A TalosControlPlane found unpaused is a stop.
 * - Worker: the MachineDeployment whose `ferry.dev/replaces` names the kubeadm node is scaled by
 *   one (never down); same wait.
 * A Machine without a Node past a bound stops the run naming the management-cluster cause when
 * there is one: no usable `<cluster>-kubeconfig` Secret, or the Cluster not ControlPlaneInitialized
 * (capi/node-link-gate.ts; re-running adoption writes both); what cannot be read stops it too. A
 * Machine sitting in Provisioned without a providerID past a bound stops the run (H11) with the
 * kit's CCM as the fix. The Node name is the Machine's nodeRef, its address the Node's InternalIP.
 * Decommissioning an old kubeadm machine is not Cluster API's: a second provisioner does it
 * (ferry has drained it and removed its member itself, H3, H4).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { auditGuard } from '../../capi/audit-guard.js';
import { capiKubectl, MGMT_KUBECTL } from '../../capi/kubectl-commands.js';
import { nodeLinkGate, type Read } from '../../capi/node-link-gate.js';
import { providerIdGate } from '../../capi/providerid-gate.js';
import { nodeRefName, PAUSED_ANNOTATION } from '../../capi/view.js';
import { inputError } from '../../errors.js';
import type { CrdValidator } from '../../generate/schema/crd.js';
import type {
  ActionContext,
  DecommissionRequest,
  EtcdAdminPort,
  EtcdMemberInfo,
  KubeAdminPort,
  ProvisionerPort,
  ProvisionRequest,
  ProvisionResult,
} from '../../ports/run.js';
import { errText, gateError } from '../../ports/stop.js';
import type { KubeObject } from '../../snapshot/model.js';
import { addControlPlaneMachine } from '../capi/cp-create.js';
import type { MgmtApi } from '../capi/mgmt-api.js';

export interface CapiProvisionerOptions {
  api: MgmtApi;
  /** The workload cluster: the new Node and its InternalIP. */
  workload: Pick<KubeAdminPort, 'getObject'>;
  /** The workload cluster's etcd: a TalosControlPlane found unpaused is told with the members its audit would remove. */
  etcd: Pick<EtcdAdminPort, 'observe'>;
  /** Does what Cluster API does not: decommissioning the old kubeadm machines. */
  decommissioner: ProvisionerPort;
  /** The kit's infrastructure machine templates (their providerID injection setting). */
  templates: KubeObject[];
  kitDir: string;
  pollMs?: number;
  /** How long a Machine may sit in Provisioned without a providerID. Default 300 s. */
  providerIdGraceMs?: number;
  /**
   * How long the wait for a Machine's Node tolerates a missing kubeconfig Secret or a Cluster not
   * yet ControlPlaneInitialized (the Cluster reconciles within seconds of adoption). Default 30 s.
   */
  linkGraceMs?: number;
  /** The Cluster API CRDs: every object ferry creates is checked before the first is sent. */
  crds: CrdValidator;
  /** Whether a cloud-controller-manager runs in the workload cluster; null when not observed. */
  ccmRunning?: () => Promise<boolean | null>;
}

const lower = (s: string) => s.toLowerCase();
const pauseCmd = (ns: string, tcp: string) =>
  `kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${ns} annotate taloscontrolplanes.controlplane.cluster.x-k8s.io ${tcp} cluster.x-k8s.io/paused=true --overwrite`;

function taken(m: KubeObject, req: ProvisionRequest, ctx: ActionContext): string {
  ctx.log(`Machine ${m.metadata.name} already exists for ${req.replaces}: no second scale step`);
  return m.metadata.name;
}

export class CapiProvisioner implements ProvisionerPort {
  readonly kind = 'capi';
  readonly #o: CapiProvisionerOptions;
  /** Machines this run's detections took: another detection of the batch never takes them. */
  readonly #taken = new Set<string>();

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
      machine = mine ? taken(mine, req, ctx) : await this.#scaleControlPlane(existing, ctx);
    } else {
      const md = this.#poolOf(req.replaces);
      list = () => this.#o.api.machines({ machineDeployment: md });
      const existing = await list();
      const mine = unclaimed(existing);
      machine = mine ? taken(mine, req, ctx) : await this.#scaleWorkers(md, existing, list, ctx, deadline);
    }
    return this.#bindMachine(machine, list, ctx, deadline);
  }

  /**
   * A worker batch: each pool's MachineDeployment up by the batch's machines in it, in one patch
   * (never down). Counted from what exists, so asking again after a crash between the patch and
   * the last Node neither scales twice nor loses a Machine: the pool's replicas only have to reach
   * its claimed Machines (earlier replacements) plus this batch's machines.
   */
  async requestBatch(reqs: ProvisionRequest[], ctx: ActionContext): Promise<void> {
    const { api } = this.#o;
    const pools = new Map<string, ProvisionRequest[]>();
    for (const req of reqs) {
      const md = this.#poolOf(req.replaces);
      pools.set(md, [...(pools.get(md) ?? []), req]);
    }
    for (const [md, batch] of pools) {
      const current = await api.machineDeploymentReplicas(md);
      if (current === undefined)
        throw gateError(
          `MachineDeployment ${api.names.namespace}/${md} does not exist`,
          'adopt first (the capi-adopt step of phase 1), then run ferry run --resume',
        );
      const claimed = new Set(batch[0]!.claimed.map(lower));
      const machines = await api.machines({ machineDeployment: md });
      const earlier = machines.filter((m) => claimed.has(lower(nodeRefName(m) ?? m.metadata.name))).length;
      const target = earlier + batch.length;
      if (current >= target) {
        ctx.log(
          `MachineDeployment ${md}: replicas ${current} already cover ${batch.length} replacement(s) beside ${earlier} earlier: no patch`,
        );
        continue;
      }
      ctx.log(
        `MachineDeployment ${md}: replicas ${current} → ${target} (${batch.map((r) => r.replaces).join(', ')})`,
      );
      await api.setMachineDeploymentReplicas(md, target);
    }
  }

  /**
   * One machine of a requested batch: the first of its pool's new Machines (by name) that no other
   * replacement claims or another detection of the batch took, then its Node. A Machine that never
   * appears, fails or gets no Node in time stops the run naming it.
   */
  async detect(req: ProvisionRequest, ctx: ActionContext): Promise<ProvisionResult> {
    const deadline = Date.now() + ctx.timeoutMs;
    const md = this.#poolOf(req.replaces);
    const list = () => this.#o.api.machines({ machineDeployment: md });
    const claimed = new Set(req.claimed.map(lower));
    for (;;) {
      const free = (await list())
        .filter(
          (m) => !claimed.has(lower(nodeRefName(m) ?? m.metadata.name)) && !this.#taken.has(m.metadata.name),
        )
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      // Taken synchronously after the list: no other detection can pick it in between.
      const mine = free.find((m) => nodeRefName(m)) ?? free[0];
      if (mine) {
        this.#taken.add(mine.metadata.name);
        ctx.log(`Machine ${mine.metadata.name} of ${md} is the replacement of ${req.replaces}`);
        return this.#bindMachine(mine.metadata.name, list, ctx, deadline);
      }
      if (Date.now() > deadline)
        throw gateError(
          `MachineDeployment ${md} has no new Machine for the replacement of ${req.replaces}`,
          `look at it (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${this.#o.api.names.namespace} describe machinedeployments.cluster.x-k8s.io ${md}), then run ferry run --resume`,
        );
      await sleep(this.#pollMs, undefined, { signal: ctx.signal });
    }
  }

  /** The kit's MachineDeployment that replaces the kubeadm node. */
  #poolOf(replaces: string): string {
    const md = this.#o.api.names.machineDeployments.find((d) => d.replaces.includes(replaces));
    if (!md)
      throw inputError(
        `the kit has no MachineDeployment whose ferry.dev/replaces names ${replaces}`,
        { field: 'metadata.annotations.ferry.dev/replaces' },
        'generate the kit again with `ferry generate --provisioner capi` for this snapshot',
      );
    return md.name;
  }

  /** A Machine's Node name and InternalIP, once it has them. */
  async #bindMachine(
    machine: string,
    list: () => Promise<KubeObject[]>,
    ctx: ActionContext,
    deadline: number,
  ): Promise<ProvisionResult> {
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

  async #scaleControlPlane(existing: KubeObject[], ctx: ActionContext): Promise<string> {
    const { api } = this.#o;
    const tcp = await api.controlPlane();
    if (!tcp)
      throw gateError(
        `TalosControlPlane ${api.names.namespace}/${api.names.controlPlane} does not exist`,
        'adopt first (the capi-adopt step of phase 1), then run ferry run --resume',
      );
    const members = await this.#members();
    if (!tcp.paused) {
      // Creating a Machine beside an unpaused TCP races its own scale-up and its etcd audit (H1).
      const g = auditGuard(members, existing);
      throw gateError(
        `TalosControlPlane ${api.names.controlPlane} is not paused${g.kind === 'refused' ? `, and its etcd audit may remove the member(s) ${g.unowned.join(', ')} that no Machine names (the kubeadm members) at any moment` : ''}: ferry adds control planes only while it is paused`,
        `pause it now: ${pauseCmd(api.names.namespace, api.names.controlPlane)}; check that the etcd member list still holds every kubeadm member; then run ferry run --resume`,
      );
    }
    if (tcp.clusterPaused)
      throw gateError(
        `Cluster ${api.names.namespace}/${api.names.cluster} is paused: no controller would boot a new Machine`,
        `unpause the Cluster (spec.paused and the ${PAUSED_ANNOTATION} annotation both pause it): ${capiKubectl.unpauseCluster(MGMT_KUBECTL, api.names.namespace, api.names.cluster)}; then run ferry run --resume`,
      );
    return addControlPlaneMachine(api, this.#o.crds, {
      target: existing.length + 1,
      log: ctx.log,
      retry: 'run ferry run --resume',
    });
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
    const since = Date.now();
    const linkGrace = this.#o.linkGraceMs ?? 30_000;
    for (;;) {
      const m = (await list()).find((x) => x.metadata.name === machine);
      if (!m)
        throw gateError(
          `Machine ${machine} is gone before it got a Node`,
          'look at the MachineSet or TalosControlPlane events in the management cluster, then run ferry run --resume',
        );
      const node = nodeRefName(m);
      if (node) return node;
      if (m.status?.['phase'] === 'Failed')
        throw gateError(
          `Machine ${machine} failed before it got a Node${typeof m.status?.['failureMessage'] === 'string' ? `: ${m.status['failureMessage']}` : ''}`,
          `look at it and its infrastructure machine (kubectl --kubeconfig "$MGMT_KUBECONFIG" -n ${this.#o.api.names.namespace} describe machines.cluster.x-k8s.io ${machine}); delete it so its MachineSet makes another, then run ferry run --resume`,
        );
      // First: without the Secret and the initialized Cluster no CCM or providerID would help.
      if (Date.now() - since >= linkGrace || Date.now() > deadline) {
        const link = nodeLinkGate(await this.#linkFacts(machine));
        if (link.kind === 'stop') throw gateError(link.reason, link.remediation);
      }
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

  /** What Cluster API needs to link a Machine to its Node, as the management cluster shows it now. */
  async #linkFacts(machine: string): Promise<Parameters<typeof nodeLinkGate>[0]> {
    const { api } = this.#o;
    const read = (get: () => Promise<KubeObject | undefined>): Promise<Read> =>
      get().then(
        (object) => ({ kind: 'read', object }),
        (err: unknown) => ({ kind: 'unreadable', error: errText(err) }),
      );
    const [clusterObject, kubeconfigSecret] = await Promise.all([
      read(() => api.clusterObject()),
      read(() => api.kubeconfigSecret()),
    ]);
    // Unknown counts as paused: adoption is the remedy ferry can name for certain.
    const tcp = await api.controlPlane().catch(() => undefined);
    return {
      machine,
      namespace: api.names.namespace,
      cluster: api.names.cluster,
      clusterObject,
      kubeconfigSecret,
      controlPlanePaused: tcp?.paused ?? true,
      kitDir: this.#o.kitDir,
    };
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
        `cannot read the etcd member list before adding a control plane: ${errText(err)}`,
        'check the --etcd-* flags and etcd health, then run ferry run --resume',
        err,
      );
    }
  }
}
