import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { objectReferences, refersTo } from './refs.js';

const o = (apiVersion: string, kind: string, name: string, spec: unknown = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'ns' },
  spec,
});

describe('objectReferences', () => {
  it("reads a v1beta2 Cluster's references and its topology class", () => {
    const c = o('cluster.x-k8s.io/v1beta2', 'Cluster', 'c', {
      controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'TalosControlPlane', name: 'c-cp' },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxCluster', name: 'c' },
      topology: { classRef: { name: 'gold', namespace: 'classes' } },
    });
    expect(objectReferences(c)).toEqual([
      {
        field: 'spec.controlPlaneRef',
        group: 'controlplane.cluster.x-k8s.io',
        kind: 'TalosControlPlane',
        namespace: 'ns',
        name: 'c-cp',
      },
      {
        field: 'spec.infrastructureRef',
        group: 'infrastructure.cluster.x-k8s.io',
        kind: 'ProxmoxCluster',
        namespace: 'ns',
        name: 'c',
      },
      {
        field: 'spec.topology.classRef',
        group: 'cluster.x-k8s.io',
        kind: 'ClusterClass',
        namespace: 'classes',
        name: 'gold',
      },
    ]);
  });

  it('reads v1beta1 shapes: apiVersion for the group, a namespace the reference names, topology.class', () => {
    const c = o('cluster.x-k8s.io/v1beta1', 'Cluster', 'c', {
      controlPlaneRef: {
        apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
        kind: 'TalosControlPlane',
        name: 'c-cp',
        namespace: 'other',
      },
      topology: { class: 'gold' },
    });
    expect(objectReferences(c).map((r) => [r.field, r.group, r.namespace, r.name])).toEqual([
      ['spec.controlPlaneRef', 'controlplane.cluster.x-k8s.io', 'other', 'c-cp'],
      ['spec.topology.class', 'cluster.x-k8s.io', 'ns', 'gold'],
    ]);
  });

  it('reads nothing of a kind it does not know, or of the same kind in another group', () => {
    expect(
      objectReferences(o('example.com/v1', 'Cluster', 'c', { controlPlaneRef: { kind: 'X', name: 'y' } })),
    ).toEqual([]);
    expect(
      objectReferences(o('v1', 'ConfigMap', 'c', { infrastructureRef: { kind: 'X', name: 'y' } })),
    ).toEqual([]);
  });

  it('a reference without a kind names nothing; one without a group matches by kind and name', () => {
    const md = o('cluster.x-k8s.io/v1beta2', 'MachineDeployment', 'md', {
      template: {
        spec: {
          infrastructureRef: { name: 'w' },
          bootstrap: { configRef: { kind: 'TalosConfigTemplate', name: 'w' } },
        },
      },
    });
    const [boot, infra] = [...objectReferences(md)].sort((a, b) => a.field.localeCompare(b.field));
    const pmt = o('infrastructure.cluster.x-k8s.io/v1alpha2', 'ProxmoxMachineTemplate', 'w');
    const tct = o('bootstrap.cluster.x-k8s.io/v1alpha3', 'TalosConfigTemplate', 'w');
    expect(infra!.kind).toBeUndefined();
    expect(refersTo(infra!, pmt)).toBe(false);
    expect(refersTo(boot!, tct)).toBe(true);
    expect(refersTo(boot!, { ...tct, metadata: { ...tct.metadata, namespace: 'other' } })).toBe(false);
  });
});
