import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { type AddControlPlaneInput, decideAddControlPlane, withoutNode } from './cp-order.js';

function machine(name: string, created: string, node?: string): KubeObject {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'capi', creationTimestamp: created },
    spec: {},
    status: node === undefined ? {} : { nodeRef: { name: node } },
  } as KubeObject;
}

const base: AddControlPlaneInput = {
  names: { namespace: 'capi', cluster: 'prod', controlPlane: 'prod-cp' },
  controlPlane: { paused: true, clusterPaused: false },
  machines: [],
  want: 1,
  noWait: false,
  target: { kubeconfig: '/m/admin.conf', kit: 'kit' },
};
const decide = (o: Partial<AddControlPlaneInput>) => decideAddControlPlane({ ...base, ...o });
const refusal = (o: Partial<AddControlPlaneInput>) => {
  const d = decide(o);
  if (d.kind !== 'refuse') throw new Error(`expected a refusal, got ${d.kind}`);
  return d;
};

describe('withoutNode', () => {
  it('lists the Machines with no nodeRef, oldest first', () => {
    const ms = [
      machine('c', '2026-12-03T10:02:00Z'),
      machine('a', '2026-12-03T10:00:00Z', 'n-a'),
      machine('b', '2026-12-03T10:01:00Z'),
    ];
    expect(withoutNode(ms)).toEqual(['b', 'c']);
    // A Machine the server has not stamped yet (never seen in practice) sorts first.
    const unstamped = { ...machine('u', ''), metadata: { name: 'u', namespace: 'capi' } } as KubeObject;
    expect(withoutNode([...ms, unstamped])).toEqual(['u', 'b', 'c']);
    expect(withoutNode([ms[0]!, unstamped])).toEqual(['u', 'c']);
  });
});

describe('decideAddControlPlane', () => {
  it('adds the first control plane to a paused TalosControlPlane of an unpaused Cluster', () => {
    expect(decide({})).toEqual({ kind: 'add' });
  });

  it('adds the next once every earlier Machine has its Node', () => {
    expect(decide({ want: 2, machines: [machine('m1', '2026-12-03T10:00:00Z', 'cp-1')] })).toEqual({
      kind: 'add',
    });
  });

  it('does nothing when the count wanted exists (typing the command twice adds nothing)', () => {
    const one = [machine('m1', '2026-12-03T10:00:00Z')];
    expect(decide({ want: 1, machines: one })).toEqual({ kind: 'nothing-to-do', have: 1 });
    expect(decide({ want: 1, machines: [...one, machine('m2', '2026-12-03T10:01:00Z')] })).toEqual({
      kind: 'nothing-to-do',
      have: 2,
    });
  });

  it('refuses without a TalosControlPlane and says to adopt, with the kit and kubeconfig typed', () => {
    const r = refusal({ controlPlane: undefined });
    expect(r.reason).toBe('TalosControlPlane capi/prod-cp does not exist');
    expect(r.remediation).toBe('adopt first: ferry capi adopt kit --mgmt-kubeconfig /m/admin.conf');
  });

  it('refuses an unpaused TalosControlPlane, naming the pause command for the context given', () => {
    const r = refusal({
      controlPlane: { paused: false, clusterPaused: false },
      target: { ...base.target, context: 'mgmt' },
    });
    expect(r.reason).toContain('is not paused');
    expect(r.remediation).toContain(
      'kubectl --kubeconfig /m/admin.conf --context mgmt -n capi annotate taloscontrolplanes.controlplane.cluster.x-k8s.io prod-cp cluster.x-k8s.io/paused=true --overwrite',
    );
  });

  it('refuses when the Cluster is paused, and says the annotation pauses too', () => {
    const r = refusal({ controlPlane: { paused: true, clusterPaused: true } });
    expect(r.reason).toBe('Cluster capi/prod is paused: no controller would boot the new Machine');
    expect(r.remediation).toContain('cluster.x-k8s.io/paused annotation');
    expect(r.remediation).toContain('clusters.cluster.x-k8s.io');
  });

  it('refuses to add more than one at a time, naming the next count', () => {
    const r = refusal({ want: 3, machines: [machine('m1', '2026-12-03T10:00:00Z', 'cp-1')] });
    expect(r.reason).toContain('has 1 control-plane Machine(s): --replicas 3 would add more than one');
    expect(r.remediation).toContain('--replicas 2');
  });

  it('refuses while an earlier Machine has no Node, unless --no-wait', () => {
    const waiting = [machine('m1', '2026-12-03T10:00:00Z')];
    const r = refusal({ want: 2, machines: waiting });
    expect(r.reason).toContain('control-plane Machine m1 has no Node yet');
    expect(r.remediation).toContain('cluster.x-k8s.io/cluster-name=prod,cluster.x-k8s.io/control-plane');
    expect(r.remediation).toContain('--no-wait');
    expect(decide({ want: 2, machines: waiting, noWait: true })).toEqual({ kind: 'add' });
  });

  it('checks in the order an operator fixes things: pause before the count', () => {
    const r = refusal({ controlPlane: { paused: false, clusterPaused: true }, want: 5 });
    expect(r.reason).toContain('is not paused');
  });
});
