/**
 * Node-level steps shared by control-plane swaps (swap.ts) and workers (workers.ts): provision,
 * wait for Ready, cordon, drain, decommission, delete the Node. Each takes the precondition the
 * caller computed (etcd membership for control planes) and adds its own node expectations.
 */
import type { Provisioner } from '../facts/target.js';
import {
  addressArg,
  cmd,
  decommissionCmds,
  drainCmd,
  kubectl,
  nodeArg,
  provisionCmds,
  talosctl,
  waitReadyCmd,
} from './commands.js';
import type { ExpectedState, KubeadmNodeRef, NodeRef, TalosNodeRef } from './expected-state.js';
import type { MachineConfigChoice } from './kit.js';
import { type DraftStep, nodeLabel, type PdbRef } from './model.js';
import { doneWhen, draft, nodeState, noUndo, TIMEOUTS, undoWith } from './steps.js';

export type Role = 'controlplane' | 'worker';

interface Common {
  subject: string;
  /** Extra precondition (e.g. the etcd membership this step expects). */
  pre?: ExpectedState;
  batch?: number;
}

function placement(c: Common): { batch?: number } {
  return c.batch === undefined ? {} : { batch: c.batch };
}

export function provisionStep(
  c: Common & {
    node: TalosNodeRef;
    role: Role;
    provisioner: Provisioner;
    talosVersion: string;
    /** The node's complete config from the kit, or why there is none. */
    machineConfig: MachineConfigChoice;
    /** What else holds once provisioned (a control plane: its member is joining). */
    post?: ExpectedState;
  },
): DraftStep {
  const t = c.node;
  const provisioned: ExpectedState = { ...c.post, machines: [{ node: t, state: 'provisioned' }] };
  return draft<'provision'>({
    kind: 'provision',
    subject: c.subject,
    title: `Provision Talos ${c.role === 'controlplane' ? 'control plane' : 'worker'} ${nodeLabel(t)}${t.address ? ` at ${t.address}` : ''}`,
    target: { node: t, address: t.address },
    params: {
      node: t,
      role: c.role,
      provisioner: c.provisioner,
      talosVersion: c.talosVersion,
      machineConfig: c.machineConfig.kind === 'kit' ? c.machineConfig.file : null,
    },
    expect: { ...c.pre, nodes: nodeState(t, { exists: false }) },
    action: {
      summary:
        c.role === 'controlplane'
          ? `Boot a Talos ${c.talosVersion} control plane with its complete machine config from the kit; it joins etcd by itself as a learner`
          : `Boot a Talos ${c.talosVersion} worker with its complete machine config from the kit (its pool's labels and taints included)`,
      performer: 'provisioner',
      commands: provisionCmds({
        node: t,
        role: c.role,
        provisioner: c.provisioner,
        talosVersion: c.talosVersion,
        machineConfig: c.machineConfig,
      }),
    },
    verify: {
      expect: provisioned,
      commands: [cmd(talosctl(addressArg(t), 'version'), 'the Talos API answers')],
    },
    timeoutSeconds: TIMEOUTS.provision[c.provisioner],
    destructive: false,
    undo: undoWith(
      `Reset ${nodeLabel(t)}${c.role === 'controlplane' ? ' (Talos leaves etcd itself)' : ''}, then delete its Node`,
      [
        cmd(talosctl(addressArg(t), 'reset --graceful')),
        cmd(kubectl(`delete node ${nodeArg(t)} --ignore-not-found`)),
      ],
    ),
    idempotencyCheck: doneWhen(
      `the Talos node answers on its API (port 50000), or its Node${c.role === 'controlplane' ? ' or etcd member' : ''} already exists`,
      { machines: provisioned.machines },
      // A half-created machine is invisible from the cluster: a second one could take the same name.
      c.provisioner === 'manual' ? 'redo' : 'stop',
    ),
    notes: machineNotes(t, c.provisioner, c.machineConfig),
    ...placement(c),
  });
}

/** How a new machine is named, and the machine config it boots when the kit has none. */
function machineNotes(t: TalosNodeRef, provisioner: Provisioner, config: MachineConfigChoice): string[] {
  return [
    t.name === null && provisioner === 'capi'
      ? 'hostname: Cluster API names the node after its infrastructure machine (hostname.source InfrastructureName)'
      : t.name === null
        ? `hostname: the one Talos gives the machine (stable, from its machine id); ferry takes the name of a new Talos Node that registers and no other replacement took`
        : `hostname ${nodeLabel(t)}: never the name of a live kubeadm node or etcd member (a joining Talos control plane removes a member named like its hostname)`,
    // Cluster API renders configs itself; the other provisioners boot the kit's file.
    ...(config.kind === 'none' && provisioner !== 'capi'
      ? [`machine config: none to apply, ${config.why}`]
      : []),
  ];
}

/** One machine of a worker batch's request. */
export interface BatchMachine {
  subject: string;
  node: TalosNodeRef;
  machineConfig: MachineConfigChoice;
  /** What must hold before it is asked for (replace: the old machine is off). */
  pre?: ExpectedState;
}

/**
 * A worker batch's provisioning: one `provision-request` that asks for every machine at once,
 * then a `provision-detect` per machine (run side by side) that binds its Node as it registers.
 */
export function provisionBatchSteps(c: {
  subject: string;
  batch: number;
  provisioner: Provisioner;
  talosVersion: string;
  machines: readonly BatchMachine[];
}): DraftStep[] {
  const role = 'worker' as const;
  const params = (m: BatchMachine) => ({
    node: m.node,
    role,
    provisioner: c.provisioner,
    talosVersion: c.talosVersion,
    machineConfig: m.machineConfig.kind === 'kit' ? m.machineConfig.file : null,
  });
  const provisioned = (nodes: readonly TalosNodeRef[]): ExpectedState => ({
    machines: nodes.map((node) => ({ node, state: 'provisioned' as const })),
  });
  const nodes = c.machines.map((m) => m.node);
  const pre: ExpectedState = {
    machines: c.machines.flatMap((m) => m.pre?.machines ?? []),
    nodes: nodes.flatMap((t) => nodeState(t, { exists: false }) ?? []),
  };
  const request = draft<'provision-request'>({
    kind: 'provision-request',
    subject: c.subject,
    title: `Provision ${c.machines.length} Talos worker(s) at once: ${nodes.map(nodeLabel).join(', ')}`,
    target: { node: nodes[0]! },
    params: { machines: c.machines.map(params) },
    expect: pre,
    action: {
      summary: `Ask for every Talos ${c.talosVersion} worker of the batch at once (its pool's labels and taints in its config); they boot side by side`,
      performer: 'provisioner',
      commands: c.machines.flatMap((m) =>
        provisionCmds({
          node: m.node,
          role,
          provisioner: c.provisioner,
          talosVersion: c.talosVersion,
          machineConfig: m.machineConfig,
        }),
      ),
    },
    // Each machine's own detection step verifies it; asking is all this step does.
    verify: { expect: {}, commands: [] },
    timeoutSeconds: TIMEOUTS.provision[c.provisioner],
    destructive: false,
    undo: undoWith(
      'Reset every machine of the batch that came up, then delete its Node',
      nodes.flatMap((t) => [
        cmd(talosctl(addressArg(t), 'reset --graceful')),
        cmd(kubectl(`delete node ${nodeArg(t)} --ignore-not-found`)),
      ]),
    ),
    idempotencyCheck: doneWhen(
      'every machine of the batch answers on its Talos API (port 50000), or its Node already exists',
      provisioned(nodes),
      // Asking again is safe where the provisioner counts what exists (a MachineDeployment's
      // Machines, a person's machines); a command that creates a VM would create a second one.
      c.provisioner === 'manual' || c.provisioner === 'capi' ? 'redo' : 'stop',
    ),
    notes: [
      c.provisioner === 'capi'
        ? "one patch per pool: its MachineDeployment's replicas up by the batch's machines in it (never down)"
        : c.provisioner === 'manual'
          ? 'every machine of the batch at once: boot them side by side; ferry binds each Node as it registers'
          : 'every machine of the batch at once (exec: side by side, at most --provision-concurrency commands)',
      ...new Set(c.machines.flatMap((m) => machineNotes(m.node, c.provisioner, m.machineConfig))),
    ],
    batch: c.batch,
  });
  const detects = c.machines.map((m) => {
    const t = m.node;
    const done = provisioned([t]);
    return draft<'provision-detect'>({
      kind: 'provision-detect',
      subject: m.subject,
      title: `Bind the Talos worker ${nodeLabel(t)} as it registers`,
      target: { node: t, address: t.address },
      params: params(m),
      expect: {},
      action: {
        summary: 'Wait for the machine asked for to register its Node; record its name and address',
        performer: 'provisioner',
        commands: [cmd(kubectl('get nodes -o wide -w'), 'until the new Talos Node is listed (Ctrl-C then)')],
      },
      verify: {
        expect: done,
        commands: [cmd(talosctl(addressArg(t), 'version'), 'the Talos API answers')],
      },
      timeoutSeconds: TIMEOUTS.provision[c.provisioner],
      destructive: false,
      undo: noUndo('nothing changed by waiting'),
      idempotencyCheck: doneWhen(`the Talos node ${nodeLabel(t)} answers or its Node exists`, done, 'redo'),
      batch: c.batch,
    });
  });
  return [request, ...detects];
}

export function waitReadyStep(c: Common & { node: NodeRef }): DraftStep {
  const ready: ExpectedState = { ...c.pre, nodes: nodeState(c.node, { exists: true, ready: true }) };
  return draft<'wait-node-ready'>({
    kind: 'wait-node-ready',
    subject: c.subject,
    title: `Wait for Node ${nodeLabel(c.node)} to be Ready`,
    target: { node: c.node },
    params: { node: c.node },
    expect: { ...c.pre },
    action: {
      summary: 'The Talos kubelet registers the Node; the CNI makes it Ready',
      performer: 'ferry',
      commands: [waitReadyCmd(c.node, TIMEOUTS.nodeReady)],
    },
    verify: { expect: ready, commands: [cmd(kubectl(`get node ${nodeArg(c.node)} -o wide`))] },
    timeoutSeconds: TIMEOUTS.nodeReady,
    destructive: false,
    undo: noUndo('nothing changed by waiting'),
    idempotencyCheck: doneWhen(`Node ${nodeLabel(c.node)} is Ready`, ready, 'redo'),
    ...placement(c),
  });
}

export function cordonStep(c: Common & { node: KubeadmNodeRef }): DraftStep {
  const { node } = c;
  const cordoned: ExpectedState = { nodes: nodeState(node, { exists: true, cordoned: true }) };
  return draft<'cordon'>({
    kind: 'cordon',
    subject: c.subject,
    title: `Cordon ${node.name}`,
    target: { node },
    params: { node },
    expect: { ...c.pre, nodes: nodeState(node, { exists: true }) },
    action: {
      summary: 'No new pods on the old node',
      performer: 'ferry',
      commands: [cmd(kubectl(`cordon ${nodeArg(node)}`))],
    },
    verify: {
      expect: cordoned,
      commands: [cmd(kubectl(`get node ${nodeArg(node)}`), 'STATUS shows SchedulingDisabled')],
    },
    timeoutSeconds: TIMEOUTS.cordon,
    destructive: false,
    undo: undoWith('Uncordon it (a run that stops restores the cordon state it recorded)', [
      cmd(kubectl(`uncordon ${nodeArg(node)}`)),
    ]),
    idempotencyCheck: doneWhen(`${node.name} is unschedulable`, cordoned, 'redo'),
    ...placement(c),
  });
}

export function drainedState(node: NodeRef): ExpectedState {
  return { nodes: nodeState(node, { exists: true, cordoned: true, drained: true }) };
}

export function drainStep(
  c: Common & {
    node: KubeadmNodeRef;
    info: { pdbs: PdbRef[]; pods: number };
    timeoutSeconds: number;
    /** PDBs ("ns/name") whose workload --surge-replicas scales up before this drain. */
    surged?: ReadonlySet<string>;
  },
): DraftStep {
  const { node, info } = c;
  const drained = drainedState(node);
  const name = (p: PdbRef) => `${p.namespace}/${p.name}`;
  const zero = info.pdbs.filter((p) => p.disruptionsAllowed === 0);
  const blocking = zero.filter((p) => !c.surged?.has(name(p)));
  const scaled = zero.filter((p) => c.surged?.has(name(p)));
  const notes = [
    ...(blocking.length > 0
      ? [
          `PodDisruptionBudget(s) allowing no disruption at snapshot time: ${blocking.map(name).join(', ')}; this drain waits on them and stops at its timeout naming the budget`,
        ]
      : []),
    ...(scaled.length > 0
      ? [
          `PodDisruptionBudget(s) ${scaled.map(name).join(', ')} allowed no disruption at snapshot time: their workload was scaled up by one before this batch (--surge-replicas)`,
        ]
      : []),
  ];
  return draft<'drain'>({
    kind: 'drain',
    subject: c.subject,
    title: `Drain ${node.name} (Eviction API, PodDisruptionBudgets respected)`,
    target: { node },
    params: {
      node,
      evictionOnly: true,
      ignoreDaemonSets: true,
      deleteEmptyDirData: true,
      pdbs: info.pdbs,
      pods: info.pods,
    },
    expect: { ...c.pre, nodes: nodeState(node, { exists: true, cordoned: true }) },
    action: {
      summary: `Evict the ${info.pods} pod(s) the Eviction API may move; never delete a pod, never force`,
      performer: 'ferry',
      commands: [drainCmd(node, c.timeoutSeconds, true)],
    },
    verify: {
      expect: drained,
      commands: [
        cmd(
          kubectl(`get pods -A --field-selector spec.nodeName=${nodeArg(node)} -o wide`),
          'only DaemonSet and mirror pods left',
        ),
      ],
    },
    timeoutSeconds: c.timeoutSeconds,
    destructive: false,
    undo: undoWith('Uncordon the node; evicted pods were rescheduled elsewhere and stay there', [
      cmd(kubectl(`uncordon ${nodeArg(node)}`)),
    ]),
    idempotencyCheck: doneWhen(`no evictable pod left on ${node.name}`, drained, 'redo'),
    ...(notes.length > 0 ? { notes } : {}),
    ...placement(c),
  });
}

export function decommissionStep(
  c: Common & { node: KubeadmNodeRef; provisioner: Provisioner; role: Role; comesBack: boolean },
): DraftStep {
  const { node } = c;
  const down: ExpectedState = { machines: [{ node, state: 'decommissioned' }] };
  const wipes =
    c.role === 'controlplane'
      ? [
          '/etc/kubernetes (kubeconfigs, static pod manifests, pki/ with the CA keys)',
          '/var/lib/etcd',
          '/var/lib/kubelet',
        ]
      : ['/etc/kubernetes (kubelet kubeconfig, CA certificate)', '/var/lib/kubelet'];
  return draft<'decommission'>({
    kind: 'decommission',
    subject: c.subject,
    title: `Decommission ${node.name}`,
    target: { node, address: node.address },
    params: { node, provisioner: c.provisioner, wipes },
    expect: { ...c.pre, ...drainedState(node) },
    action: {
      summary: `Reset and power off the kubeadm machine${c.comesBack ? '; it comes back as Talos at the same address' : ''}`,
      performer: c.provisioner === 'exec' ? 'provisioner' : 'operator',
      commands: decommissionCmds(node, c.provisioner === 'exec' ? 'exec' : 'manual', c.role),
    },
    verify: {
      expect: down,
      commands: [
        cmd(`nc -z -w 2 ${addressArg(node)} 10250 && echo still-up || echo down`, 'kubelet port closed'),
      ],
    },
    timeoutSeconds: TIMEOUTS.decommission[c.provisioner],
    destructive: true,
    undo: noUndo(
      c.role === 'controlplane'
        ? 'the kubeadm state on the machine is wiped; to go back, build a new kubeadm control plane and join it'
        : 'the kubeadm state on the machine is wiped; to go back, join a new kubeadm worker',
    ),
    idempotencyCheck: doneWhen(
      `nothing answers on ${node.address ?? node.name}'s kubelet port (10250)${c.role === 'controlplane' ? ', etcd (2379) or apiserver' : ''}`,
      down,
      'redo',
    ),
    ...placement(c),
  });
}

export function deleteNodeStep(c: Common & { node: KubeadmNodeRef }): DraftStep {
  const { node } = c;
  const gone: ExpectedState = { nodes: nodeState(node, { exists: false }) };
  return draft<'delete-node'>({
    kind: 'delete-node',
    subject: c.subject,
    title: `Delete Node ${node.name}`,
    target: { node },
    params: { node },
    expect: {
      ...c.pre,
      machines: [{ node, state: 'decommissioned' }],
      nodes: nodeState(node, { exists: true, cordoned: true }),
    },
    action: {
      summary: 'Remove the Node object of the old machine',
      performer: 'ferry',
      commands: [cmd(kubectl(`delete node ${nodeArg(node)}`))],
    },
    verify: { expect: gone, commands: [cmd(kubectl(`get node ${nodeArg(node)}`), 'NotFound')] },
    timeoutSeconds: TIMEOUTS.deleteNode,
    destructive: true,
    undo: noUndo('the machine is gone; its kubelet cannot register the Node again'),
    idempotencyCheck: doneWhen(`Node ${node.name} does not exist`, gone, 'redo'),
    ...placement(c),
  });
}
