/**
 * The GitOps commands ferry tells an operator to type, typed as written: the plan's pause and
 * resume of an Argo CD Application and a Flux HelmRelease, and the kit README's annotation that
 * keeps kube-proxy alive when it leaves the repository, run by bash with the real kubectl against
 * a lab API server serving the upstream Argo CD and Flux CRDs; then the snapshot's collection
 * reads the owners back through ferry's own kube adapter.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKubeconfig } from '../../adapters/kube/kubeconfig.js';
import { createKubeReader } from '../../adapters/kube/reader.js';
import { createRequester, type KubeRequester } from '../../adapters/kube/request.js';
import type { PauseTarget } from '../../audit/rules/gitops.js';
import { ownerGroups } from '../../audit/rules/gitops.js';
import { ownerIndex } from '../../audit/rules/gitops-owners.js';
import { tracking } from '../../audit/rules/testing-gitops.js';
import { daemonSet } from '../../audit/rules/testing-network.js';
import { contextOf } from '../../audit/rules/testing-workload.js';
import { gitopsArtifacts } from '../../generate/gitops.js';
import { gitopsPauseSteps, gitopsResumeSteps } from '../../plan/gitops-steps.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../apiserver/testing.js';
import { kubectlMissing, skipFor } from '../testing-binaries.js';
import { installLabGitopsCrds } from './crds.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;
let api: KubeRequester;

/** A command line as the operator types it: bash, with the kubeconfig in the environment. */
const typed = (line: string) =>
  run('bash', ['-c', line], { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 20_000 });

const application: KubeObject = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'cilium', namespace: 'argocd' },
  spec: {
    project: 'default',
    source: { repoURL: 'https://git.example.com/platform.git', path: 'apps/cilium', targetRevision: 'main' },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'kube-system' },
    syncPolicy: { automated: { prune: true, selfHeal: true } },
  },
};
const helmRelease: KubeObject = {
  apiVersion: 'helm.toolkit.fluxcd.io/v2',
  kind: 'HelmRelease',
  metadata: { name: 'cni', namespace: 'flux-system' },
  spec: {
    interval: '1h',
    releaseName: 'cilium',
    targetNamespace: 'kube-system',
    chart: { spec: { chart: 'cilium', sourceRef: { kind: 'HelmRepository', name: 'cilium' } } },
  },
};

const get = async (path: string) => (await api.request('GET', path)) as KubeObject;
const APP = '/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/cilium';
const HR = '/apis/helm.toolkit.fluxcd.io/v2/namespaces/flux-system/helmreleases/cni';

beforeAll(async () => {
  if (noKubectl) return;
  lab = await startLabApi();
  dir = await mkdtemp(join(tmpdir(), 'ferry-lab-gitops-'));
  kubeconfig = join(dir, 'admin.conf');
  await writeAdminKubeconfig(lab, kubeconfig);
  api = createRequester(loadKubeconfig(kubeconfig));
  await installLabGitopsCrds(api);
  for (const ns of ['argocd', 'flux-system'])
    await api.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
  await api.request('POST', '/apis/argoproj.io/v1alpha1/namespaces/argocd/applications', {
    body: application,
  });
  await api.request('POST', '/apis/helm.toolkit.fluxcd.io/v2/namespaces/flux-system/helmreleases', {
    body: helmRelease,
  });
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The plan's pause and resume command lines for one owner. */
function commands(target: PauseTarget): { pause: string; resume: string } {
  const [pause] = gitopsPauseSteps([target]);
  const [resume] = gitopsResumeSteps([target]);
  return { pause: pause!.action.commands[0]!.run, resume: resume!.action.commands[0]!.run };
}

describe.skipIf(skipFor(noKubectl))('the GitOps commands ferry prints, typed into the real kubectl', () => {
  it("pauses an Application's automated sync and gives it back exactly as it was", async () => {
    const c = commands({ kind: 'Application', object: application, owns: [] });
    await typed(c.pause);
    expect((await get(APP)).spec?.syncPolicy).toEqual({});
    await typed(c.resume);
    expect((await get(APP)).spec?.syncPolicy).toEqual({ automated: { prune: true, selfHeal: true } });
  });

  it('suspends a HelmRelease and resumes it to no suspend field at all, as it had', async () => {
    const c = commands({ kind: 'HelmRelease', object: helmRelease, owns: [] });
    await typed(c.pause);
    expect((await get(HR)).spec?.suspend).toBe(true);
    await typed(c.resume);
    const back = await get(HR);
    expect(back.spec && 'suspend' in back.spec).toBe(false);
  });

  it("the kit README's keep-alive annotation lands on kube-proxy beside its other sync options", async () => {
    const proxy = daemonSet('kube-system', 'kube-proxy', { selector: { 'k8s-app': 'kube-proxy' } });
    proxy.metadata.annotations = {
      'argocd.argoproj.io/tracking-id': tracking('base', proxy),
      'argocd.argoproj.io/sync-options': 'ServerSideApply=true',
    };
    const { uid: _uid, ...metadata } = proxy.metadata as KubeObject['metadata'] & { uid?: string };
    await api.request('POST', '/apis/apps/v1/namespaces/kube-system/daemonsets', {
      body: { ...proxy, metadata },
    });
    const base = { ...application, metadata: { name: 'base', namespace: 'argocd' } };
    const ctx = contextOf({ daemonsets: [proxy], gitops: [base] });
    const [readme] = gitopsArtifacts(ownerGroups(ctx, ownerIndex(ctx.snapshot.resources.gitops)), {
      ciliumValues: undefined,
      generatedBy: [],
    });
    const line = readme!.content
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith('kubectl ') && l.includes('annotate'));
    expect(line).toBeDefined();
    await typed(line!);
    const ds = await get('/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy');
    expect(ds.metadata.annotations?.['argocd.argoproj.io/sync-options']).toBe(
      'ServerSideApply=true,Prune=false',
    );
  });

  it('ferry lists the owners through its own adapter, as the snapshot does', async () => {
    const reader = createKubeReader({ kubeconfig });
    expect((await reader.list('argocd-applications')).map((o) => o.metadata.name).sort()).toEqual(['cilium']);
    expect((await reader.list('flux-helmreleases')).map((o) => o.metadata.name)).toEqual(['cni']);
    expect(await reader.list('flux-kustomizations')).toEqual([]);
  });
});
