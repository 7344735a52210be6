import { describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { CONTROL_PLANES } from './testing-etcd.js';
import {
  buildSnapshot,
  clusterConfiguration,
  contextOf,
  controlPlanePods,
  etcdPod,
  findings,
  node,
} from './testing-network.js';
import { k8sOutsideTalosWindow, k8sPatchMismatch, releasesFor } from './version.js';

/** Control planes running the given apiserver/KCM/scheduler versions, in cp order. */
const pods = (versions: string[]) =>
  CONTROL_PLANES.flatMap(([n, ip], i) => [...controlPlanePods(n, ip, versions[i]), etcdPod(n, ip)]);

const cluster = (version: string, kubelet = version) =>
  buildSnapshot({
    cc: clusterConfiguration({ kubernetesVersion: version }),
    staticPods: pods([version, version, version]),
    resources: {
      nodes: CONTROL_PLANES.map(([n, ip]) => node(n, { ip, controlPlane: true, kubeletVersion: kubelet })),
    },
  });

describe('version.k8s-outside-talos-window', () => {
  it('does not fire inside the window (v1.32 on Talos v1.13: 1.31–1.36)', () => {
    expect(k8sOutsideTalosWindow.check(contextOf(cluster('v1.32.4')))).toEqual([]);
  });

  it('fires for a control plane below the v1.14 window, naming releases that fit', () => {
    const f = findings(
      k8sOutsideTalosWindow.check(contextOf(cluster('v1.31.7'), { talosVersion: 'v1.14' })),
    )[0]!;
    expect(f.message).toContain('Kubernetes v1.31.7; Talos v1.14.0-rc.1 supports Kubernetes 1.32 – 1.37.x');
    expect(f.remediation).toContain('v1.13');
    expect(f.evidence[0]).toMatchObject({ kind: 'file', field: 'image' });
  });

  it('fires for old kubelets even when the control plane fits', () => {
    const fs = findings(k8sOutsideTalosWindow.check(contextOf(cluster('v1.32.4', 'v1.30.2'))));
    expect(fs.map((f) => f.subject?.name)).toEqual(['nodes.kubeletVersions']);
    expect(fs[0]!.message).toContain('v1.30.2 (3 node(s))');
  });

  it('fires for a --kubernetes-version outside the window', () => {
    const fs = findings(
      k8sOutsideTalosWindow.check(contextOf(cluster('v1.32.4'), { kubernetesVersion: 'v1.37.0' })),
    );
    expect(fs.map((f) => f.field)).toEqual(['kubernetesVersion']);
  });

  it('knows which Talos lines support a version', () => {
    expect(releasesFor(['v1.32.4'])).toEqual(['v1.10', 'v1.11', 'v1.12', 'v1.13', 'v1.14']);
    expect(releasesFor(['v1.28.1'])).toEqual(['v1.10']);
    expect(releasesFor(['v1.27.0'])).toEqual([]);
  });
});

describe('version.k8s-patch-mismatch', () => {
  it('does not fire when every control-plane component runs the target version (example cluster)', async () => {
    expect(k8sPatchMismatch.check(contextOf(await exampleSnapshot()))).toEqual([]);
  });

  it('fires for control planes on different patches (the target defaults to the lowest)', () => {
    const s = buildSnapshot({ staticPods: pods(['v1.32.3', 'v1.32.4', 'v1.32.4']) });
    const fs = findings(k8sPatchMismatch.check(contextOf(s)));
    expect(fs.map((f) => f.subject?.name)).toEqual([
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    expect(fs[0]!.message).toContain('runs v1.32.4 on cp-2, cp-3; Talos control planes would run v1.32.3');
  });

  it('fires when --kubernetes-version makes the migration an upgrade', () => {
    const fs = findings(
      k8sPatchMismatch.check(contextOf(cluster('v1.32.4'), { kubernetesVersion: 'v1.33.1' })),
    );
    expect(fs).toHaveLength(3);
    expect(fs[0]!.evidence).toHaveLength(3);
  });

  it('is skipped without a version to compare', () => {
    const s = buildSnapshot({ cc: null, staticPods: [] });
    expect(k8sPatchMismatch.check(contextOf(s))).toMatchObject({ kind: 'skipped' });
  });
});
