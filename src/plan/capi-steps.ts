/**
 * The two Cluster API steps of a capi plan, carried out by ferry against the management cluster
 * (`ferry run --provisioner capi --mgmt-kubeconfig FILE`): adoption at the end of phase 1, before
 * the first Talos Machine, and the hand-over in after-care, once no kubeadm member remains. Their
 * runbook commands are the kubectl an operator would type instead (src/capi/kubectl-commands.ts);
 * without a kit the names are placeholders, and the run refuses the steps.
 */
import { capiKubectl, MGMT_KUBECTL } from '../capi/kubectl-commands.js';
import type { CapiNames } from '../kit/capi-names.js';
import { KIT } from '../knowledge/kit-paths.js';
import { cmd, sq } from './commands.js';
import type { Command } from './expected-state.js';
import type { DraftStep } from './model.js';
import { draft, noUndo, TIMEOUTS } from './steps.js';

/** How long the etcd member list must stay whole after the hand-over. */
export const CAPI_SETTLE_SECONDS = 120;

const names = (n: CapiNames | null) => ({
  ns: n?.namespace ?? '<NAMESPACE>',
  cluster: n?.cluster ?? '<CLUSTER>',
  tcp: n?.controlPlane ?? '<TCP>',
});

export function capiAdoptStep(kit: string | null, n: CapiNames | null): DraftStep {
  const { ns, cluster, tcp } = names(n);
  const k = MGMT_KUBECTL;
  const kitArg = kit === null ? '<KIT>' : sq(kit);
  return draft<'capi-adopt'>({
    kind: 'capi-adopt',
    subject: 'cluster',
    title: `Cluster API: adopt the cluster into the management cluster (${ns}/${cluster}), the TalosControlPlane paused`,
    target: {},
    params: { kit, names: n },
    expect: {},
    action: {
      summary:
        "Apply the kit's Cluster API objects in the order that keeps Cluster API's controllers off the running cluster, verifying each: namespace, the PKI Secrets, the Cluster paused, the infrastructure cluster and templates, the TalosControlPlane with 0 replicas and paused, its status.bootstrapped, the MachineDeployments with 0 replicas and the preflight skip, the <cluster>-kubeconfig Secret the paused provider would write (a client certificate minted from the cluster's CA), the Secrets owned by the Cluster, the TalosControlPlane's initialized status (the field core Cluster API reads for ControlPlaneInitialized), the Cluster unpaused and touched so that it reads that status: without the Secret and the status no Machine gets its Node. The TalosControlPlane stays paused while kubeadm etcd members exist: its etcd audit would remove them",
      performer: 'ferry',
      commands: [
        cmd(
          `ferry capi adopt ${kitArg} --mgmt-kubeconfig "$MGMT_KUBECONFIG" --dry-run`,
          'prints every kubectl command of the adoption not yet done, in order; without --dry-run it applies and verifies them',
        ),
        cmd(`${k} create -f ${kit === null ? '<KIT>' : kit}/${KIT.capiSecrets}`, 'the PKI Secrets first'),
        cmd(
          capiKubectl.bootstrapped(k, ns, tcp),
          'before any control-plane Machine exists: otherwise it may bootstrap a second etcd',
        ),
        cmd(capiKubectl.pauseTcp(k, ns, tcp), 'stays paused while a kubeadm etcd member exists'),
      ],
    },
    verify: {
      expect: {},
      commands: [cmd(capiKubectl.tcpState(k, ns, tcp), 'PAUSED true, BOOTSTRAPPED true')],
    },
    timeoutSeconds: TIMEOUTS.applyFile,
    destructive: false,
    undo: noUndo(
      'the objects stay in the management cluster, paused and at 0 replicas: they change nothing in the running cluster; delete them with kubectl if the migration is abandoned',
    ),
    idempotencyCheck: {
      description: 'adoption skips every step the management cluster already shows',
      doneWhen: {},
      ifNotDone: 'redo',
    },
    notes: [
      'a second run changes nothing and says so',
      `the kit's objects are validated against the Cluster API CRDs before anything is sent`,
    ],
  });
}

export function capiHandoverStep(kit: string | null, n: CapiNames | null, replicas: number): DraftStep {
  const { ns, cluster, tcp } = names(n);
  const k = MGMT_KUBECTL;
  return draft<'capi-handover'>({
    kind: 'capi-handover',
    subject: 'cluster',
    title: `Cluster API: hand the control planes to the TalosControlPlane (${replicas} replicas), no etcd member lost`,
    target: {},
    params: { kit, names: n, replicas, settleSeconds: CAPI_SETTLE_SECONDS },
    expect: {},
    action: {
      summary: `Only when no kubeadm etcd member remains and the TalosControlPlane asks for exactly the ${replicas} Talos control planes: unpause it (and the Cluster, were it still paused), wait until it is ready with ${replicas} of ${replicas} replicas ready, then watch the etcd member list for ${CAPI_SETTLE_SECONDS} s: a member its etcd audit removes stops the run, and ferry pauses it again`,
      performer: 'ferry',
      commands: [
        cmd(
          'etcdctl member list -w table > members-before.txt',
          'with the etcd flags of the setup; no kubeadm member may be listed',
        ),
        cmd(capiKubectl.unpauseTcp(k, ns, tcp)),
        cmd(capiKubectl.unpauseCluster(k, ns, cluster), 'a no-op when adoption already unpaused it'),
        cmd(capiKubectl.tcpState(k, ns, tcp), `REPLICAS, MACHINES and READY all ${replicas}`),
        cmd(
          `sleep ${CAPI_SETTLE_SECONDS}; etcdctl member list -w table | diff members-before.txt -`,
          'no difference: no member was removed',
        ),
      ],
    },
    verify: {
      expect: {},
      commands: [
        cmd(`clusterctl describe cluster ${sq(cluster)} -n ${sq(ns)} --kubeconfig "$MGMT_KUBECONFIG"`),
      ],
    },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: false,
    undo: {
      possible: true,
      summary: 'Pause the TalosControlPlane again',
      commands: [cmd(capiKubectl.pauseTcp(k, ns, tcp))],
    },
    idempotencyCheck: {
      description: 'the hand-over checks the members and the TalosControlPlane again',
      doneWhen: {},
      ifNotDone: 'redo',
    },
    notes: [
      'back up the management cluster (clusterctl move --to-directory) only now that nothing is paused and it is steady',
    ],
  });
}

/** The step with the runbook's commands for its action replaced. */
function withCommands<S extends DraftStep>(s: S, commands: Command[]): S {
  return { ...s, action: { ...s.action, commands } };
}

/**
 * A capi plan's provision steps, in run order, get the commands an operator types instead of ferry
 * run: a control plane is `ferry capi add-control-plane` (the Machine made with the
 * TalosControlPlane kept paused, replicas to the count of Talos control planes so far, never
 * down), a worker batch each pool's MachineDeployment to the count of its replacements so far; then the
 * Machines are watched until the new one has a nodeRef. Counts are absolute: typing a command
 * twice does not add a second machine.
 */
export function withCapiProvisionCommands(
  phases: DraftStep[][],
  n: CapiNames | null,
  kit: string | null = null,
): DraftStep[][] {
  const { ns, cluster } = names(n);
  const k = MGMT_KUBECTL;
  let cps = 0;
  const perPool = new Map<string, number>();
  const poolOf = (replaces: string) =>
    n?.machineDeployments.find((d) => d.replaces.includes(replaces))?.name ??
    `<MACHINEDEPLOYMENT_REPLACING_${replaces.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}>`;
  // A batch's request: each pool it touches to the count of its replacements so far, in one command.
  const requestCmds = (s: Extract<DraftStep, { kind: 'provision-request' }>) => {
    const pools = new Map<string, string[]>();
    for (const m of s.params.machines) {
      const pool = poolOf(m.node.replaces);
      pools.set(pool, [...(pools.get(pool) ?? []), m.node.replaces]);
    }
    return [...pools].flatMap(([pool, replaced]) => {
      const count = (perPool.get(pool) ?? 0) + replaced.length;
      perPool.set(pool, count);
      return [
        cmd(
          capiKubectl.scaleMachineDeployment(k, ns, pool, count),
          `${replaced.length} more worker(s) of the pool, for ${replaced.join(', ')}; never lower: Cluster API would pick a Machine to delete`,
        ),
      ];
    });
  };
  return phases.map((steps) =>
    steps.map((s) => {
      if (s.kind === 'provision-request') return withCommands(s, requestCmds(s));
      if (s.kind === 'provision-detect')
        return withCommands(s, [
          cmd(
            capiKubectl.watchMachines(
              k,
              ns,
              `cluster.x-k8s.io/deployment-name=${poolOf(s.params.node.replaces)}`,
            ),
            `until a new Machine of the pool has a NODENAME (Ctrl-C then); that Node replaces ${s.params.node.replaces}`,
          ),
        ]);
      if (s.kind !== 'provision') return s;
      const replaces = s.params.node.replaces;
      if (s.params.role === 'controlplane') {
        cps += 1;
        return withCommands(s, [
          cmd(
            `ferry capi add-control-plane ${kit === null ? '<KIT>' : sq(kit)} --mgmt-kubeconfig "$MGMT_KUBECONFIG" --replicas ${cps}`,
            `Talos control plane ${cps}, for ${replaces}: the TalosControlPlane stays paused (unpaused with Machines that have Nodes, it removes the kubeadm etcd members), ferry creates the Machine as it would`,
          ),
          cmd(
            capiKubectl.watchMachines(
              k,
              ns,
              `cluster.x-k8s.io/cluster-name=${cluster},cluster.x-k8s.io/control-plane`,
            ),
            'until the new Machine has a NODENAME (Ctrl-C then)',
          ),
        ]);
      }
      return s;
    }),
  );
}
