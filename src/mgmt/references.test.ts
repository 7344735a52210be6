import { describe, expect, it } from 'vitest';
import { labKitObjects } from '../capi/testing-kit.js';
import { FerryError } from '../errors.js';
import type { KubeObject } from './model.js';
import { refuseUnresolved, unresolvedReferences } from './references.js';

// The objects `ferry capi adopt` writes: every reference among them resolves.
const kit = labKitObjects('ns');
const without = (kind: string) => kit.filter((o) => o.kind !== kind);

function refusal(objects: KubeObject[]): FerryError {
  try {
    refuseUnresolved(objects);
  } catch (err) {
    if (err instanceof FerryError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('refuseUnresolved (backup)', () => {
  it('passes an archive that holds everything its references name', () => {
    expect(unresolvedReferences(kit, kit)).toEqual([]);
    expect(() => refuseUnresolved(kit)).not.toThrow();
  });

  it('refuses an archive without the TalosControlPlane the Cluster names: exit 3, naming referrer, field and object', () => {
    const err = refusal(without('TalosControlPlane'));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(
      'Cluster ns/lab spec.controlPlaneRef names TalosControlPlane ns/lab-control-plane (controlplane.cluster.x-k8s.io), which the backup does not hold',
    );
    expect(err.message).toContain('1 reference(s)');
    expect(err.remediation).toContain('nothing was stored');
  });

  it("refuses a missing template of the TalosControlPlane or a MachineDeployment, and the Cluster's infrastructure", () => {
    const err = refusal(without('ProxmoxMachineTemplate').filter((o) => o.kind !== 'ProxmoxCluster'));
    expect(err.message.split('\n').slice(1)).toEqual([
      '  Cluster ns/lab spec.infrastructureRef names ProxmoxCluster ns/lab (infrastructure.cluster.x-k8s.io), which the backup does not hold',
      '  TalosControlPlane ns/lab-control-plane spec.infrastructureTemplate names ProxmoxMachineTemplate ns/lab-control-plane (infrastructure.cluster.x-k8s.io), which the backup does not hold',
      '  MachineDeployment ns/lab-workers spec.template.spec.infrastructureRef names ProxmoxMachineTemplate ns/lab-worker (infrastructure.cluster.x-k8s.io), which the backup does not hold',
    ]);
    expect(refusal(without('TalosConfigTemplate')).message).toContain(
      'MachineDeployment ns/lab-workers spec.template.spec.bootstrap.configRef names TalosConfigTemplate ns/lab-workers',
    );
  });

  it('does not take an object of the same name in another namespace or group for the one named', () => {
    const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
    const elsewhere = { ...tcp, metadata: { ...tcp.metadata, namespace: 'other' } };
    const otherGroup = { ...tcp, apiVersion: 'controlplane.example.com/v1' };
    expect(refusal([...without('TalosControlPlane'), elsewhere, otherGroup]).message).toContain(
      'spec.controlPlaneRef names TalosControlPlane ns/lab-control-plane',
    );
  });

  it("checks only the Cluster's, TalosControlPlanes' and MachineDeployments' references", () => {
    const machine: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'm', namespace: 'ns' },
      spec: {
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxMachine', name: 'm' },
      },
    };
    expect(() => refuseUnresolved([...kit, machine])).not.toThrow();
  });
});
