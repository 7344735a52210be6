import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../snapshot/model.js';
import { runAudit } from '../engine.js';
import { revertsFerryChanges, touchedObjects } from './gitops.js';
import { inventoryId, ownerIndex } from './gitops-owners.js';
import { app, cilium, kustomization, tracking } from './testing-gitops.js';
import { configMap, daemonSet } from './testing-network.js';
import { contextOf, findings, merge, pdb, snapshotOf, workload } from './testing-workload.js';

const check = (resources: Parameters<typeof contextOf>[0]) =>
  findings(revertsFerryChanges.check(contextOf(resources)));

describe('gitops.reverts-ferry-changes: Argo CD', () => {
  it('is a blocker for an Application with self-heal that tracks the Cilium agent, with the pause and the exact resume', () => {
    const ds = cilium();
    ds.metadata.annotations = { 'argocd.argoproj.io/tracking-id': tracking('cilium', ds) };
    const fs = check({
      daemonsets: [ds],
      configmaps: [configMap('kube-system', 'cilium-config', { 'kube-proxy-replacement': 'false' })],
      gitops: [app('cilium', { prune: true, selfHeal: true })],
    });
    expect(fs).toHaveLength(1);
    const f = fs[0]!;
    expect(f.severity).toBe('blocker');
    expect(f.subject).toEqual({
      kind: 'Application',
      group: 'argoproj.io',
      namespace: 'argocd',
      name: 'cilium',
    });
    expect(f.message).toMatch(/^Argo CD Application argocd\/cilium owns DaemonSet kube-system\/cilium/);
    expect(f.message).toContain('self-heal');
    expect(f.evidence[0]).toMatchObject({
      object: { kind: 'DaemonSet', name: 'cilium' },
      observed: 'annotation argocd.argoproj.io/tracking-id: cilium:apps/DaemonSet:kube-system/cilium',
    });
    expect(f.evidence.at(-1)).toMatchObject({
      object: { kind: 'Application' },
      field: 'spec.syncPolicy.automated',
      observed: '{"prune":true,"selfHeal":true}',
    });
    expect(f.remediation).toContain(
      `kubectl -n argocd patch applications.argoproj.io cilium --type=merge -p '{"spec":{"syncPolicy":{"automated":null}}}'`,
    );
    expect(f.remediation).toContain(
      `kubectl -n argocd patch applications.argoproj.io cilium --type=merge -p '{"spec":{"syncPolicy":{"automated":{"prune":true,"selfHeal":true}}}}'`,
    );
    expect(f.remediation).toContain('https://git.example.com/platform.git (path apps/cilium)');
  });

  it('grades by sync policy: automated without self-heal is a risk, manual or disabled is info', () => {
    const ds = cilium({ labels: { 'app.kubernetes.io/instance': 'cilium' } });
    const severity = (automated: unknown) =>
      check({ daemonsets: [ds], gitops: [app('cilium', automated)] }).map((f) => f.severity);
    expect(severity({ prune: true })).toEqual(['risk']);
    expect(severity({})).toEqual(['risk']);
    expect(severity({ enabled: false, selfHeal: true })).toEqual(['info']);
    expect(severity(undefined)).toEqual(['info']);
    expect(severity({ selfHeal: true })).toEqual(['blocker']);
  });

  it('takes the instance label as an owner only when an Application of that name exists (Helm sets it too)', () => {
    const ds = cilium({ labels: { 'app.kubernetes.io/instance': 'cilium' } });
    expect(check({ daemonsets: [ds], gitops: [] })).toEqual([]);
    expect(check({ daemonsets: [ds], gitops: [app('other', { selfHeal: true })] })).toEqual([]);
  });

  it('finds the owner in an Application status.resources, and with applications in any namespace', () => {
    const a = app('net', { selfHeal: true }, { namespace: 'team-net' });
    a.status = {
      resources: [{ group: 'apps', kind: 'DaemonSet', namespace: 'kube-system', name: 'cilium' }],
    };
    expect(check({ daemonsets: [cilium()], gitops: [a] }).map((f) => f.subject?.namespace)).toEqual([
      'team-net',
    ]);
    const ds = cilium({
      annotations: { 'argocd.argoproj.io/tracking-id': 'team-net_net:apps/DaemonSet:kube-system/cilium' },
    });
    expect(
      check({ daemonsets: [ds], gitops: [app('net', { selfHeal: true }, { namespace: 'team-net' })] }),
    ).toHaveLength(1);
  });

  it('fails closed on a tracking id naming an Application the snapshot does not hold', () => {
    const ds = cilium();
    ds.metadata.annotations = { 'argocd.argoproj.io/tracking-id': tracking('infra-cilium', ds) };
    const [f] = check({ daemonsets: [ds], gitops: [] });
    expect(f!.severity).toBe('blocker');
    expect(f!.subject).toEqual({ kind: 'Application', group: 'argoproj.io', name: 'infra-cilium' });
    expect(f!.message).toContain('was not seen');
    expect(f!.remediation).toContain('argocd app set infra-cilium --sync-policy none');
  });

  it('names an app of apps that would undo the pause', () => {
    const ds = cilium();
    ds.metadata.annotations = { 'argocd.argoproj.io/tracking-id': tracking('cilium', ds) };
    const child = app(
      'cilium',
      { selfHeal: true },
      { tracking: 'root:argoproj.io/Application:argocd/cilium' },
    );
    const [f] = check({ daemonsets: [ds], gitops: [child, app('root', { selfHeal: true })] });
    expect(f!.remediation).toContain(
      'Argo CD Application argocd/root manages this one and would undo the pause',
    );
    // A parent that only syncs by hand does not undo it.
    const [g] = check({ daemonsets: [ds], gitops: [child, app('root', undefined)] });
    expect(g!.remediation).not.toContain('root');
  });
});

describe('gitops.reverts-ferry-changes: Flux', () => {
  it('finds a Kustomization through its inventory, a blocker unless suspended', () => {
    const cm = configMap('kube-system', 'coredns', { Corefile: '.:53 {\n}\n' });
    const inventory = [inventoryId(cm)];
    expect(inventory).toEqual(['kube-system_coredns__ConfigMap']);
    const [f] = check({ configmaps: [cm], gitops: [kustomization('dns', { inventory })] });
    expect(f!.severity).toBe('blocker');
    expect(f!.subject).toMatchObject({ kind: 'Kustomization', namespace: 'flux-system', name: 'dns' });
    expect(f!.message).toContain('Talos adopts CoreDNS');
    expect(f!.remediation).toContain(
      `kubectl -n flux-system patch kustomizations.kustomize.toolkit.fluxcd.io dns --type=merge -p '{"spec":{"suspend":true}}'`,
    );
    expect(f!.remediation).toContain(`-p '{"spec":{"suspend":false}}'`);
    expect(f!.remediation).toContain('GitRepository flux-system, path ./infrastructure/dns');
    const [g] = check({ configmaps: [cm], gitops: [kustomization('dns', { inventory, suspend: true })] });
    expect(g!.severity).toBe('info');
  });

  it('names the parent Kustomization that would un-suspend a child', () => {
    const ds = cilium({
      labels: {
        'kustomize.toolkit.fluxcd.io/name': 'cilium',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    });
    const child = kustomization('cilium', {
      labels: {
        'kustomize.toolkit.fluxcd.io/name': 'flux-system',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    });
    const [f] = check({ daemonsets: [ds], gitops: [child, kustomization('flux-system')] });
    expect(f!.remediation).toContain('Flux Kustomization flux-system/flux-system manages this one');
  });

  it('fails closed on Flux labels naming a Kustomization the snapshot does not hold', () => {
    const ds = cilium({
      labels: {
        'kustomize.toolkit.fluxcd.io/name': 'infra',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
      },
    });
    const [f] = check({ daemonsets: [ds], gitops: [] });
    expect(f!.severity).toBe('blocker');
    expect(f!.remediation).toContain('flux suspend kustomization infra -n flux-system');
  });

  it('finds the HelmRelease behind a Helm release (releaseName, targetNamespace)', () => {
    const ds = cilium({
      annotations: { 'meta.helm.sh/release-name': 'cilium', 'meta.helm.sh/release-namespace': 'kube-system' },
    });
    const hr: KubeObject = {
      apiVersion: 'helm.toolkit.fluxcd.io/v2',
      kind: 'HelmRelease',
      metadata: { name: 'cni', namespace: 'flux-system' },
      spec: { releaseName: 'cilium', targetNamespace: 'kube-system', interval: '1h' },
    };
    const [f] = check({ daemonsets: [ds], gitops: [hr] });
    expect(f!.subject).toMatchObject({ kind: 'HelmRelease', group: 'helm.toolkit.fluxcd.io', name: 'cni' });
    expect(f!.remediation).toContain('patch helmreleases.helm.toolkit.fluxcd.io cni');
    // The default release name is [targetNamespace-]name: "kube-system-cni" is not "cilium".
    const noName = { ...hr, spec: { targetNamespace: 'kube-system' } };
    expect(check({ daemonsets: [ds], gitops: [noName] })).toEqual([]);
    expect(
      ownerIndex([noName]).ownersOf({
        ...ds,
        metadata: {
          ...ds.metadata,
          annotations: {
            'meta.helm.sh/release-name': 'kube-system-cni',
            'meta.helm.sh/release-namespace': 'kube-system',
          },
        },
      }),
    ).toHaveLength(1);
  });
});

describe('gitops.reverts-ferry-changes: what the migration touches', () => {
  it('includes the workloads behind a blocking PodDisruptionBudget, not the others', () => {
    const spec = { containers: [{ name: 'c', image: 'c:1' }] };
    const db = workload('StatefulSet', 'shop', 'db', spec, { pods: ['w1', 'w2'], labels: { app: 'db' } });
    const web = workload('Deployment', 'shop', 'web', spec, { pods: ['w1'], labels: { app: 'web' } });
    for (const w of [db.controller, web.controller])
      w.metadata.annotations = { 'argocd.argoproj.io/tracking-id': tracking('shop', w) };
    const budget = pdb('shop', 'db', { minAvailable: 2, selector: { matchLabels: { app: 'db' } } });
    const resources = merge(db.objects, web.objects, {
      poddisruptionbudgets: [budget],
      gitops: [app('shop', { selfHeal: true })],
    });
    const touched = touchedObjects(contextOf(resources)).map(
      (t) => `${t.object.kind}/${t.object.metadata.name}`,
    );
    expect(touched).toEqual(['PodDisruptionBudget/db', 'StatefulSet/db']);
    const [f] = check(resources);
    expect(f!.message).toContain('StatefulSet shop/db');
    expect(f!.message).toContain(
      '--surge-replicas scales it up by one while PodDisruptionBudget shop/db holds its drains',
    );
    expect(f!.message).not.toContain('shop/web');
  });

  it('reports Terraform-managed objects as a risk with the runbook, and nothing for owners of untouched objects', () => {
    const ds = cilium({ labels: { 'app.kubernetes.io/managed-by': 'Terraform' } });
    const [f] = check({ daemonsets: [ds] });
    expect(f!.severity).toBe('risk');
    expect(f!.message).toMatch(/^Terraform owns DaemonSet kube-system\/cilium/);
    expect(f!.remediation).toContain("the kit's tofu/cluster-objects/ imports them");
    const other = daemonSet('monitoring', 'node-exporter', {
      labels: { 'app.kubernetes.io/managed-by': 'terraform' },
    });
    expect(check({ daemonsets: [other] })).toEqual([]);
  });

  it('is skipped, not passed, when the GitOps lists were refused', () => {
    const snapshot = snapshotOf({ daemonsets: [cilium()] });
    snapshot.manifest.unobserved = [
      {
        input: 'gitops',
        reason: 'forbidden',
        verb: 'list',
        group: 'argoproj.io',
        resource: 'applications',
        message: 'applications.argoproj.io is forbidden',
      },
    ];
    const ctx = contextOf({ daemonsets: [cilium()] });
    const report = runAudit({ ...ctx, snapshot, rules: [revertsFerryChanges], now: new Date(0) });
    expect(report.rules.map((r) => r.outcome)).toEqual(['skipped']);
    expect(report.skipped[0]).toMatchObject({ ruleId: 'gitops.reverts-ferry-changes' });
  });
});
