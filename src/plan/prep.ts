/**
 * Phase 0 (preflight) and phase 1 (preparation). Preparation comes from the kit when there is one
 * (kubeadm/steps.json, rbac/health-probe.yaml, Cilium values); without a kit every item points at
 * `ferry generate`, which writes its scripts. Everything here must be in place before the first
 * Talos control plane joins: a Talos apiserver enters the `kubernetes` Service at once
 * (blockers.md apiserver.coexistence-endpoints).
 */
import type { Facts } from '../facts/model.js';
import type { KitSummary } from '../kit/read.js';
import { TALOS_ENCRYPTION_KEY_NAMES } from '../knowledge/talos.js';
import { capiAdoptStep } from './capi-steps.js';
import {
  cmd,
  endpointReadyzCmd,
  etcdctl,
  healthCmd,
  kubectl,
  memberListCmd,
  onNode,
  sq,
  statusCmd,
  talosctl,
} from './commands.js';
import type { EtcdModel } from './etcd-sim.js';
import type { ExpectedState, KubeadmMemberRef, NodeExpectation } from './expected-state.js';
import type { DraftStep, FindingRef, PrepTheme } from './model.js';
import { confirmed, doneWhen, draft, gateStep, noUndo, TIMEOUTS, undoWith } from './steps.js';

export interface PrepContext {
  facts: Facts;
  etcd: EtcdModel;
  /** Snapshot path as given (for the commands an operator re-runs). */
  snapshot: string;
  kit: KitSummary | null;
  blockers: FindingRef[];
  /** Blockers the plan's own steps take care of (a GitOps owner it pauses): accepted by the preflight. */
  handled: FindingRef[];
  suppressed: number;
  allowBlockers: boolean;
  /** Findings that need a fix by hand before the roll (CSI drivers, host paths). */
  manualFixes: FindingRef[];
  controlPlaneNodes: NodeExpectation['node'][];
  endpointUrl: string;
  snapshotMember: KubeadmMemberRef | null;
}

export const ETCD_BACKUP_BEFORE = 'etcd-before-migration.db';

export function preflightSteps(ctx: PrepContext): DraftStep[] {
  const steps: DraftStep[] = [];
  const auditExpect: ExpectedState = {
    audit: {
      maxBlockers: ctx.allowBlockers ? ctx.blockers.length : 0,
      acceptedBlockers: [
        ...(ctx.allowBlockers ? ctx.blockers.map((b) => b.fingerprint) : []),
        ...ctx.handled.map((b) => b.fingerprint),
      ],
    },
  };
  steps.push(
    draft<'preflight-audit'>({
      kind: 'preflight-audit',
      subject: 'cluster',
      title:
        ctx.allowBlockers && ctx.blockers.length > 0
          ? `Audit: ${ctx.blockers.length} blocker(s) accepted with --allow-blockers, no other`
          : 'Audit: no unsuppressed blocker',
      target: {},
      params: { blockers: ctx.blockers, allowBlockers: ctx.allowBlockers, suppressed: ctx.suppressed },
      expect: {},
      action: {
        summary:
          'Snapshot the live cluster again and audit it: the plan is only as good as the cluster still matching it',
        performer: 'ferry',
        commands: [
          cmd('ferry snapshot --kubeconfig "$KUBECONFIG" -o snapshot-now --force'),
          cmd('ferry audit snapshot-now --fail-on blocker', 'exit 0: no unsuppressed blocker'),
        ],
      },
      verify: { expect: auditExpect, commands: [] },
      timeoutSeconds: TIMEOUTS.audit,
      destructive: false,
      undo: noUndo('observation only'),
      idempotencyCheck: doneWhen('audited again on resume', auditExpect, 'redo'),
      ...(ctx.blockers.length + ctx.handled.length > 0
        ? {
            notes: [
              ...ctx.blockers.map(
                (b) =>
                  `${ctx.allowBlockers ? 'accepted' : 'must be fixed'}: ${b.ruleId} ${b.subject}: ${b.title}`,
              ),
              ...ctx.handled.map((b) => `handled by the plan (paused in phase 1): ${b.ruleId} ${b.subject}`),
            ],
          }
        : {}),
    }),
  );

  const healthy: ExpectedState = {
    etcd: ctx.etcd.expectation('all'),
    nodes: ctx.controlPlaneNodes.map((node) => ({ node, exists: true, ready: true })),
    endpoint: { readyz: true },
  };
  steps.push(
    gateStep({
      subject: 'cluster',
      title: `Gate: ${ctx.etcd.voterCount()} healthy etcd voters, no learner, every control plane Ready`,
      target: {},
      reason:
        'start only from a healthy, quiet cluster: leftover learners and unstarted members block joins (cluster-api#5509)',
      expect: healthy,
      commands: [
        memberListCmd(),
        healthCmd(),
        statusCmd(),
        cmd(kubectl('get nodes -o wide')),
        endpointReadyzCmd(ctx.endpointUrl),
      ],
    }),
  );

  steps.push(
    etcdSnapshotStep(
      ctx.snapshotMember,
      ETCD_BACKUP_BEFORE,
      'a restore point before anything changes',
      'cluster',
    ),
  );
  return steps;
}

export function etcdSnapshotStep(
  via: KubeadmMemberRef | null,
  file: string,
  reason: string,
  subject: string,
  talosAddress?: string,
): DraftStep {
  const saved: ExpectedState = { files: [{ path: file, where: { kind: 'workstation' }, exists: true }] };
  const command =
    talosAddress !== undefined
      ? cmd(talosctl(talosAddress, `etcd snapshot ${file}`), 'through a Talos member')
      : cmd(
          etcdctl(`snapshot save ${file}`, via?.clientURL ?? '<ONE_MEMBER_CLIENT_URL>'),
          'one endpoint only',
        );
  return draft<'etcd-snapshot'>({
    kind: 'etcd-snapshot',
    subject,
    title: `etcd snapshot to ${file}`,
    target: via ? { member: via } : {},
    params: { file, reason },
    expect: {},
    action: { summary: `Save an etcd snapshot: ${reason}`, performer: 'ferry', commands: [command] },
    verify: { expect: saved, commands: [cmd(`etcdutl snapshot status ${file} -w table`)] },
    timeoutSeconds: TIMEOUTS.etcdSnapshot,
    destructive: false,
    undo: undoWith('Delete the file (it holds every Secret of the cluster)', [cmd(`shred -u ${file}`)]),
    idempotencyCheck: doneWhen(`${file} exists`, saved, 'redo'),
    notes: ['the file holds every Secret in the cluster: keep it like a key, wipe it in after-care'],
  });
}

// ---------------------------------------------------------------------------------------------
// Phase 1

export function preparationSteps(ctx: PrepContext): DraftStep[] {
  const steps = ctx.kit ? fromKit(ctx, ctx.kit) : withoutKit(ctx);
  // Last in phase 1: the kubeadm side is ready, no Talos Machine exists yet.
  if (ctx.facts.target.provisioner === 'capi')
    steps.push(capiAdoptStep(ctx.kit?.path ?? null, ctx.kit?.capi ?? null));
  return steps;
}

function fromKit(ctx: PrepContext, kit: KitSummary): DraftStep[] {
  const steps: DraftStep[] = [];
  const probeFile = kit.files.find((f) => f.path === 'rbac/health-probe.yaml');
  if (probeFile) steps.push(probeStep(kit, probeFile.path));
  if (ctx.facts.cni.plugin.value === 'cilium') steps.push(ciliumStep(ctx, kit));
  for (const s of kit.prepSteps) {
    const nodes = s.scope === 'each-control-plane' ? s.nodes : [null];
    for (const node of nodes) {
      const where = node ? onNode(node) : { kind: 'workstation' as const };
      const fill = (c: string) => (node ? c.replace(/\bNODE\b/g, sq(node)) : c);
      const verify = cmd(fill(s.verify), undefined, where);
      const done: ExpectedState = { commands: [{ command: verify, exitCode: 0 }] };
      steps.push(
        draft<'kubeadm-prep'>({
          kind: 'kubeadm-prep',
          subject: node ?? 'cluster',
          title: node ? `${s.title}: ${node}` : s.title,
          target: node ? { node: cpRef(ctx, node) } : {},
          params: {
            source: {
              kind: 'kit',
              prepId: s.id,
              script: `${kit.path}/${s.apply.split(' ')[1] ?? s.id}`,
              after: s.after,
            },
            scope: node ? 'node' : 'cluster',
            node,
          },
          expect: {},
          action: {
            summary: s.why || s.title,
            performer: 'operator',
            commands: [
              cmd(
                fill(s.apply),
                node ? `as root on ${node}, from a copy of the kit` : 'from the kit directory',
                where,
              ),
            ],
          },
          verify: { expect: done, commands: [verify] },
          timeoutSeconds: TIMEOUTS.prep,
          destructive: false,
          undo: undoWith('The script puts back the files it backed up (/etc/kubernetes/ferry-backup)', [
            cmd(fill(s.undo), undefined, where),
          ]),
          idempotencyCheck: doneWhen(`\`${fill(s.verify)}\` exits 0`, done, 'redo'),
          ...(s.after.length > 0
            ? { notes: [`only after ${s.after.join(', ')} is verified on every node`] }
            : {}),
        }),
      );
    }
  }
  steps.push(...ctx.manualFixes.map(manualFix));
  return steps;
}

function cpRef(ctx: PrepContext, node: string): NodeExpectation['node'] {
  return (
    ctx.controlPlaneNodes.find((n) => n.kind === 'kubeadm' && n.name === node) ?? {
      kind: 'kubeadm',
      name: node,
      address: null,
    }
  );
}

function probeStep(kit: KitSummary, file: string): DraftStep {
  const sa = kit.probe ?? { namespace: 'kube-system', name: 'ferry-health-probe' };
  const check = cmd(
    kubectl(`auth can-i get /readyz --as=system:serviceaccount:${sa.namespace}:${sa.name}`),
    'prints yes',
  );
  const done: ExpectedState = {
    objects: [{ kind: 'ServiceAccount', namespace: sa.namespace, name: sa.name, present: true }],
    commands: [{ command: check, exitCode: 0 }],
  };
  return draft<'apply-kit-file'>({
    kind: 'apply-kit-file',
    subject: 'cluster',
    title: 'Health-probe identity, and load-balancer checks that use it',
    target: {},
    params: { file, purpose: 'probe-rbac' },
    expect: {},
    action: {
      summary:
        'Talos ≤ v1.13 apiservers refuse anonymous health checks: apply the probe identity and switch the load-balancer checks to its token (or to TCP) before the first Talos apiserver joins',
      performer: 'operator',
      commands: [
        cmd(kubectl(`apply -f ${kit.path}/${file}`)),
        cmd(`# then point the load-balancer health checks at the token, as ${file} explains`),
      ],
    },
    verify: { expect: done, commands: [check] },
    timeoutSeconds: TIMEOUTS.applyFile,
    destructive: false,
    undo: undoWith('Delete the objects (switch the load-balancer checks back first)', [
      cmd(kubectl(`delete -f ${kit.path}/${file}`)),
    ]),
    idempotencyCheck: doneWhen(`${sa.namespace}/${sa.name} may GET /readyz`, done, 'redo'),
  });
}

function ciliumStep(ctx: PrepContext, kit: KitSummary): DraftStep {
  const agent = ctx.facts.cni.ciliumAgent.value ?? { namespace: 'kube-system', name: 'cilium' };
  const version = ctx.facts.cni.ciliumVersion.value;
  const file =
    kit.files.find((f) => /cilium/i.test(f.path) && /\.ya?ml$/.test(f.path) && !f.secret)?.path ?? null;
  const strategy = cmd(
    kubectl(`-n ${agent.namespace} get ds ${agent.name} -o jsonpath='{.spec.updateStrategy.type}'`),
    'prints OnDelete',
  );
  const done: ExpectedState = {
    objects: [
      {
        kind: 'DaemonSet',
        namespace: agent.namespace,
        name: agent.name,
        present: true,
        fields: { 'spec.updateStrategy.type': 'OnDelete' },
      },
    ],
  };
  if (!file) {
    return draft<'manual'>({
      kind: 'manual',
      subject: 'cluster',
      title: 'Cilium values that work on kubeadm and Talos nodes, agent updateStrategy OnDelete',
      target: {},
      params: {
        instructions: [
          `The kit at ${kit.path} has no Cilium values: generate the kit again with a ferry that writes them, or prepare them by hand: KubePrism-independent k8sServiceHost (the endpoint), cgroup.autoMount.enabled=false with cgroup.hostRoot=/sys/fs/cgroup, no SYS_MODULE, updateStrategy OnDelete.`,
        ],
      },
      expect: {},
      action: { summary: 'Roll out Cilium values for both node kinds', performer: 'operator', commands: [] },
      verify: { expect: done, commands: [strategy] },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: noUndo('restore the previous Helm values with helm rollback'),
      idempotencyCheck: doneWhen('the agent DaemonSet uses OnDelete', done, 'redo'),
    });
  }
  return draft<'apply-kit-file'>({
    kind: 'apply-kit-file',
    subject: 'cluster',
    title: 'Cilium values for Talos, agent updateStrategy OnDelete',
    target: {},
    params: { file, purpose: 'cilium-values' },
    expect: {},
    action: {
      summary:
        'Apply the merged values with the agent on OnDelete: no agent restarts now; each node gets the new agent when its pod is recreated (Talos nodes start with it)',
      performer: 'operator',
      commands: [
        cmd(
          `helm upgrade cilium cilium/cilium -n ${agent.namespace} --reuse-values${version ? ` --version ${version.replace(/^v/, '')}` : ''} -f ${kit.path}/${file}`,
        ),
      ],
    },
    verify: {
      expect: done,
      commands: [
        strategy,
        cmd(
          kubectl(
            `-n ${agent.namespace} get pods -l k8s-app=cilium -o custom-columns=NAME:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount,STARTED:.status.startTime`,
          ),
          'no agent restarted',
        ),
      ],
    },
    timeoutSeconds: TIMEOUTS.prep,
    destructive: false,
    undo: undoWith('Roll the release back to the previous values', [
      cmd(`helm rollback cilium -n ${agent.namespace}`),
    ]),
    idempotencyCheck: doneWhen('the agent DaemonSet uses OnDelete', done, 'redo'),
  });
}

function manualFix(f: FindingRef): DraftStep {
  const check = cmd(
    `ferry audit snapshot-now -o json | grep -c '"fingerprint": "${f.fingerprint}"'`,
    'prints 0 on a fresh snapshot once fixed',
  );
  return draft<'manual'>({
    kind: 'manual',
    subject: 'cluster',
    title: `Fix before the roll: ${f.title} (${f.subject})`,
    target: {},
    params: { instructions: [f.remediation], findings: [f] },
    expect: {},
    action: { summary: f.remediation, performer: 'operator', commands: [] },
    verify: {
      expect: {
        operator: { confirms: 'the fix is in place (a fresh audit no longer reports this finding)' },
      },
      commands: [check],
    },
    timeoutSeconds: TIMEOUTS.prep,
    destructive: false,
    undo: noUndo('depends on the fix; keep what you changed under version control'),
    idempotencyCheck: confirmed('the fix is in place (a fresh audit no longer reports this finding)', 'redo'),
    notes: [`audit rule ${f.ruleId}, fingerprint ${f.fingerprint}`],
  });
}

/** Without a kit: what the kit would hold, each pointing at `ferry generate`. */
function withoutKit(ctx: PrepContext): DraftStep[] {
  const generate = cmd(
    `ferry generate ${sq(ctx.snapshot)} --pki <PKI_COPY> -o kit --bootstrap-token "$(kubeadm token create --ttl 0)" --talos-version ${ctx.facts.target.talosVersion} --provisioner ${ctx.facts.target.provisioner}`,
    'run kubeadm token create on a control-plane node; the kit holds the preparation scripts',
  );
  const replan = cmd(
    `ferry plan ${sq(ctx.snapshot)} --kit kit -o plan.json`,
    "the plan then lists the kit's own steps here",
  );
  const steps: DraftStep[] = [
    draft<'manual'>({
      kind: 'manual',
      subject: 'cluster',
      title: 'Generate the migration kit, then plan again with --kit',
      target: {},
      params: {
        instructions: ['This plan was built without a kit: the preparation below is named, not scripted.'],
      },
      expect: {},
      action: {
        summary: 'Write the kit with ferry generate',
        performer: 'operator',
        commands: [generate, replan],
      },
      verify: {
        expect: { files: [{ path: 'kit/provenance.json', where: { kind: 'workstation' }, exists: true }] },
        commands: [],
      },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: noUndo('a kit on disk changes nothing in the cluster'),
      idempotencyCheck: doneWhen(
        'kit/provenance.json exists',
        { files: [{ path: 'kit/provenance.json', where: { kind: 'workstation' }, exists: true }] },
        'redo',
      ),
    }),
  ];
  for (const theme of themes(ctx.facts)) {
    steps.push(
      draft<'kubeadm-prep'>({
        kind: 'kubeadm-prep',
        subject: 'cluster',
        title: THEME_TITLES[theme],
        target: {},
        params: { source: { kind: 'generate', theme }, scope: 'cluster', node: null },
        expect: {},
        action: {
          summary: `${THEME_TITLES[theme]}: the kit's kubeadm/ directory holds the scripts (apply, verify, undo), one control plane at a time`,
          performer: 'operator',
          commands: [generate, cmd('cat kit/kubeadm/README.md')],
        },
        verify: {
          expect: {
            operator: { confirms: 'this preparation item is applied and verified on every control plane' },
          },
          commands: [],
        },
        timeoutSeconds: TIMEOUTS.prep,
        destructive: false,
        undo: noUndo('see the undo command of each script in kit/kubeadm/'),
        idempotencyCheck: confirmed(
          'this preparation item is applied and verified on every control plane',
          'redo',
        ),
      }),
    );
  }
  if (ctx.facts.cni.plugin.value === 'cilium') {
    steps.push(
      draft<'manual'>({
        kind: 'manual',
        subject: 'cluster',
        title: 'Cilium values for Talos, agent updateStrategy OnDelete',
        target: {},
        params: {
          instructions: [
            'ferry generate writes the merged Cilium values; apply them with the agent on OnDelete.',
          ],
        },
        expect: {},
        action: {
          summary: 'Roll out Cilium values for both node kinds',
          performer: 'operator',
          commands: [generate],
        },
        verify: {
          expect: { operator: { confirms: 'the Cilium values are rolled out with the agent on OnDelete' } },
          commands: [],
        },
        timeoutSeconds: TIMEOUTS.prep,
        destructive: false,
        undo: noUndo('restore the previous Helm values with helm rollback'),
        idempotencyCheck: confirmed('the Cilium values are rolled out with the agent on OnDelete', 'redo'),
      }),
    );
  }
  steps.push(...ctx.manualFixes.map(manualFix));
  return steps;
}

const THEME_TITLES: Record<PrepTheme, string> = {
  'apiserver-sans': 'Re-issue the kubeadm apiserver certificates with 127.0.0.1 and localhost (KubePrism)',
  'sa-issuer': 'Put the Talos service-account issuer first on every kubeadm apiserver',
  'encryption-keys': "Rotate the encryption key to Talos's key name (two phases, then re-encrypt)",
};

function themes(facts: Facts): PrepTheme[] {
  const out: PrepTheme[] = [];
  if (facts.target.kubeprism === 'on') out.push('apiserver-sans');
  const endpoint = facts.cluster.controlPlaneEndpoint.value?.url;
  const issuers = facts.apiserver.serviceAccountIssuers.value;
  if (endpoint && issuers?.[0] !== endpoint) out.push('sa-issuer');
  const key = facts.encryption.secretsWriteKey.value;
  if (key && key.provider in TALOS_ENCRYPTION_KEY_NAMES) {
    const talosName = TALOS_ENCRYPTION_KEY_NAMES[key.provider as keyof typeof TALOS_ENCRYPTION_KEY_NAMES];
    if (key.keyName !== talosName) out.push('encryption-keys');
  } else if (key && key.provider !== 'identity') out.push('encryption-keys');
  return out;
}
