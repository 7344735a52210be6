import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { type NodeLinkInput, nodeLinkGate } from './node-link-gate.js';

const secret = (o: { type?: string; value?: string } = {}): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'lab-kubeconfig', namespace: 'lab' },
    type: o.type ?? 'cluster.x-k8s.io/secret',
    data: o.value === '' ? {} : { value: o.value ?? 'a2luZDogQ29uZmln' },
  }) as KubeObject;
const cluster = (status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name: 'lab', namespace: 'lab' },
  status,
});
const initialized = { initialization: { controlPlaneInitialized: true } };
const input = (o: Partial<NodeLinkInput>): NodeLinkInput => ({
  machine: 'lab-control-plane-abcde',
  namespace: 'lab',
  cluster: 'lab',
  clusterObject: { kind: 'read', object: cluster(initialized) },
  kubeconfigSecret: { kind: 'read', object: secret() },
  controlPlanePaused: true,
  kitDir: 'kit',
  ...o,
});

describe('nodeLinkGate', () => {
  it('passes with a usable kubeconfig Secret and an initialized Cluster (status or condition)', () => {
    expect(nodeLinkGate(input({}))).toEqual({ kind: 'pass' });
    const byCondition = cluster({ conditions: [{ type: 'ControlPlaneInitialized', status: 'True' }] });
    expect(nodeLinkGate(input({ clusterObject: { kind: 'read', object: byCondition } }))).toEqual({
      kind: 'pass',
    });
  });

  it('what an adoption before the fix left: no Secret, Cluster not initialized; both named, adopt as the fix', () => {
    const g = nodeLinkGate(
      input({
        clusterObject: {
          kind: 'read',
          object: cluster({ conditions: [{ type: 'ControlPlaneInitialized', status: 'False' }] }),
        },
        kubeconfigSecret: { kind: 'read', object: undefined },
      }),
    );
    if (g.kind !== 'stop') throw new Error('passed');
    expect(g.reason).toMatch(/Machine lab\/lab-control-plane-abcde cannot get its Node/);
    expect(g.reason).toMatch(/Secret lab\/lab-kubeconfig does not exist/);
    expect(g.reason).toMatch(/Cluster lab\/lab is not ControlPlaneInitialized/);
    expect(g.remediation).toMatch(/ferry capi adopt kit --mgmt-kubeconfig "\$MGMT_KUBECONFIG"` again/);
    expect(g.remediation).toMatch(/ferry run --resume$/);
  });

  it('a Secret Cluster API cannot read a kubeconfig from; an unpaused control plane points at its provider too', () => {
    const wrongType = nodeLinkGate(
      input({ kubeconfigSecret: { kind: 'read', object: secret({ type: 'Opaque' }) } }),
    );
    expect(wrongType).toMatchObject({ kind: 'stop', reason: expect.stringMatching(/type is Opaque/) });
    const noValue = nodeLinkGate(
      input({ kubeconfigSecret: { kind: 'read', object: secret({ value: '' }) }, controlPlanePaused: false }),
    );
    if (noValue.kind !== 'stop') throw new Error('passed');
    expect(noValue.reason).toMatch(/no kubeconfig under key value/);
    expect(noValue.reason).not.toMatch(/ControlPlaneInitialized/);
    expect(noValue.remediation).toMatch(/cacppt-system logs[\s\S]*ferry capi adopt/);
  });

  it('fails closed: what it cannot read is a stop naming the read, never a pass', () => {
    const g = nodeLinkGate(
      input({ kubeconfigSecret: { kind: 'unreadable', error: 'secrets "lab-kubeconfig" is forbidden' } }),
    );
    if (g.kind !== 'stop') throw new Error('passed');
    expect(g.reason).toMatch(
      /cannot read[\s\S]*Secret lab\/lab-kubeconfig: secrets "lab-kubeconfig" is forbidden/,
    );
    expect(g.remediation).toMatch(/auth can-i get secrets/);
    expect(
      nodeLinkGate(input({ clusterObject: { kind: 'unreadable', error: 'connection refused' } })),
    ).toMatchObject({ kind: 'stop', reason: expect.stringMatching(/Cluster lab\/lab: connection refused/) });
    expect(nodeLinkGate(input({ clusterObject: { kind: 'read', object: undefined } }))).toMatchObject({
      kind: 'stop',
      reason: expect.stringMatching(/Cluster lab\/lab does not exist/),
    });
  });
});
