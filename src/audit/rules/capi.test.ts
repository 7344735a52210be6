/**
 * The capi.* rules on the offline fixture src/snapshot/fixtures/mgmt-hazards (one hazard per object), and
 * on the management cluster as ferry's kit leaves it (the generated objects, the status patch
 * applied, the Secrets created; for the move rule, once handed over): each rule finds its hazard in
 * the first and nothing in the second.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { MgmtSnapshot } from '../../snapshot/model.js';
import { makeContext } from '../testing.js';
import { CAPI_RULES } from './capi.js';
import { adopted, findings, handedOver, loadHazards, run, withCcm, withMgmt } from './testing-capi.js';

let hazards: MgmtSnapshot;
beforeAll(async () => {
  hazards = await loadHazards();
});

describe('capi.* rules', () => {
  it('the fixture is read as the snapshot stores it: Secrets without values, CRDs summarised', () => {
    expect(hazards.crds.map((c) => c.name)).toEqual(['clusters.cluster.x-k8s.io']);
    const creds = hazards.objects.find((o) => o.metadata.name === 'lab-proxmox-credentials')!;
    expect(creds['data']).toEqual({ url: '', token: '', secret: '' });
  });

  const cases: [string, RegExp[]][] = [
    [
      'capi.tcp-etcd-audit',
      [/not paused while kubeadm etcd members cp-1/, /runs as Node talos-7xq-4lm/, /v0\.5\.12/],
    ],
    ['capi.bootstrap-split-brain', [/status\.bootstrapped false/]],
    ['capi.secrets-not-precreated', [/lab-talos does not exist/, /lab-ca lacks tls\.key/]],
    ['capi.secret-not-moved', [/lab-proxmox-credentials/]],
    ['capi.machineset-preflight-hold', [/lab-workers does not skip/]],
    [
      'capi.providerid-missing',
      [/no cloud-controller-manager/, /lab-worker does not inject/, /lab-workers-6d9f7-x2v8p is Provisioned/],
    ],
    ['capi.contract-v1beta1', [/v1\.16\.0/, /does not serve v1beta1/]],
    [
      'capi.talosconfig-drift',
      [
        /Machine lab-control-plane-8f2kq's TalosConfig lab-control-plane-8f2kq differs .* in talosVersion, strategicPatches\[0\]/,
      ],
    ],
    [
      'capi.move-paused-or-unstable',
      [
        /^Cluster lab is not steady: no Ready or Available condition is True; its infrastructure is not provisioned; its control plane is not initialized/,
        /^Machine lab-workers-6d9f7-x2v8p of Cluster lab is not steady: its phase is Provisioned, not Running; it has no nodeRef/,
        /^TalosControlPlane lab-control-plane is mid-roll: 2 replicas exist, 1 wanted; condition MachinesSpecUpToDate is False/,
        /^MachineDeployment lab\/lab-workers-data carries the cluster\.x-k8s\.io\/paused annotation: cluster lab\/lab is mid-migration/,
      ],
    ],
    [
      'capi.controllers-not-ha',
      [
        /^cluster-api \(Deployment capi-system\/capi-controller-manager\) runs 1 replica: /,
        /^control-plane-talos \(Deployment cacppt-system\/cacppt-controller-manager\) runs 2 replicas without leader election/,
        /^infrastructure-proxmox \(Deployment capmox-system\/capmox-controller-manager\) runs 2 replicas that nothing keeps on different nodes/,
        /^cluster-api-operator \(Deployment capi-operator-system\/capi-operator-cluster-api-operator\) runs 1 replica: /,
      ],
    ],
    [
      'capi.operator-inventory',
      [/^InfrastructureProvider proxmox v0\.9\.0 was installed by the CAPI Operator/],
    ],
    [
      'capi.json-patches-multidoc',
      [
        /TalosConfigTemplate lab-workers has JSON patch .*configPatches\[0\] \(add \/machine\/install\/disk\) while talosVersion v1\.12/,
      ],
    ],
  ];
  for (const [id, expected] of cases) {
    it(`${id}: finds its hazard in the fixture, nothing once ferry adopted`, () => {
      const bad = findings(run(id, withMgmt(hazards)));
      expect(bad.map((f) => f.message)).toHaveLength(expected.length);
      for (const re of expected)
        expect(
          bad.some((f) => re.test(f.message)),
          String(re),
        ).toBe(true);
      for (const f of bad) expect(f.evidence.length).toBeGreaterThan(0);
      // A move is only safe once ferry has handed over: mid-adoption the paused TalosControlPlane is its finding.
      const clean = id === 'capi.move-paused-or-unstable' ? handedOver() : adopted();
      expect(findings(run(id, withMgmt(clean, withCcm)))).toEqual([]);
    });
  }

  it('without the management cluster every capi rule is skipped, saying how to provide it', () => {
    for (const r of CAPI_RULES) {
      const out = r.check(makeContext(withMgmt(undefined), { provisioner: 'capi' }));
      expect(out, r.id).toMatchObject({ kind: 'skipped' });
    }
  });

  it('capi.tcp-etcd-audit fails closed: an unpaused TCP with no view of the etcd members is not a pass', () => {
    const s = withMgmt(hazards, (x) => {
      delete x.etcd;
      x.manifest.parts = x.manifest.parts.filter((p) => p !== 'resources' && p !== 'etcd');
    });
    expect(run('capi.tcp-etcd-audit', s)).toMatchObject({ kind: 'skipped' });
  });

  it('capi.tcp-etcd-audit: a paused TCP passes while kubeadm members remain; unpaused once none remains passes too', () => {
    const paused = structuredClone(hazards);
    const tcp = paused.objects.find((o) => o.kind === 'TalosControlPlane')!;
    tcp.metadata.annotations = { 'cluster.x-k8s.io/paused': 'true' };
    expect(
      findings(run('capi.tcp-etcd-audit', withMgmt(paused))).some((f) => /not paused/.test(f.message)),
    ).toBe(false);
    const adoptedTcp = adopted();
    const t = adoptedTcp.objects.find((o) => o.kind === 'TalosControlPlane')!;
    delete t.metadata.annotations;
    // Unpaused with kubeadm members still there: the finding.
    expect(
      findings(run('capi.tcp-etcd-audit', withMgmt(adoptedTcp)))
        .map((f) => f.message)
        .join(),
    ).toMatch(/not paused/);
  });
});
