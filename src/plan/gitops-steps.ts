/**
 * GitOps owners paused for the migration (audit rule gitops.reverts-ferry-changes): the first
 * steps of phase 1 turn each owner's reconciliation off, parents first, before anything changes;
 * the last steps of after-care turn it back on as it was, children first, once the operator
 * confirms that ferry's changes are in the repository (resuming before would sync them away).
 */
import type { Finding } from '../audit/findings.js';
import type { IacOwned, PauseTarget } from '../audit/rules/gitops.js';
import { GITOPS_RESOURCE } from '../knowledge/gitops.js';
import type { KubeObject } from '../snapshot/model.js';
import { cmd, kubectl } from './commands.js';
import type { ExpectedState } from './expected-state.js';
import type { DraftStep, GitopsOwnerRef } from './model.js';
import { confirmed, doneWhen, draft, noUndo, TIMEOUTS, undoWith } from './steps.js';

export function gitopsOwnerLabel(o: GitopsOwnerRef): string {
  return `${o.kind} ${o.namespace}/${o.name}`;
}

const kindLabel = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

type Patch = Record<string, unknown>;

/** The pause and the patch that gives the owner back its own setting. */
function patches(t: PauseTarget): {
  pause: Patch;
  resume: Patch;
  paused: Record<string, string>;
  resumed: Record<string, string>;
} {
  if (t.kind === 'Application') {
    const automated = (t.object.spec?.syncPolicy?.automated ?? {}) as Record<string, unknown>;
    const resumed: Record<string, string> = { 'spec.syncPolicy.automated': '(set)' };
    for (const [k, v] of Object.entries(automated))
      if (typeof v === 'boolean') resumed[`spec.syncPolicy.automated.${k}`] = String(v);
    return {
      pause: { spec: { syncPolicy: { automated: null } } },
      resume: { spec: { syncPolicy: { automated } } },
      paused: { 'spec.syncPolicy.automated': '(unset)' },
      resumed,
    };
  }
  const had = t.object.spec?.suspend;
  return {
    pause: { spec: { suspend: true } },
    // Back to what it was: absent (null removes the field) or an explicit false.
    resume: { spec: { suspend: had === false ? false : null } },
    paused: { 'spec.suspend': 'true' },
    resumed: { 'spec.suspend': had === false ? 'false' : '(unset)' },
  };
}

function ownerRef(t: PauseTarget): GitopsOwnerRef {
  return {
    apiVersion: t.object.apiVersion,
    kind: t.kind,
    namespace: t.object.metadata.namespace ?? 'default',
    name: t.object.metadata.name,
  };
}

function patchCommand(o: GitopsOwnerRef, patch: Patch): string {
  return kubectl(
    `-n ${o.namespace} patch ${GITOPS_RESOURCE[o.kind]} ${o.name} --type=merge -p '${JSON.stringify(patch)}'`,
  );
}

function state(o: GitopsOwnerRef, fields: Record<string, string>): ExpectedState {
  return { objects: [{ kind: o.kind, namespace: o.namespace, name: o.name, present: true, fields }] };
}

const present = (o: GitopsOwnerRef): ExpectedState => ({
  objects: [{ kind: o.kind, namespace: o.namespace, name: o.name, present: true }],
});

/** The gitops.reverts-ferry-changes blockers whose owner the plan pauses (its subject is the owner). */
export function pausedBlockers<F extends Pick<Finding, 'ruleId' | 'severity' | 'subject'>>(
  findings: readonly F[],
  targets: readonly PauseTarget[],
): F[] {
  return findings.filter(
    (f) =>
      f.ruleId === 'gitops.reverts-ferry-changes' &&
      f.severity === 'blocker' &&
      targets.some(
        (t) =>
          t.kind === f.subject.kind &&
          t.object.metadata.name === f.subject.name &&
          (t.object.metadata.namespace ?? '') === (f.subject.namespace ?? ''),
      ),
  );
}

export function gitopsPauseSteps(targets: readonly PauseTarget[]): DraftStep[] {
  return targets.map((t) => {
    const owner = ownerRef(t);
    const p = patches(t);
    const owns = t.owns.map(kindLabel);
    const paused = state(owner, p.paused);
    return draft<'gitops-suspend'>({
      kind: 'gitops-suspend',
      subject: 'cluster',
      title: `Pause ${gitopsOwnerLabel(owner)}: it would put back ${owns.join(', ')}`,
      target: {},
      params: { owner, action: 'pause', patch: p.pause, undo: p.resume, owns },
      expect: present(owner),
      action: {
        summary:
          t.kind === 'Application'
            ? 'Turn its automated sync off: nothing the migration changes is synced back'
            : 'Suspend it: its controller stops reconciling until it is resumed',
        performer: 'ferry',
        commands: [cmd(patchCommand(owner, p.pause))],
      },
      verify: {
        expect: paused,
        commands: [
          cmd(kubectl(`-n ${owner.namespace} get ${GITOPS_RESOURCE[owner.kind]} ${owner.name} -o yaml`)),
        ],
      },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: undoWith('Resume it as it was (a run that stops before changing anything does so itself)', [
        cmd(patchCommand(owner, p.resume)),
      ]),
      idempotencyCheck: doneWhen(`${gitopsOwnerLabel(owner)} is paused`, paused, 'redo'),
      notes: [
        'a run that stops before it changes anything resumes it; once it has, a stop leaves it paused (resuming would revert the changes) and names the command',
      ],
    });
  });
}

/** The resumes, children before parents (the reverse of the pauses). */
export function gitopsResumeSteps(targets: readonly PauseTarget[]): DraftStep[] {
  return [...targets].reverse().map((t) => {
    const owner = ownerRef(t);
    const p = patches(t);
    const owns = t.owns.map(kindLabel);
    const resumed = state(owner, p.resumed);
    const committed = `the changes ferry made to ${owns.join(', ')} are committed to the repository ${gitopsOwnerLabel(owner)} applies, as the kit's gitops/README.md lists them`;
    return draft<'gitops-suspend'>({
      kind: 'gitops-suspend',
      subject: 'cluster',
      title: `Resume ${gitopsOwnerLabel(owner)} as it was`,
      target: {},
      params: { owner, action: 'resume', patch: p.resume, undo: p.pause, owns },
      expect: { ...present(owner), operator: { confirms: committed } },
      action: {
        summary: 'Give it back its own reconciliation, once its repository holds what the migration changed',
        performer: 'ferry',
        commands: [cmd(patchCommand(owner, p.resume))],
      },
      verify: { expect: resumed, commands: [] },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: noUndo('pause it again with the phase 1 command if it reverts something'),
      idempotencyCheck: doneWhen(`${gitopsOwnerLabel(owner)} reconciles as before`, resumed, 'redo'),
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Terraform/OpenTofu: no API ferry can see pauses its pipelines, so these are the operator's steps.

/** Phase 1, before anything changes: the pipelines that apply to this cluster stop. */
export function iacPauseSteps(owned: readonly IacOwned[]): DraftStep[] {
  return owned.map((o) => {
    const names = o.objects.map((t) => kindLabel(t.object)).join(', ');
    const question = `no ${o.manager} pipeline applies to this cluster until the migration ends`;
    return draft<'manual'>({
      kind: 'manual',
      subject: 'cluster',
      title: `Pause the ${o.manager} pipelines: they would put back ${names}`,
      target: {},
      params: {
        instructions: [
          `${o.manager} manages ${names}, which the migration changes; its next apply puts them back. Stop every pipeline (CI job, Atlantis, Terraform Cloud run trigger) that applies to this cluster until the after-care step that adopts them.`,
        ],
      },
      expect: {},
      action: {
        summary: `Stop the ${o.manager} pipelines of this cluster`,
        performer: 'operator',
        commands: [],
      },
      verify: { expect: { operator: { confirms: question } }, commands: [] },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: noUndo('let the pipelines run again'),
      idempotencyCheck: confirmed(question, 'redo'),
    });
  });
}

/** After-care, last: the changed objects adopted as they are (the kit's tofu/cluster-objects/), a clean plan, pipelines back. */
export function iacResumeSteps(owned: readonly IacOwned[], kitPath: string | null): DraftStep[] {
  return owned.map((o) => {
    const adopt = o.objects.filter((x) => x.change !== 'talos-adopts').map((x) => x.object);
    const forget = o.objects.filter((x) => x.change === 'talos-adopts').map((x) => x.object);
    const question = `the ${o.manager} plan of this cluster shows no changes, and its pipelines run again`;
    const dir = kitPath ? `${kitPath}/tofu/cluster-objects` : null;
    return draft<'manual'>({
      kind: 'manual',
      subject: 'cluster',
      title: `Give ${o.manager} back what it manages, as the migration left it`,
      target: {},
      params: {
        instructions: [
          ...(forget.length > 0
            ? [
                `Talos manages ${forget.map(kindLabel).join(', ')} now: take them out of the ${o.manager} configuration and state without deleting them (a removed block with destroy = false, or tofu state rm).`,
              ]
            : []),
          ...(adopt.length > 0
            ? [
                `Put the migration's changes to ${adopt.map(kindLabel).join(', ')} into the configuration, or let go of them there and adopt them as they are with the kit's tofu/cluster-objects/ (its header says how).`,
              ]
            : []),
          'Run the plan of every configuration that applies to this cluster: it must show no changes before the pipelines run again.',
        ],
      },
      expect: {},
      action: {
        summary: `Align the ${o.manager} state with the cluster, then let its pipelines run`,
        performer: 'operator',
        commands:
          dir && adopt.length > 0
            ? [
                cmd(
                  `cd ${dir} && tofu init && tofu plan -var kubeconfig="$KUBECONFIG" -generate-config-out=generated.tf`,
                  `shows ${adopt.length} to import, 0 to add, 0 to change, 0 to destroy`,
                ),
              ]
            : [],
      },
      verify: { expect: { operator: { confirms: question } }, commands: [] },
      timeoutSeconds: TIMEOUTS.prep,
      destructive: false,
      undo: noUndo('the state is yours: tofu state rm what was imported'),
      idempotencyCheck: confirmed(question, 'redo'),
    });
  });
}
