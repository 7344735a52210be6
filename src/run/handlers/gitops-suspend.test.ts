/**
 * GitOps owners paused for the migration: the plan's pause and resume steps (parents first, resumed
 * last and children first), the handler's patch through the kube port, and what a stopped run gives
 * back: a pause while nothing has changed, never once the run has changed what the owner holds.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPlan, planBlockers } from '../../plan/build.js';
import { allSteps, type Plan, type Step, type StepOf } from '../../plan/model.js';
import { inputsFor } from '../../plan/testing-example.js';
import type { KubeObject, Snapshot } from '../../snapshot/model.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import type { RunDeps } from '../deps.js';
import type { ObservationRow, TransitionRow } from '../journal.js';
import { type GitopsGivenBack, resumePoint } from '../resume.js';
import type { StepContext, StopContext } from './context.js';
import { HANDLERS } from './index.js';

const argo = (name: string, automated: Record<string, unknown>, tracking?: string): KubeObject => ({
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name,
    namespace: 'argocd',
    ...(tracking ? { annotations: { 'argocd.argoproj.io/tracking-id': tracking } } : {}),
  },
  spec: { source: { repoURL: 'https://git.example.com/infra.git', path: name }, syncPolicy: { automated } },
});

/** The example cluster, its Cilium agent owned by Application "cilium", itself managed by Application "root". */
async function ownedExample(): Promise<Snapshot> {
  const s = await exampleSnapshot();
  const ds = s.resources.daemonsets.find((d) => d.metadata.name === 'cilium');
  if (!ds) throw new Error('the example has no cilium DaemonSet');
  ds.metadata.annotations = {
    ...ds.metadata.annotations,
    'argocd.argoproj.io/tracking-id': 'cilium:apps/DaemonSet:kube-system/cilium',
  };
  s.resources.gitops = [
    argo('cilium', { prune: true, selfHeal: true }, 'root:argoproj.io/Application:argocd/cilium'),
    argo('root', { selfHeal: true }),
    // Owns nothing the migration changes: not paused.
    argo('shop', { selfHeal: true }),
  ];
  return s;
}

let plan: Plan;
const suspends = () =>
  allSteps(plan).filter((s): s is StepOf<'gitops-suspend'> => s.kind === 'gitops-suspend');

beforeAll(async () => {
  plan = buildPlan(inputsFor(await ownedExample()));
});

describe('the plan', () => {
  it('pauses the owners first in phase 1, parents first, and resumes them last, children first', () => {
    const phase1 = plan.phases[1]!.steps;
    expect(phase1.slice(0, 2).map((s) => s.title)).toEqual([
      'Pause Application argocd/root: it would put back Application argocd/cilium',
      'Pause Application argocd/cilium: it would put back DaemonSet kube-system/cilium',
    ]);
    const phase5 = plan.phases[5]!.steps;
    expect(phase5.slice(-2).map((s) => s.title)).toEqual([
      'Resume Application argocd/cilium as it was',
      'Resume Application argocd/root as it was',
    ]);
    expect(suspends()).toHaveLength(4);
    const [, pauseCilium] = suspends();
    expect(pauseCilium!.params).toEqual({
      owner: { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', namespace: 'argocd', name: 'cilium' },
      action: 'pause',
      patch: { spec: { syncPolicy: { automated: null } } },
      undo: { spec: { syncPolicy: { automated: { prune: true, selfHeal: true } } } },
      owns: ['DaemonSet kube-system/cilium'],
    });
    expect(pauseCilium!.verify.expect.objects).toEqual([
      {
        kind: 'Application',
        namespace: 'argocd',
        name: 'cilium',
        present: true,
        fields: { 'spec.syncPolicy.automated': '(unset)' },
      },
    ]);
    expect(pauseCilium!.action.commands[0]!.run).toBe(
      `kubectl -n argocd patch applications.argoproj.io cilium --type=merge -p '{"spec":{"syncPolicy":{"automated":null}}}'`,
    );
  });

  it('resumes only once the operator confirms the changes are committed, and checks the policy is back', () => {
    const resume = suspends().find((s) => s.params.action === 'resume' && s.params.owner.name === 'cilium')!;
    expect(resume.expect.operator?.confirms).toBe(
      "the changes ferry made to DaemonSet kube-system/cilium are committed to the repository Application argocd/cilium applies, as the kit's gitops/README.md lists them",
    );
    expect(resume.verify.expect.objects?.[0]?.fields).toEqual({
      'spec.syncPolicy.automated': '(set)',
      'spec.syncPolicy.automated.prune': 'true',
      'spec.syncPolicy.automated.selfHeal': 'true',
    });
  });

  it('takes the blockers of the owners it pauses off the refusal list, and the preflight accepts them', async () => {
    const input = inputsFor(await ownedExample(), { allowBlockers: false });
    const gitops = input.audit.findings.filter((f) => f.ruleId === 'gitops.reverts-ferry-changes');
    expect(gitops.map((f) => [f.severity, f.subject.name])).toEqual([['blocker', 'cilium']]);
    const { refused, handled } = planBlockers(input);
    expect(refused.some((b) => b.ruleId === 'gitops.reverts-ferry-changes')).toBe(false);
    expect(handled.map((b) => b.fingerprint)).toEqual([gitops[0]!.fingerprint]);
    const preflight = buildPlan(input).phases[0]!.steps[0]!;
    expect(preflight.verify.expect.audit?.acceptedBlockers).toContain(gitops[0]!.fingerprint);
    expect(preflight.notes).toContain(
      `handled by the plan (paused in phase 1): gitops.reverts-ferry-changes ${handled[0]!.subject}`,
    );
    // An owner the snapshot does not hold cannot be paused from here: still refused.
    const s = await ownedExample();
    s.resources.gitops = [];
    const elsewhere = planBlockers(inputsFor(s, { allowBlockers: false }));
    expect(elsewhere.refused.filter((b) => b.ruleId === 'gitops.reverts-ferry-changes')).toHaveLength(1);
    expect(elsewhere.handled).toEqual([]);
  });

  it('adds nothing for a cluster without GitOps owners', async () => {
    const bare = buildPlan(inputsFor(await exampleSnapshot()));
    expect(allSteps(bare).filter((s) => s.kind === 'gitops-suspend')).toEqual([]);
  });

  it('suspends a Flux Kustomization and resumes it to what it was (absent, not false)', async () => {
    const s = await exampleSnapshot();
    const ds = s.resources.daemonsets.find((d) => d.metadata.name === 'cilium')!;
    ds.metadata.labels = {
      ...ds.metadata.labels,
      'kustomize.toolkit.fluxcd.io/name': 'cni',
      'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
    };
    s.resources.gitops = [
      {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'cni', namespace: 'flux-system' },
        spec: { interval: '5m' },
      },
    ];
    const flux = allSteps(buildPlan(inputsFor(s))).filter(
      (x): x is StepOf<'gitops-suspend'> => x.kind === 'gitops-suspend',
    );
    expect(flux.map((x) => [x.params.action, x.params.patch])).toEqual([
      ['pause', { spec: { suspend: true } }],
      ['resume', { spec: { suspend: null } }],
    ]);
    expect(flux[1]!.verify.expect.objects?.[0]?.fields).toEqual({ 'spec.suspend': '(unset)' });
  });
});

function recorder() {
  const calls: string[] = [];
  const logs: string[] = [];
  const journaled: { stepId: string | null; purpose: string; ok: boolean | null; data: unknown }[] = [];
  const deps = {
    plan,
    kube: {
      mergePatchObject: async (apiVersion: string, kind: string, ns: string, name: string, patch: unknown) =>
        void calls.push(`patch ${apiVersion} ${kind} ${ns}/${name} ${JSON.stringify(patch)}`),
    },
    journal: {
      observe: (stepId: string | null, purpose: string, ok: boolean | null, data: unknown) =>
        void journaled.push({ stepId, purpose, ok, data }),
    },
  } as unknown as RunDeps;
  return { deps, calls, logs, journaled };
}

function stopContext(r: ReturnType<typeof recorder>, finished: readonly Step[]): StopContext {
  return {
    deps: r.deps,
    options: {},
    steps: allSteps(plan),
    finished: new Set(finished.map((s) => s.id)),
    stepId: 'stopped-here',
    log: (l) => r.logs.push(l),
    pointOfNoReturn: () => false,
  };
}

describe('the handler', () => {
  const h = HANDLERS['gitops-suspend'];

  it('applies the step patch to the owner through the kube port', async () => {
    const r = recorder();
    if (h.mode !== 'act') throw new Error('gitops-suspend must act');
    const [pauseRoot] = suspends();
    const ctx = { deps: r.deps, log: (l: string) => r.logs.push(l) } as unknown as StepContext;
    expect(await h.act(pauseRoot!, ctx)).toEqual({ owner: 'Application argocd/root', action: 'pause' });
    expect(r.calls).toEqual([
      'patch argoproj.io/v1alpha1 Application argocd/root {"spec":{"syncPolicy":{"automated":null}}}',
    ]);
  });

  it('a run stopped before any change resumes its pauses, children first, and journals it for resume', async () => {
    const r = recorder();
    const [pauseRoot, pauseCilium] = suspends();
    const before = allSteps(plan).filter((s) => s.phase === 0);
    await h.onStop!.giveBack(stopContext(r, [...before, pauseRoot!, pauseCilium!]));
    expect(r.calls).toEqual([
      'patch argoproj.io/v1alpha1 Application argocd/cilium {"spec":{"syncPolicy":{"automated":{"prune":true,"selfHeal":true}}}}',
      'patch argoproj.io/v1alpha1 Application argocd/root {"spec":{"syncPolicy":{"automated":{"selfHeal":true}}}}',
    ]);
    expect(r.journaled.map((j) => j.data)).toEqual([
      { owner: 'Application argocd/cilium', resumed: true },
      { owner: 'Application argocd/root', resumed: true },
    ] satisfies GitopsGivenBack[]);
  });

  it('a run stopped after a change leaves them paused, saying why and how to resume', async () => {
    const r = recorder();
    const [pauseRoot, pauseCilium] = suspends();
    const cilium = plan.phases[1]!.steps.find((s) => s.kind !== 'gitops-suspend')!;
    await h.onStop!.giveBack(stopContext(r, [pauseRoot!, pauseCilium!, cilium]));
    expect(r.calls).toEqual([]);
    expect(r.journaled.map((j) => [j.ok, j.data])).toEqual([
      [false, { owner: 'Application argocd/cilium', resumed: false }],
      [false, { owner: 'Application argocd/root', resumed: false }],
    ]);
    expect(r.logs[0]).toContain(
      `left paused: Application argocd/cilium: the run has changed the cluster (${cilium.id}`,
    );
    expect(r.logs[0]).toContain(
      `kubectl -n argocd patch applications.argoproj.io cilium --type=merge -p '{"spec":{"syncPolicy":{"automated":{"prune":true,"selfHeal":true}}}}'`,
    );
  });

  it('gives nothing back once the resume steps are done', async () => {
    const r = recorder();
    await h.onStop!.giveBack(stopContext(r, suspends()));
    expect(r.calls).toEqual([]);
  });

  it('a resumed run pauses again what the stop resumed', () => {
    const [pauseRoot, pauseCilium] = suspends();
    const at = '2026-09-01T12:00:00.000Z';
    const later = '2026-09-01T12:05:00.000Z';
    const transitions: TransitionRow[] = [pauseRoot!, pauseCilium!].map((s, i) => ({
      seq: i + 1,
      runId: 'r1',
      stepId: s.id,
      attempt: 1,
      state: 'done',
      at,
      detail: null,
    }));
    const observations: ObservationRow[] = [
      {
        seq: 1,
        runId: 'r1',
        stepId: 'stopped-here',
        purpose: 'gitops-given-back',
        ok: true,
        at: later,
        data: { owner: 'Application argocd/cilium', resumed: true } satisfies GitopsGivenBack,
      },
    ];
    const point = resumePoint(transitions, observations, allSteps(plan));
    expect(point.finished.has(pauseRoot!.id)).toBe(true);
    expect(point.finished.has(pauseCilium!.id)).toBe(false);
    expect(point.rewound).toEqual([
      { stepId: pauseCilium!.id, why: 'the run resumed Application argocd/cilium when it stopped' },
    ]);
  });
});
