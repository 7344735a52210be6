import { describe, expect, it } from 'vitest';
import { ccmInstallCommand } from '../generate/capi/ccm.js';
import type { KubeObject } from '../snapshot/model.js';
import { type ProviderIdInput, providerIdGate } from './providerid-gate.js';

function machine(name: string, phase: string, providerID?: string): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'capi' },
    spec: providerID === undefined ? {} : { providerID },
    status: { phase },
  } as KubeObject;
}

function template(name: string, injection: unknown, kind = 'ProxmoxMachineTemplate'): KubeObject {
  const metadataSettings = injection === undefined ? {} : { providerIDInjection: injection };
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
    kind,
    metadata: { name, namespace: 'capi' },
    spec: { template: { spec: { metadataSettings } } },
  } as KubeObject;
}

const base: ProviderIdInput = { machines: [], templates: [], ccmRunning: true, kitDir: '/k' };
const gate = (o: Partial<ProviderIdInput>) => providerIdGate({ ...base, ...o });

describe('providerIdGate', () => {
  it('passes when no Machine is Provisioned without a providerID', () => {
    expect(gate({}).kind).toBe('pass');
    expect(gate({ machines: [machine('a', 'Provisioned', 'proxmox://1')] }).kind).toBe('pass');
    expect(gate({ machines: [machine('b', 'Running')], ccmRunning: false }).kind).toBe('pass');
    expect(gate({ machines: [machine('c', 'Provisioning')], ccmRunning: null }).kind).toBe('pass');
  });

  it('names only the stuck Machines, namespaced, and says a CCM must set the id', () => {
    const g = gate({
      machines: [
        machine('ok', 'Running', 'proxmox://1'),
        machine('w-1', 'Provisioned'),
        machine('w-2', 'Provisioned'),
      ],
      ccmRunning: false,
    });
    if (g.kind !== 'stop') throw new Error('expected a stop');
    expect(g.machines).toEqual(['capi/w-1', 'capi/w-2']);
    expect(g.reason).toContain('capi/w-1, capi/w-2 are Provisioned without a providerID');
    expect(g.reason).toContain('no cloud-controller-manager runs in the workload cluster');
    expect(g.reason).not.toContain('could not see');
    expect(g.remediation).toBe(
      `deploy the kit's CCM on the workload cluster: ${ccmInstallCommand('/k/capi/talos-ccm-values.yaml')}`,
    );
  });

  it('says what it could not see instead of assuming no CCM runs', () => {
    const g = gate({ machines: [machine('w', 'Provisioned')], ccmRunning: null });
    if (g.kind !== 'stop') throw new Error('expected a stop');
    expect(g.reason).toContain('ferry could not see whether a cloud-controller-manager runs');
    expect(g.reason).not.toContain('no cloud-controller-manager runs');
    expect(g.reason).not.toContain('has not set their providerID');
  });

  it('with a CCM running and injection on, says the CCM has not set it yet', () => {
    const g = gate({ machines: [machine('w', 'Provisioned')], templates: [template('t', true)] });
    if (g.kind !== 'stop') throw new Error('expected a stop');
    expect(g.reason).toMatch(/: a cloud-controller-manager runs, but has not set their providerID$/);
    expect(g.remediation).not.toContain('providerIDInjection');
  });

  it('names each Proxmox template whose providerIDInjection is not true, and adds its fix', () => {
    const g = gate({
      machines: [machine('w', 'Provisioned')],
      templates: [
        template('on', true),
        template('off', false),
        template('unset', undefined),
        template('text', 'true'),
        template('vs', undefined, 'VSphereMachineTemplate'),
      ],
    });
    if (g.kind !== 'stop') throw new Error('expected a stop');
    expect(g.reason).toMatch(/providerIDInjection is not true in ProxmoxMachineTemplate off, unset, text$/);
    expect(g.reason).not.toContain('but has not set');
    expect(g.remediation).toContain("deploy the kit's CCM");
    expect(g.remediation).toContain(
      '; then set spec.template.spec.metadataSettings.providerIDInjection: true',
    );
  });

  it('reads a Machine without status or spec as not stuck, and one without spec as having no providerID', () => {
    const bare = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'b', namespace: 'capi' },
    } as KubeObject;
    expect(gate({ machines: [bare] }).kind).toBe('pass');
    const noSpec = { ...bare, status: { phase: 'Provisioned' } } as KubeObject;
    expect(gate({ machines: [noSpec] })).toMatchObject({ kind: 'stop', machines: ['capi/b'] });
  });

  it('reads a template without metadataSettings as injection off', () => {
    const t = template('plain', undefined);
    (t.spec as { template: { spec: Record<string, unknown> } }).template.spec = {};
    const g = gate({ machines: [machine('w', 'Provisioned')], templates: [t] });
    expect(g).toMatchObject({ kind: 'stop' });
    expect((g as { reason: string }).reason).toMatch(/ProxmoxMachineTemplate plain$/);
  });

  it('reads a template without a spec as injection off', () => {
    const bare = {
      apiVersion: 'x/v1',
      kind: 'ProxmoxMachineTemplate',
      metadata: { name: 'bare' },
    } as KubeObject;
    const g = gate({ machines: [machine('w', 'Provisioned')], templates: [bare] });
    if (g.kind !== 'stop') throw new Error('expected a stop');
    expect(g.reason).toContain('ProxmoxMachineTemplate bare');
  });
});
