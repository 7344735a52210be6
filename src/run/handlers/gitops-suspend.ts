/**
 * `gitops-suspend`: pauses a GitOps owner before the migration changes what it owns, and resumes
 * it afterwards, with one JSON merge patch each. A run that stops gives a pause back only while it
 * has changed nothing: once it has, resuming would sync the change away mid-migration (old Cilium
 * values under new nodes, a surged replica count taken back), so the owner stays paused and the
 * stop says how to resume it.
 */
import { GITOPS_RESOURCE } from '../../knowledge/gitops.js';
import { gitopsOwnerLabel } from '../../plan/gitops-steps.js';
import type { Step, StepKind } from '../../plan/model.js';
import type { GitopsGivenBack } from '../resume.js';
import type { Handler, StopHook } from './context.js';

/** Whether a finished step of the kind has changed the cluster (what an owner would revert). */
const CHANGES_CLUSTER: Record<StepKind, boolean> = {
  'preflight-audit': false,
  gate: false,
  'etcd-snapshot': false,
  'gitops-suspend': false,
  'kubeadm-prep': true,
  'apply-kit-file': true,
  manual: true,
  provision: true,
  'provision-request': true,
  'provision-detect': false,
  'wait-member-joined': false,
  'wait-member-voter': false,
  'wait-node-ready': false,
  'lb-add': true,
  'lb-remove': true,
  cordon: true,
  drain: true,
  'drain-batch': true,
  'stop-apiserver': true,
  'etcd-move-leader': true,
  'etcd-remove-member': true,
  'verify-membership': false,
  decommission: true,
  'delete-node': true,
  'scale-workload': true,
  'wait-workload-ready': false,
  'delete-bootstrap-token': true,
  'relabel-kube-proxy': true,
  'wipe-pki-copies': true,
  drill: true,
  'capi-adopt': true,
  'capi-handover': true,
};

type SuspendStep = Extract<Step, { kind: 'gitops-suspend' }>;

const resumeCommand = (s: SuspendStep) =>
  `kubectl -n ${s.params.owner.namespace} patch ${GITOPS_RESOURCE[s.params.owner.kind]} ${s.params.owner.name} --type=merge -p '${JSON.stringify(s.params.undo)}'`;

const givePausesBack: StopHook = {
  what: 'GitOps suspensions',
  async giveBack(ctx) {
    const done = (s: Step) => ctx.finished.has(s.id);
    const suspends = ctx.steps.filter((s): s is SuspendStep => s.kind === 'gitops-suspend');
    const open = suspends.filter(
      (p) =>
        p.params.action === 'pause' &&
        done(p) &&
        !suspends.some(
          (r) =>
            r.params.action === 'resume' &&
            done(r) &&
            gitopsOwnerLabel(r.params.owner) === gitopsOwnerLabel(p.params.owner),
        ),
    );
    if (open.length === 0) return;
    const changed = ctx.steps.find((s) => done(s) && CHANGES_CLUSTER[s.kind]);
    // Children before parents: a parent resumed first would restore a child's old policy early.
    for (const p of [...open].reverse()) {
      const owner = gitopsOwnerLabel(p.params.owner);
      if (changed) {
        ctx.deps.journal.observe(ctx.stepId, 'gitops-given-back', false, {
          owner,
          resumed: false,
        } satisfies GitopsGivenBack);
        ctx.log(
          `left paused: ${owner}: the run has changed the cluster (${changed.id}: ${changed.title}), and resuming it now would put back ${p.params.owns.join(', ')}. A resumed run keeps it paused; to give up the migration, commit its changes and resume it with: ${resumeCommand(p)}`,
        );
        continue;
      }
      const o = p.params.owner;
      await ctx.deps.kube.mergePatchObject(o.apiVersion, o.kind, o.namespace, o.name, p.params.undo);
      ctx.deps.journal.observe(ctx.stepId, 'gitops-given-back', true, {
        owner,
        resumed: true,
      } satisfies GitopsGivenBack);
      ctx.log(`resumed: ${owner} reconciles again as before the run paused it (nothing had changed yet)`);
    }
  },
};

export const handler: Handler<'gitops-suspend'> = {
  mode: 'act',
  onStop: givePausesBack,
  async act(step, ctx) {
    const o = step.params.owner;
    await ctx.deps.kube.mergePatchObject(o.apiVersion, o.kind, o.namespace, o.name, step.params.patch);
    ctx.log(`${gitopsOwnerLabel(o)}: ${step.params.action === 'pause' ? 'paused' : 'resumed as it was'}`);
    return { owner: gitopsOwnerLabel(o), action: step.params.action };
  },
};
