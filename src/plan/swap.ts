/**
 * One control-plane swap, kubeadm → Talos, as typed steps (docs/design.md "Data flow"; etcd.md §2 "Recommended
 * order per CP swap"; test-infra.md for the pitfalls each step avoids).
 *
 * surge:   gate → provision → wait joined (N + 1 learner) → wait voter (N + 1) → Node Ready → LB add
 *          → LB remove old → cordon → drain → stop old apiserver → move leadership if it leads →
 *          remove old member through another member (N) → verify membership → decommission → delete Node
 * replace: gate (every *other* member healthy) → cordon → drain → LB remove → stop apiserver → move
 *          leadership → remove member (N − 1) → verify → decommission → delete Node → provision (same
 *          address) → wait joined → wait voter (N) → Node Ready → LB add
 *
 * The old apiserver leaves the `kubernetes` Service before its member goes: a kubeadm apiserver
 * talks only to its local member (cluster-api#2652; test-infra.md "Each stacked kube-apiserver").
 */
import type { Endpoint } from '../facts/model.js';
import type { Provisioner } from '../facts/target.js';
import {
  apiserverEndpointsCmd,
  cmd,
  endpointReadyzCmd,
  healthCmd,
  lbCmds,
  memberListCmd,
  moveLeaderCmds,
  onNode,
  removeMemberCmds,
  statusCmd,
} from './commands.js';
import type { EtcdModel } from './etcd-sim.js';
import type {
  EtcdHealth,
  KubeadmMemberRef,
  KubeadmNodeRef,
  MemberRef,
  TalosMemberRef,
  TalosNodeRef,
} from './expected-state.js';
import type { MachineConfigPicker } from './kit.js';
import { type DraftStep, memberLabel, nodeLabel, type PdbRef, type Strategy } from './model.js';
import {
  cordonStep,
  decommissionStep,
  deleteNodeStep,
  drainedState,
  drainStep,
  provisionStep,
  waitReadyStep,
} from './node-steps.js';
import {
  doneWhen,
  draft,
  GATE_STABLE_SECONDS,
  LB_SETTLE_SECONDS,
  nodeState,
  noUndo,
  TIMEOUTS,
  undoWith,
  withMember,
} from './steps.js';

export interface SwapContext {
  strategy: Strategy;
  provisioner: Provisioner;
  talosVersion: string;
  endpoint: Endpoint;
  /** False when the endpoint is a control plane's own address: there is no load balancer to edit. */
  lbInFront: boolean;
  etcd: EtcdModel;
  /** Replacement nodes by the kubeadm node they replace (addresses of Talos members). */
  talosNodes: ReadonlyMap<string, TalosNodeRef>;
  machineConfig: MachineConfigPicker;
  drainTimeoutSeconds: number;
  memberVoterSeconds: number;
  maxIndexLag: number;
  drainInfo: (node: string) => { pdbs: PdbRef[]; pods: number };
}

export interface ControlPlaneSwap {
  old: KubeadmNodeRef;
  apiserverPort: number;
  member: KubeadmMemberRef | null;
  replacement: TalosNodeRef;
  leaderAtSnapshot: boolean;
  /** The last kubeadm control plane (phase 4). */
  last: boolean;
}

const MANIFEST = '/etc/kubernetes/manifests/kube-apiserver.yaml';
const STOPPED = '/etc/kubernetes/ferry-stopped';

export function talosMember(n: TalosNodeRef): TalosMemberRef {
  return { kind: 'talos', replaces: n.replaces, name: n.name };
}

function addressOf(ctx: SwapContext, m: MemberRef): string | null {
  if (m.kind === 'talos') return ctx.talosNodes.get(m.replaces)?.address ?? null;
  return m.clientURL ? (/^https?:\/\/\[?([^\]/]+?)\]?:\d+/.exec(m.clientURL)?.[1] ?? null) : null;
}

/** Other voters, Talos members first: where leadership goes and what removals are sent through. */
function othersTalosFirst(ctx: SwapContext, except: MemberRef | null): MemberRef[] {
  const others = ctx.etcd
    .voters()
    .filter((m) => !(except && m.kind === except.kind && memberLabel(m) === memberLabel(except)));
  return [...others.filter((m) => m.kind === 'talos'), ...others.filter((m) => m.kind === 'kubeadm')];
}

/** The steps of one swap, in run order. Mutates `ctx.etcd` as the swap proceeds. */
export function controlPlaneSwap(ctx: SwapContext, swap: ControlPlaneSwap): DraftStep[] {
  const first = gate(ctx, swap);
  // The model is walked in run order: join then leave (surge), or leave then join (replace).
  if (ctx.strategy === 'surge') {
    const join = joinSteps(ctx, swap);
    return [first, ...join, ...leaveSteps(ctx, swap)];
  }
  const leave = leaveSteps(ctx, swap);
  return [first, ...leave, ...joinSteps(ctx, swap)];
}

function gate(ctx: SwapContext, swap: ControlPlaneSwap): DraftStep {
  const { old, member, replacement } = swap;
  const newMember = talosMember(replacement);
  // surge keeps N voters throughout (N → N+1 → N), replace drops to N − 1: no member but the one
  // being replaced may be unhealthy (etcd.md §2, Talos ValidateForUpgrade).
  const healthy: EtcdHealth = ctx.strategy === 'replace' && member ? { allExcept: member } : 'all';
  const etcd = withMember(ctx.etcd.expectation(healthy), newMember, 'absent');
  const expect = {
    etcd,
    nodes: nodeState(old, ctx.strategy === 'surge' ? { exists: true, ready: true } : { exists: true }),
    endpoint: { readyz: true } as const,
  };
  const n = ctx.etcd.voterCount();
  return draft<'gate'>({
    kind: 'gate',
    subject: old.name,
    title: `Gate before replacing ${old.name}: ${n} healthy voters, no learner`,
    target: { node: old, ...(member ? { member } : {}) },
    params: {
      reason:
        ctx.strategy === 'surge'
          ? 'learner-first: the new member joins while every member is healthy, so the cluster never drops below its failure tolerance'
          : `replace removes ${old.name} first: ${n - 1} voters tolerate no failure, so every other member must be healthy`,
      stableSeconds: GATE_STABLE_SECONDS,
    },
    expect,
    action: {
      summary: 'Observe only: etcd membership and health, the node, the API through the endpoint',
      performer: 'ferry',
      commands: [memberListCmd(), healthCmd(), statusCmd(), endpointReadyzCmd(ctx.endpoint.url)],
    },
    verify: { expect, commands: [] },
    timeoutSeconds: TIMEOUTS.gate,
    destructive: false,
    undo: noUndo('a gate changes nothing'),
    idempotencyCheck: doneWhen('a gate is observed again on resume', expect, 'redo'),
  });
}

function joinSteps(ctx: SwapContext, swap: ControlPlaneSwap): DraftStep[] {
  const { old, replacement: t } = swap;
  const tm = talosMember(t);
  const sim = ctx.etcd;
  const steps: DraftStep[] = [];
  const subject = old.name;

  // provision: afterwards Talos is adding its member (absent, learner or voter, depending on timing)
  const before = withMember(sim.expectation('all'), tm, 'absent');
  sim.provisioned(tm);
  steps.push(
    provisionStep({
      subject,
      node: t,
      role: 'controlplane',
      provisioner: ctx.provisioner,
      talosVersion: ctx.talosVersion,
      machineConfig: ctx.machineConfig('controlplane', old.name, t.name),
      pre: {
        etcd: before,
        ...(ctx.strategy === 'replace'
          ? { machines: [{ node: old, state: 'decommissioned' as const }] }
          : {}),
      },
      post: { etcd: sim.expectation('all') },
    }),
  );

  // wait until the member appears (learner), then until it promoted itself and caught up
  const joiningPre = { etcd: sim.expectation('all') };
  sim.joined(tm);
  const joined = { etcd: sim.expectation('all') };
  steps.push(
    draft<'wait-member-joined'>({
      kind: 'wait-member-joined',
      subject,
      title: `Wait for ${memberLabel(tm)} to join etcd as a learner`,
      target: { node: t, member: tm },
      params: { member: tm, node: t },
      expect: joiningPre,
      action: {
        // docs/knowledge/talos.md §4.8
        summary: 'Talos adds its member as a learner itself; ferry only watches',
        performer: 'ferry',
        commands: [memberListCmd(`${memberLabel(tm)} listed, IS LEARNER true (or already false)`)],
      },
      verify: { expect: joined, commands: [memberListCmd()] },
      timeoutSeconds: TIMEOUTS.memberJoin,
      destructive: false,
      undo: noUndo('nothing changed by waiting; undo the provision step instead'),
      idempotencyCheck: doneWhen(`${memberLabel(tm)} is in the member list`, joined, 'redo'),
    }),
  );

  sim.promoted(tm);
  const voter = {
    etcd: sim.expectation('all', { caughtUp: { member: tm, maxIndexLag: ctx.maxIndexLag } }),
  };
  steps.push(
    draft<'wait-member-voter'>({
      kind: 'wait-member-voter',
      subject,
      title: `Wait for ${memberLabel(tm)} to be a caught-up voter (${sim.voterCount()} voters)`,
      target: { node: t, member: tm },
      params: { member: tm, node: t, maxIndexLag: ctx.maxIndexLag },
      expect: joined,
      action: {
        summary:
          'Talos promotes its learner once it is in sync; ferry watches for the promotion, never performs it, and waits until every member is healthy',
        performer: 'ferry',
        commands: [memberListCmd(), statusCmd(), healthCmd()],
      },
      verify: { expect: voter, commands: [memberListCmd(), statusCmd(), healthCmd()] },
      timeoutSeconds: ctx.memberVoterSeconds,
      destructive: false,
      undo: noUndo('nothing changed by waiting; undo the provision step instead'),
      idempotencyCheck: doneWhen(
        `${memberLabel(tm)} is a voter within ${ctx.maxIndexLag} entries of the leader`,
        voter,
        'redo',
      ),
      notes: [
        'no other membership change until this holds: removing a member before its replacement caught up lost quorum in k0smotron#1481',
      ],
    }),
  );

  // the Node
  steps.push(waitReadyStep({ subject, node: t, pre: { etcd: sim.expectation('all') } }));
  const ready = { etcd: sim.expectation('all'), nodes: nodeState(t, { exists: true, ready: true }) };
  if (ctx.lbInFront) steps.push(lbStep(ctx, 'add', swap, ready));
  return steps;
}

function lbStep(
  ctx: SwapContext,
  op: 'add' | 'remove',
  swap: ControlPlaneSwap,
  pre: { etcd?: ReturnType<EtcdModel['expectation']> },
): DraftStep {
  const node = op === 'add' ? swap.replacement : swap.old;
  const address = node.address;
  const port = swap.apiserverPort;
  const backend = (inRotation: boolean) => [{ node, address, port, inRotation }];
  const after = { loadBalancer: backend(op === 'add'), endpoint: { readyz: true } as const };
  return draft<`lb-${typeof op}`>({
    kind: `lb-${op}`,
    subject: swap.old.name,
    title:
      op === 'add'
        ? `Add ${nodeLabel(node)} to the load balancer of ${ctx.endpoint.host}:${ctx.endpoint.port}`
        : `Take ${nodeLabel(node)} out of the load balancer of ${ctx.endpoint.host}:${ctx.endpoint.port}`,
    target: { node, address },
    params: {
      node,
      address,
      port,
      endpoint: `${ctx.endpoint.host}:${ctx.endpoint.port}`,
      settleSeconds: LB_SETTLE_SECONDS,
    },
    expect: { ...pre, loadBalancer: backend(op !== 'add') },
    action: {
      summary:
        op === 'add'
          ? 'Put the Talos apiserver behind the endpoint'
          : 'Stop new client connections reaching the old apiserver before anything else happens to it (kops: LB out before drain)',
      performer: 'load-balancer',
      commands: lbCmds(op, node, port, `${ctx.endpoint.host}:${ctx.endpoint.port}`),
    },
    verify: { expect: after, commands: [endpointReadyzCmd(ctx.endpoint.url)] },
    timeoutSeconds: TIMEOUTS.lb,
    destructive: false,
    undo: undoWith(
      op === 'add' ? 'Take it out of the backends again' : 'Put it back into the backends',
      lbCmds(op === 'add' ? 'remove' : 'add', node, port, `${ctx.endpoint.host}:${ctx.endpoint.port}`),
    ),
    idempotencyCheck: doneWhen(
      `${address ?? nodeLabel(node)}:${port} is ${op === 'add' ? 'in' : 'out of'} rotation`,
      { loadBalancer: backend(op === 'add') },
      'redo',
    ),
    notes: [
      `wait ${LB_SETTLE_SECONDS} s after the change: TCP health checks keep a backend in rotation for up to ~75 s`,
    ],
  });
}

function leaveSteps(ctx: SwapContext, swap: ControlPlaneSwap): DraftStep[] {
  const { old, member } = swap;
  const sim = ctx.etcd;
  const subject = old.name;
  const steps: DraftStep[] = [];
  // While the old member is still there, replace tolerates only that one being unhealthy.
  const healthy: EtcdHealth = ctx.strategy === 'replace' && member ? { allExcept: member } : 'all';
  const etcdNow = () => sim.expectation(healthy);

  const cordon = cordonStep({ subject, node: old, pre: { etcd: etcdNow() } });
  const drain = drainStep({
    subject,
    node: old,
    info: ctx.drainInfo(old.name),
    timeoutSeconds: ctx.drainTimeoutSeconds,
    pre: { etcd: etcdNow() },
  });
  const drained = drainedState(old);
  const lbRemove = ctx.lbInFront ? [lbStep(ctx, 'remove', swap, { etcd: etcdNow() })] : [];
  if (ctx.strategy === 'surge') steps.push(...lbRemove, cordon, drain);
  else steps.push(cordon, drain, ...lbRemove);

  const stopped = { apiservers: [{ node: old, serving: false }] };
  steps.push(
    draft<'stop-apiserver'>({
      kind: 'stop-apiserver',
      subject,
      title: `Stop the kubeadm apiserver on ${old.name}`,
      target: { node: old },
      params: { node: old, manifest: MANIFEST },
      expect: { etcd: etcdNow(), ...drained, apiservers: [{ node: old, serving: true }] },
      action: {
        summary:
          'Take the apiserver out of the in-cluster kubernetes Service before its local etcd member goes (it talks only to that member)',
        performer: 'operator',
        commands: [
          cmd(
            `mkdir -p ${STOPPED} && mv ${MANIFEST} ${STOPPED}/`,
            'the kubelet stops the static pod',
            onNode(old.name),
          ),
        ],
      },
      verify: { expect: stopped, commands: [apiserverEndpointsCmd()] },
      timeoutSeconds: TIMEOUTS.stopApiserver,
      destructive: false,
      undo: undoWith('Put the manifest back; the kubelet restarts the apiserver', [
        cmd(`mv ${STOPPED}/kube-apiserver.yaml ${MANIFEST}`, undefined, onNode(old.name)),
      ]),
      idempotencyCheck: doneWhen(
        `${old.address ?? old.name} is no longer behind the kubernetes Service`,
        stopped,
        'redo',
      ),
    }),
  );

  if (member) {
    const to = othersTalosFirst(ctx, member);
    const notLeader = { etcd: sim.expectation(healthy, { leader: { isNot: member } }) };
    const firstTo = to[0];
    steps.push(
      draft<'etcd-move-leader'>({
        kind: 'etcd-move-leader',
        subject,
        title: `Move etcd leadership off ${member.name} if it leads`,
        target: { node: old, member },
        params: { from: member, to, leaderAtSnapshot: swap.leaderAtSnapshot },
        condition: 'if-member-leads',
        expect: { etcd: etcdNow() },
        action: {
          summary: `MoveLeader to ${firstTo ? memberLabel(firstTo) : 'another voter'} (the first caught-up voter of the list): ~100 ms instead of a 1–2 s election`,
          performer: 'ferry',
          commands: firstTo ? moveLeaderCmds(member, addressOf(ctx, member), firstTo) : [],
        },
        verify: { expect: notLeader, commands: [statusCmd()] },
        timeoutSeconds: TIMEOUTS.moveLeader,
        destructive: false,
        undo: noUndo('leadership is not moved back: nothing depends on which voter leads'),
        idempotencyCheck: doneWhen(`${member.name} does not lead`, notLeader, 'redo'),
        notes: [
          swap.leaderAtSnapshot
            ? `${member.name} led etcd when the snapshot was taken`
            : `${member.name} did not lead at snapshot time; the run checks again and skips this step if it still does not`,
          // Measured by bench/leader-move: a third to a half of transfers catch one back-to-back write.
          "during the handover (a few ms) raft drops proposals that reach the old leader: an apiserver write caught in it waits for etcd's request timeout (~7 s) and answers 500/504, so move at a quiet moment; clients retry",
        ],
      }),
    );

    const via = othersTalosFirst(ctx, member);
    const viaFirst = via[0];
    const removePre = { etcd: sim.expectation(healthy, { leader: { isNot: member } }), ...stopped };
    sim.removed(member);
    const removed = { etcd: sim.expectation('all') };
    const n = sim.voterCount();
    steps.push(
      draft<'etcd-remove-member'>({
        kind: 'etcd-remove-member',
        subject,
        title: `Remove etcd member ${member.name} (${n} voters remain)`,
        target: { node: old, member },
        params: { member, via, lastKubeadmMember: swap.last },
        expect: removePre,
        action: {
          summary: `MemberRemove ${member.idHex}, sent through ${viaFirst ? memberLabel(viaFirst) : 'another member'}`,
          performer: 'ferry',
          commands: removeMemberCmds(
            member,
            viaFirst ? { member: viaFirst, address: addressOf(ctx, viaFirst) } : null,
          ),
        },
        verify: { expect: removed, commands: [memberListCmd(`${member.name} no longer listed`)] },
        timeoutSeconds: TIMEOUTS.removeMember,
        destructive: true,
        undo: noUndo(
          `a removed member cannot come back under its old id (docs/rules.md#etcd-tocommit-out-of-range); to go back, join a new kubeadm control plane (kubeadm join --control-plane) on a wiped machine`,
        ),
        idempotencyCheck: doneWhen(
          `${member.name} (id ${member.idHex}) is absent from a fresh member list (still listed: the removal did not apply)`,
          removed,
          'redo',
        ),
        notes: [
          // docs/knowledge/test-infra.md etcd pitfall 1
          'the serving member needs 5 s connected to every voter before it accepts a change: "unhealthy cluster" is retried with backoff',
          ...(swap.last
            ? [
                'the last kubeadm member: afterwards etcd runs on Talos members only; with Cluster API, only now may the TalosControlPlane be unpaused (docs/rules.md#capi.tcp-etcd-audit)',
              ]
            : []),
        ],
      }),
    );

    steps.push(
      draft<'verify-membership'>({
        kind: 'verify-membership',
        subject,
        title: `Verify the membership: ${n} voters, no learner, ${member.name} gone`,
        target: { member },
        params: { removed: member },
        expect: removed,
        action: {
          summary:
            'A fresh, linearizable member list from a remaining member must equal the expected membership',
          performer: 'ferry',
          commands: [memberListCmd(), healthCmd()],
        },
        verify: { expect: removed, commands: [] },
        timeoutSeconds: TIMEOUTS.verify,
        destructive: false,
        undo: noUndo('observation only'),
        idempotencyCheck: doneWhen('observed again on resume', removed, 'redo'),
      }),
    );
  }

  steps.push(
    decommissionStep({
      subject,
      node: old,
      provisioner: ctx.provisioner,
      role: 'controlplane',
      comesBack: ctx.strategy === 'replace',
      pre: { etcd: sim.expectation('all'), apiservers: [{ node: old, serving: false }] },
    }),
    deleteNodeStep({ subject, node: old }),
  );
  return steps;
}
