/**
 * capi.talosconfig-drift and capi.json-patches-multidoc on the management cluster ferry's kit
 * leaves, bent one field at a time (the fixture cases are in capi.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, MgmtSnapshot } from '../../snapshot/model.js';
import { adopted, findings, run, withMgmt } from './testing-capi.js';

/** The adopted cluster with one control-plane Machine whose TalosConfig is `config` (a copy of the TCP spec by default). */
function withCpMachine(bend: (config: KubeObject, tcp: KubeObject) => void = () => {}): MgmtSnapshot {
  const m = adopted();
  const tcp = m.objects.find((o) => o.kind === 'TalosControlPlane')!;
  const config: KubeObject = {
    apiVersion: 'bootstrap.cluster.x-k8s.io/v1alpha3',
    kind: 'TalosConfig',
    metadata: { name: 'lab-control-plane-abcde', namespace: 'lab' },
    spec: structuredClone(tcp.spec.controlPlaneConfig.controlplane),
  };
  const machine: KubeObject = {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: {
      name: 'lab-control-plane-abcde',
      namespace: 'lab',
      labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
    },
    spec: {
      clusterName: 'lab',
      bootstrap: {
        configRef: {
          apiGroup: 'bootstrap.cluster.x-k8s.io',
          kind: 'TalosConfig',
          name: config.metadata.name,
        },
      },
    },
  };
  m.objects.push(machine, config);
  bend(config, tcp);
  return m;
}

describe('capi.talosconfig-drift', () => {
  it('a TalosConfig equal to the TalosControlPlane spec is no drift', () => {
    expect(findings(run('capi.talosconfig-drift', withMgmt(withCpMachine())))).toEqual([]);
  });

  it('names the Machine, the TalosConfig and each differing field, with both values', () => {
    const m = withCpMachine((c) => {
      c.spec.talosVersion = 'v1.11';
      c.spec.strategicPatches = [...c.spec.strategicPatches, 'machine: {}'];
    });
    const [f, ...rest] = findings(run('capi.talosconfig-drift', withMgmt(m)));
    expect(rest).toEqual([]);
    expect(f!.message).toMatch(
      /^Machine lab-control-plane-abcde's TalosConfig lab-control-plane-abcde differs from TalosControlPlane lab-control-plane's controlPlaneConfig\.controlplane in talosVersion, strategicPatches\[0\]:/,
    );
    // The kit's TCP rolls OnDelete: the Machine is the first one a scale-down removes.
    expect(f!.message).toMatch(/OnDelete/);
    expect(f!.evidence.map((e) => ('field' in e ? e.field : undefined))).toEqual([
      'spec.talosVersion',
      'spec.strategicPatches[0]',
    ]);
    expect(f!.evidence[0]).toMatchObject({ observed: '"v1.11"' });
  });

  it('with the default RollingUpdate strategy it says CACPPT replaces the control planes', () => {
    const m = withCpMachine((c, tcp) => {
      c.spec.talosVersion = 'v1.11';
      delete tcp.spec.rolloutStrategy;
    });
    expect(findings(run('capi.talosconfig-drift', withMgmt(m)))[0]!.message).toMatch(
      /RollingUpdate it replaces/,
    );
  });

  it('fails closed: a TalosConfig missing from the snapshot, or a Machine naming none, is skipped, not passed', () => {
    const missing = withCpMachine();
    missing.objects = missing.objects.filter((o) => o.kind !== 'TalosConfig');
    expect(run('capi.talosconfig-drift', withMgmt(missing))).toMatchObject({
      kind: 'skipped',
      missing: ['TalosConfig lab-control-plane-abcde of Machine lab-control-plane-abcde'],
    });
    const noRef = withCpMachine();
    delete noRef.objects.find((o) => o.kind === 'Machine')!.spec.bootstrap;
    expect(run('capi.talosconfig-drift', withMgmt(noRef))).toMatchObject({ kind: 'skipped' });
  });
});

describe('capi.json-patches-multidoc', () => {
  const patched = (bend: (tcpConfig: Record<string, unknown>) => void) => {
    const m = adopted();
    const tcp = m.objects.find((o) => o.kind === 'TalosControlPlane')!;
    tcp.spec.controlPlaneConfig.controlplane.configPatches = [
      { op: 'replace', path: '/cluster/network/cni', value: { name: 'none' } },
    ];
    bend(tcp.spec.controlPlaneConfig.controlplane);
    return findings(run('capi.json-patches-multidoc', withMgmt(m)));
  };

  it('the kit uses strategic patches only: nothing', () => {
    expect(findings(run('capi.json-patches-multidoc', withMgmt(adopted())))).toEqual([]);
  });

  it("a JSON patch in the TalosControlPlane fires for the kit's Talos version and for an unset one", () => {
    const [f] = patched(() => {});
    expect(f!.message).toMatch(
      /^TalosControlPlane lab-control-plane has JSON patch spec\.controlPlaneConfig\.controlplane\.configPatches\[0\] \(replace \/cluster\/network\/cni\) while talosVersion v1\.1\d/,
    );
    expect(f!.remediation).toMatch(/paused/);
    expect(patched((c) => delete c['talosVersion'])[0]!.message).toMatch(/talosVersion is unset/);
  });

  it('before Talos 1.12 the config is one document, unless a strategic patch adds one', () => {
    expect(
      patched((c) => {
        c['talosVersion'] = 'v1.11';
        c['strategicPatches'] = ['machine:\n  install:\n    disk: /dev/sda\n'];
      }),
    ).toEqual([]);
    expect(
      patched((c) => {
        c['talosVersion'] = 'v1.11';
        c['strategicPatches'] = ['apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp-a\n'];
      })[0]!.message,
    ).toMatch(/a strategic patch adds a separate config document/);
  });
});
