/**
 * The commands an operator would type for each step: the runbook. Plain strings built from facts;
 * placeholders in <ANGLE_BRACKETS> stand for what only exists at run time (a new node's address).
 *
 * Conventions, set up once by `setupCommands` (test-infra.md pitfall 7: etcdctl 3.5 aborts when
 * ETCDCTL_ENDPOINTS and --endpoints are both set, so endpoints are always passed explicitly):
 * ETCDCTL_CACERT/CERT/KEY for the etcd client, ETCD_ENDPOINTS for the current member client URLs,
 * KUBECONFIG for an admin kubeconfig, TALOSCONFIG for the kit's talosconfig (every talosctl command
 * passes it with --talosconfig and names its endpoint with -e, so none relies on a context's
 * defaults), and for scripted steps PROVISION_CMD, DECOMMISSION_CMD and LB_CMD (the same commands
 * `ferry run` takes), called with NODE_NAME, ROLE, ADDRESS … set. Paths are relative to the
 * directory `ferry plan` ran in, where the kit path given with --kit is.
 */
import type { Provisioner } from '../facts/target.js';
import type { Command, KubeadmMemberRef, MemberRef, NodeRef, TalosNodeRef } from './expected-state.js';
import type { MachineConfigChoice, OwnConfigBuild } from './kit.js';
import { memberLabel, nodeLabel } from './model.js';

const SAFE = /^[A-Za-z0-9_./:@%+=,-]+$/;

/** Single-quotes a shell word unless it is obviously safe. */
export function sq(word: string): string {
  return SAFE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export const WORKSTATION = { kind: 'workstation' } as const;

export function onNode(node: string): Command['where'] {
  return { kind: 'node', node };
}

export function cmd(run: string, note?: string, where: Command['where'] = WORKSTATION): Command {
  return note === undefined ? { run, where } : { run, where, note };
}

/** A shell-safe placeholder for a value known only at run time. */
export function placeholder(what: string): string {
  return `<${what.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}>`;
}

export function nodeArg(n: NodeRef): string {
  return n.kind === 'kubeadm' || n.name !== null
    ? sq(nodeLabel(n))
    : placeholder(`node replacing ${n.replaces}`);
}

export function addressArg(n: NodeRef): string {
  if (n.address) return n.address;
  return placeholder(
    n.kind === 'talos' ? `address of ${n.name ?? `node replacing ${n.replaces}`}` : `address of ${n.name}`,
  );
}

export function memberNameArg(m: MemberRef): string {
  return m.kind === 'kubeadm' || m.name !== null
    ? sq(memberLabel(m))
    : placeholder(`member replacing ${m.replaces}`);
}

// ---------------------------------------------------------------------------------------------
// Setup

export function setupCommands(opts: {
  etcdEndpoints: string[];
  kubeconfig?: string;
  /** The kit's talosconfig, as the runbook names it; null without a kit that has one. */
  talosconfig?: string | null;
}): Command[] {
  return [
    cmd(
      'export ETCDCTL_CACERT=pki/etcd/ca.crt ETCDCTL_CERT=pki/etcd/healthcheck-client.crt ETCDCTL_KEY=pki/etcd/healthcheck-client.key',
      'etcd client certificate: copy these three files off a kubeadm control plane now (Talos keeps the same etcd CA, so they keep working); they are secrets, wiped in after-care',
    ),
    cmd(
      `export ETCD_ENDPOINTS=${opts.etcdEndpoints.join(',') || placeholder('etcd client urls')}`,
      'current members; add each Talos member once it joined, drop each removed one',
    ),
    cmd(
      `export KUBECONFIG=${opts.kubeconfig ?? 'admin.conf'}`,
      'an admin kubeconfig that talks to the control-plane endpoint',
    ),
    cmd(
      `export TALOSCONFIG=${opts.talosconfig ? sq(opts.talosconfig) : placeholder('talosconfig')}`,
      opts.talosconfig
        ? "the kit's talosconfig: admin access to the new nodes' Talos API (a secret, wiped in after-care); paths here are relative to the directory ferry plan ran in"
        : "talos/talosconfig of the kit `ferry generate` writes (admin access to the new nodes' Talos API)",
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// Talos

/**
 * talosctl against one node's own Talos API: its address as endpoint and node, so the command
 * works whatever endpoints the talosconfig lists (none, until the Talos control planes exist).
 */
export function talosctl(address: string, args: string): string {
  return `talosctl --talosconfig "$TALOSCONFIG" -e ${address} -n ${address} ${args}`;
}

/**
 * The same config built from the patches, as `talosctl gen config` makes it (no node is
 * contacted, so no talosconfig). Writes `output` in the working directory.
 */
export function genConfigCmd(b: OwnConfigBuild): string {
  return [
    `talosctl gen config ${sq(b.clusterName)} ${sq(b.endpoint)}`,
    `--with-secrets ${sq(b.secrets)}`,
    `--talos-version ${b.talosVersion}`,
    `--kubernetes-version ${b.kubernetesVersion}`,
    `--output-types ${b.role}`,
    ...b.patches.map((p) => `--config-patch ${sq(`@${p}`)}`),
    `--output ${sq(b.output)}`,
  ].join(' ');
}

// ---------------------------------------------------------------------------------------------
// etcd

export const etcdctl = (args: string, endpoints = '"$ETCD_ENDPOINTS"') =>
  `etcdctl --endpoints ${endpoints} ${args}`;

export function memberListCmd(note?: string): Command {
  return cmd(
    etcdctl('member list -w table'),
    note ?? 'IDs in hex; IS LEARNER must be false for every member',
  );
}

export function healthCmd(): Command {
  return cmd(etcdctl('endpoint health --cluster -w table'), 'every member listed, every one healthy');
}

export function statusCmd(): Command {
  return cmd(
    etcdctl('endpoint status --cluster -w table'),
    'one leader; RAFT APPLIED INDEX close on every member',
  );
}

/** Shell variable holding a member's hex id, looked up by name (IDs of new members are not known in advance). */
export function memberIdVar(m: MemberRef): { name: string; lookup: Command } {
  const v = `ID_${memberLabel(m)
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase()}`;
  return {
    name: v,
    lookup: cmd(
      `${v}=$(${etcdctl('member list')} | awk -F', ' '$3 == "${memberNameArg(m).replace(/^'|'$/g, '')}" {print $1}')`,
      `hex member id of ${memberLabel(m)}`,
    ),
  };
}

/** How to reach a member's etcd client port from the workstation. */
export function memberEndpoint(m: MemberRef, address: string | null): string {
  if (m.kind === 'kubeadm' && m.clientURL) return m.clientURL;
  return `https://${address ?? placeholder(`address of ${memberLabel(m)}`)}:2379`;
}

export function moveLeaderCmds(from: MemberRef, fromAddress: string | null, to: MemberRef): Command[] {
  const target = memberIdVar(to);
  return [
    target.lookup,
    cmd(
      etcdctl(`move-leader "$${target.name}"`, memberEndpoint(from, fromAddress)),
      `sent to ${memberLabel(from)}, the current leader (MoveLeader fails with "not leader" anywhere else)`,
    ),
  ];
}

/** MemberRemove through another member: a Talos one via talosctl when there is one, else etcdctl. */
export function removeMemberCmds(
  member: KubeadmMemberRef,
  via: { member: MemberRef; address: string | null } | null,
): Command[] {
  if (via && via.member.kind === 'talos') {
    return [
      cmd(
        talosctl(
          via.address ?? placeholder(`address of ${memberLabel(via.member)}`),
          `etcd remove-member ${member.idHex}`,
        ),
        `removes ${member.name} (id ${member.idHex}) through ${memberLabel(via.member)}`,
      ),
    ];
  }
  const endpoint = via
    ? memberEndpoint(via.member, via.address)
    : placeholder('client url of another member');
  return [
    cmd(
      etcdctl(`member remove ${member.idHex}`, endpoint),
      `through ${via ? memberLabel(via.member) : 'another member'}, never ${member.name} itself; retry "unhealthy cluster" after 5–10 s`,
    ),
  ];
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

export const kubectl = (args: string) => `kubectl ${args}`;

export function waitReadyCmd(n: NodeRef, timeoutSeconds: number): Command {
  return cmd(kubectl(`wait --for=condition=Ready node/${nodeArg(n)} --timeout=${timeoutSeconds}s`));
}

export function drainCmd(n: NodeRef, timeoutSeconds: number, deleteEmptyDir: boolean): Command {
  return cmd(
    kubectl(
      `drain ${nodeArg(n)} --ignore-daemonsets${deleteEmptyDir ? ' --delete-emptydir-data' : ''} --timeout=${timeoutSeconds}s`,
    ),
    // Without --force kubectl drain refuses a node with pods no controller owns, as ferry run does
    // unless --evict-bare-pods: the printed command and the run agree on what is evicted.
    'kubectl drain evicts through the Eviction API and honours PodDisruptionBudgets; never add --disable-eviction. It refuses pods without a controller, as ferry run does: add --force only for the pods you accepted losing (ferry run --evict-bare-pods)',
  );
}

export function endpointReadyzCmd(endpointUrl: string): Command {
  return cmd(
    `for i in $(seq 10); do curl -sk -o /dev/null -w '%{http_code}\\n' ${endpointUrl}/readyz; sleep 1; done`,
    'every answer 200 (401/403 means an anonymous check: use the probe token from rbac/health-probe.yaml)',
  );
}

export function apiserverEndpointsCmd(): Command {
  return cmd(
    kubectl(
      "-n default get endpointslices -l kubernetes.io/service-name=kubernetes -o jsonpath='{.items[*].endpoints[*].addresses[*]}'",
    ),
    'addresses behind the in-cluster kubernetes Service',
  );
}

// ---------------------------------------------------------------------------------------------
// Provisioner and load balancer (scripted forms use the environment `ferry run` sets)

function env(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

export function provisionCmds(opts: {
  node: TalosNodeRef;
  role: 'controlplane' | 'worker';
  provisioner: Provisioner;
  talosVersion: string;
  machineConfig: MachineConfigChoice;
}): Command[] {
  const { node, role } = opts;
  const vars = {
    NODE_NAME: nodeArg(node),
    ROLE: role,
    ADDRESS: addressArg(node),
    REPLACES: sq(node.replaces),
    TALOS_VERSION: opts.talosVersion,
  };
  const choice = opts.machineConfig;
  switch (opts.provisioner) {
    case 'manual': {
      const file = choice.kind === 'kit' ? sq(choice.file) : placeholder(`${role} machine config`);
      return [
        cmd(
          `# boot a Talos ${opts.talosVersion} machine (maintenance mode) for ${nodeLabel(node)} at ${addressArg(node)}, ${node.kind === 'talos' && node.name === null ? "keeping Talos's own hostname" : `hostname ${nodeLabel(node)}`}; set machine.install.disk in the config first when it installs to disk`,
        ),
        cmd(
          `talosctl --talosconfig "$TALOSCONFIG" apply-config --insecure -n ${addressArg(node)} --file ${file}`,
          choice.kind === 'kit'
            ? `the complete config of this node (secrets + patches); ${role === 'controlplane' ? 'never talosctl bootstrap: the node joins the existing etcd' : 'it joins with the bootstrap token in it'}`
            : `no complete config: ${choice.why}`,
        ),
        ...ownConfigCmds(choice),
      ];
    }
    case 'exec':
      return [cmd(`${env(vars)} sh -c "$PROVISION_CMD"`, 'the command given to ferry run --provision-cmd')];
    case 'capi':
      return [
        cmd(
          `# create the Machine, infrastructure machine and TalosConfig for the ${role} replacing ${node.replaces} (the TalosControlPlane stays paused)`,
        ),
        cmd(
          `kubectl --kubeconfig "$MGMT_KUBECONFIG" get machines -l cluster.x-k8s.io/${role === 'controlplane' ? 'control-plane' : 'deployment-name'} -o wide`,
          'watch the Machine get a nodeRef',
        ),
      ];
  }
}

/** The alternative to the kit's complete config: building it yourself from the patches. */
function ownConfigCmds(choice: MachineConfigChoice): Command[] {
  if (choice.kind !== 'kit') return [];
  const b = choice.build;
  if (b.kind === 'refused') {
    return [
      cmd(
        `# build your own config instead (talosctl gen config --with-secrets … ${b.patches.map((p) => `--config-patch @${p}`).join(' ')}): not with this kit, ${b.why}`,
      ),
    ];
  }
  return [
    cmd(
      `# or build your own config from the patches and apply ${b.args.output} instead of ${choice.file}: ${genConfigCmd(b.args)}`,
    ),
  ];
}

export function decommissionCmds(
  node: NodeRef,
  provisioner: Provisioner,
  role: 'controlplane' | 'worker',
): Command[] {
  if (provisioner === 'exec') {
    return [
      cmd(
        `${env({ NODE_NAME: nodeArg(node), ROLE: role, ADDRESS: addressArg(node) })} sh -c "$DECOMMISSION_CMD"`,
        'the command given to ferry run --decommission-cmd',
      ),
    ];
  }
  return [
    cmd(
      'kubeadm reset --force',
      'clears /etc/kubernetes and the kubelet state; an etcd error here is expected: the member is already gone',
      onNode(nodeLabel(node)),
    ),
    cmd(`# power ${nodeLabel(node)} off and wipe its disks: they hold a copy of the cluster CA keys`),
  ];
}

export function lbCmds(op: 'add' | 'remove', node: NodeRef, port: number, endpoint: string): Command[] {
  const where = `${addressArg(node)}:${port}`;
  return [
    cmd(
      `# ${op === 'add' ? 'add' : 'take'} ${where} (${nodeLabel(node)}) ${op === 'add' ? 'to' : 'out of'} the backends of ${endpoint}`,
    ),
    cmd(
      `${env({ LB_ACTION: op, NODE_NAME: nodeArg(node), ADDRESS: addressArg(node), PORT: String(port) })} sh -c "$LB_CMD"`,
      'scripted: the command given to ferry run --lb-cmd',
    ),
  ];
}
