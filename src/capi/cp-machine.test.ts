import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { cpMachineObjects, nameSuffix } from './cp-machine.js';

const tcp = (spec: Record<string, unknown>, uid: string | null = 'u-1'): KubeObject => ({
  apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
  kind: 'TalosControlPlane',
  metadata: { name: 'cp', namespace: 'ns', ...(uid && { uid }) },
  spec,
});
const full = {
  version: 'v1.33.1',
  infrastructureTemplate: {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
    kind: 'ProxmoxMachineTemplate',
    name: 'cp-tpl',
  },
  controlPlaneConfig: { controlplane: { generateType: 'controlplane', strategicPatches: ['a: 1'] } },
};
const template: KubeObject = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
  kind: 'ProxmoxMachineTemplate',
  metadata: { name: 'cp-tpl', namespace: 'ns' },
  spec: { template: { spec: { numCores: 4 } } },
};

describe('cpMachineObjects', () => {
  it('one name for the three; the TalosConfig spec is the TCP’s control-plane config; the TCP the controller of the Machine', () => {
    const o = cpMachineObjects({ tcp: tcp(full), template, cluster: 'lab', suffix: 'ab1cd' });
    if ('error' in o) throw new Error(o.error);
    expect(o.name).toBe('cp-ab1cd');
    expect(o.infra).toMatchObject({
      kind: 'ProxmoxMachine',
      metadata: { name: 'cp-ab1cd' },
      spec: { numCores: 4 },
    });
    expect(o.infra.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe('cp-tpl');
    expect(o.talosConfig.spec).toEqual(full.controlPlaneConfig.controlplane);
    expect(o.talosConfig.spec).not.toBe(full.controlPlaneConfig.controlplane);
    expect(o.machine.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
        kind: 'TalosControlPlane',
        name: 'cp',
        uid: 'u-1',
        controller: true,
      },
    ]);
    expect(o.machine.spec).toEqual({
      clusterName: 'lab',
      version: 'v1.33.1',
      bootstrap: {
        configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'TalosConfig', name: 'cp-ab1cd' },
      },
      infrastructureRef: {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'ProxmoxMachine',
        name: 'cp-ab1cd',
      },
    });
  });
  it('says what the TCP lacks', () => {
    const { controlPlaneConfig: _c, ...noConfig } = full;
    const { version: _v, ...noVersion } = full;
    const { infrastructureTemplate: _t, ...noTemplate } = full;
    const err = (t: KubeObject) => cpMachineObjects({ tcp: t, template, cluster: 'lab', suffix: 'x' });
    expect(err(tcp(noConfig))).toEqual({ error: 'spec.controlPlaneConfig.controlplane is missing' });
    expect(err(tcp(noVersion))).toEqual({ error: 'spec.version is missing' });
    expect(err(tcp(noTemplate))).toMatchObject({ error: expect.stringMatching(/infrastructureTemplate/) });
    expect(err(tcp(full, null))).toMatchObject({ error: expect.stringMatching(/uid/) });
  });
  it('names end in five lowercase alphanumerics', () => {
    expect(nameSuffix()).toMatch(/^[a-z0-9]{5}$/);
  });
});
