import { describe, expect, it } from 'vitest';
import type { KObj } from '../apiserver/object.js';
import { node, pod, world } from './testing.js';
import {
  collectGarbage,
  daemonTarget,
  reconcileDaemonSet,
  reconcileDeployment,
  reconcileReplicaSet,
  reconcileStatefulSet,
} from './workloads.js';
import type { Action } from './world.js';

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
};

function workload(
  kind: string,
  name: string,
  spec: Record<string, unknown>,
  extra: Partial<KObj> = {},
): KObj {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 },
    spec: { selector: { matchLabels: { app: 'web' } }, template, ...spec },
    status: {},
    ...extra,
  };
}

const creates = (a: Action[]) =>
  a.filter((x): x is Extract<Action, { kind: 'create' }> => x.kind === 'create');
const deletes = (a: Action[]) =>
  a.filter((x): x is Extract<Action, { kind: 'delete' }> => x.kind === 'delete');

describe('Deployment → ReplicaSet', () => {
  it('creates a ReplicaSet named after the template hash, owned by the Deployment', () => {
    const d = workload('Deployment', 'web', { replicas: 3 });
    const [rs] = creates(reconcileDeployment(d, world()));
    expect(rs?.path).toBe('/apis/apps/v1/namespaces/shop/replicasets');
    const hash = rs!.body.metadata.labels!['pod-template-hash']!;
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs!.body).toMatchObject({
      metadata: {
        name: `web-${hash}`,
        ownerReferences: [{ kind: 'Deployment', uid: 'uid-web', controller: true }],
      },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web', 'pod-template-hash': hash } } },
    });
    // Same template, same hash: the next pass only scales.
    const existing = {
      ...rs!.body,
      metadata: { ...rs!.body.metadata, uid: 'rs-1' },
      spec: { ...rs!.body.spec, replicas: 1 },
    };
    const next = reconcileDeployment(d, world({ replicasets: [existing] }));
    expect(creates(next)).toEqual([]);
    expect(next).toContainEqual(expect.objectContaining({ kind: 'patch', patch: { spec: { replicas: 3 } } }));
  });

  it('scales old ReplicaSets down only once the new one is fully ready', () => {
    const d = workload('Deployment', 'web', { replicas: 2 });
    const [rs] = creates(reconcileDeployment(d, world()));
    const current = {
      ...rs!.body,
      metadata: { ...rs!.body.metadata, uid: 'new' },
      status: { readyReplicas: 1 },
    };
    const old = workload(
      'ReplicaSet',
      'web-old',
      { replicas: 2 },
      {
        metadata: {
          name: 'web-old',
          namespace: 'shop',
          uid: 'old',
          labels: { 'pod-template-hash': 'zzz' },
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true },
          ],
        },
      },
    );
    const scaleOld = (a: Action[]) => a.filter((x) => x.kind === 'patch' && x.path.endsWith('/web-old'));
    expect(scaleOld(reconcileDeployment(d, world({ replicasets: [current, old] })))).toEqual([]);
    const ready = { ...current, status: { readyReplicas: 2 } };
    expect(scaleOld(reconcileDeployment(d, world({ replicasets: [ready, old] })))).toHaveLength(1);
  });
});

describe('ReplicaSet → pods', () => {
  const rs = workload('ReplicaSet', 'web-abc', { replicas: 3 });

  it('creates the missing pods from the template with an owner reference', () => {
    const have = [
      pod('web-abc-1', {
        ns: 'shop',
        owner: rs,
        labels: { app: 'web' },
        node: 'a',
        phase: 'Running',
        ready: true,
      }),
    ];
    const made = creates(reconcileReplicaSet(rs, world({ pods: have })));
    expect(made).toHaveLength(2);
    expect(made[0]!.body).toMatchObject({
      metadata: {
        generateName: 'web-abc-',
        namespace: 'shop',
        labels: { app: 'web' },
        ownerReferences: [{ kind: 'ReplicaSet', uid: 'uid-web-abc' }],
      },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
  });

  it('replaces a terminating pod and deletes extras, unscheduled ones first', () => {
    const terminating = pod('t', {
      ns: 'shop',
      owner: rs,
      node: 'a',
      phase: 'Running',
      deletionTimestamp: '2026-01-01T00:00:30Z',
    });
    expect(creates(reconcileReplicaSet(rs, world({ pods: [terminating] })))).toHaveLength(3);
    const four = [
      pod('r1', { ns: 'shop', owner: rs, node: 'a', phase: 'Running', ready: true }),
      pod('r2', { ns: 'shop', owner: rs, node: 'a', phase: 'Running', ready: true }),
      pod('r3', { ns: 'shop', owner: rs, node: 'b', phase: 'Running', ready: true }),
      pod('pending', { ns: 'shop', owner: rs }),
    ];
    const del = deletes(reconcileReplicaSet(rs, world({ pods: four })));
    expect(del.map((d) => d.path)).toEqual(['/api/v1/namespaces/shop/pods/pending']);
    expect(del[0]!.gracePeriodSeconds).toBeUndefined();
  });

  it('reports replicas and ready replicas in its status', () => {
    const pods = [
      pod('r1', { ns: 'shop', owner: rs, node: 'a', phase: 'Running', ready: true }),
      pod('r2', { ns: 'shop', owner: rs }),
    ];
    const st = reconcileReplicaSet(rs, world({ pods })).find(
      (a) => a.kind === 'patch' && a.path.endsWith('/status'),
    );
    expect(st).toMatchObject({ patch: { status: { replicas: 2, readyReplicas: 1, observedGeneration: 1 } } });
  });
});

describe('StatefulSet → pods', () => {
  const sts = workload('StatefulSet', 'pg', { replicas: 3, serviceName: 'pg' });
  const member = (i: number, ready: boolean) =>
    pod(`pg-${i}`, {
      ns: 'shop',
      owner: sts,
      ownerKind: 'StatefulSet',
      node: 'a',
      phase: ready ? 'Running' : 'Pending',
      ready,
    });

  it('creates ordinals one at a time, each after the previous is ready', () => {
    const first = creates(reconcileStatefulSet(sts, world()));
    expect(first.map((c) => c.body.metadata.name)).toEqual(['pg-0']);
    expect(first[0]!.body).toMatchObject({
      spec: { hostname: 'pg-0', subdomain: 'pg' },
      metadata: { labels: { 'statefulset.kubernetes.io/pod-name': 'pg-0' } },
    });
    expect(creates(reconcileStatefulSet(sts, world({ pods: [member(0, false)] })))).toEqual([]);
    expect(
      creates(reconcileStatefulSet(sts, world({ pods: [member(0, true)] }))).map((c) => c.body.metadata.name),
    ).toEqual(['pg-1']);
  });

  it('recreates a deleted ordinal under the same name once it is gone', () => {
    const gone = [member(0, true), member(2, true)];
    expect(
      creates(reconcileStatefulSet(sts, world({ pods: gone }))).map((c) => c.body.metadata.name),
    ).toEqual(['pg-1']);
    const terminating = {
      ...member(1, true),
      metadata: { ...member(1, true).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    expect(
      creates(reconcileStatefulSet(sts, world({ pods: [member(0, true), terminating, member(2, true)] }))),
    ).toEqual([]);
  });

  it('scales down from the highest ordinal', () => {
    const small = { ...sts, spec: { ...sts.spec, replicas: 1 } };
    const del = deletes(
      reconcileStatefulSet(small, world({ pods: [member(0, true), member(1, true), member(2, true)] })),
    );
    expect(del.map((d) => d.path)).toEqual(['/api/v1/namespaces/shop/pods/pg-2']);
  });
});

describe('DaemonSet → pods', () => {
  const cpTaint = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' };
  const nodes = [node('cp', { taints: [cpTaint] }), node('w1'), node('w2', { unschedulable: true })];

  it('puts one pod on each eligible node, pinned by node affinity, with the daemon tolerations', () => {
    const ds = workload('DaemonSet', 'agent', {});
    const made = creates(reconcileDaemonSet(ds, world({ nodes })));
    expect(made.map((c) => daemonTarget(c.body))).toEqual(['w1', 'w2']);
    expect(made[0]!.body.spec.tolerations).toContainEqual({
      key: 'node.kubernetes.io/unschedulable',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
    const tolerant = workload('DaemonSet', 'cni', {
      template: { ...template, spec: { ...template.spec, tolerations: [{ operator: 'Exists' }] } },
    });
    expect(creates(reconcileDaemonSet(tolerant, world({ nodes }))).map((c) => daemonTarget(c.body))).toEqual([
      'cp',
      'w1',
      'w2',
    ]);
  });

  it('waits for a terminating daemon pod before replacing it and removes pods from ineligible nodes', () => {
    const ds = workload('DaemonSet', 'agent', {
      template: { ...template, spec: { ...template.spec, nodeSelector: { role: 'x' } } },
    });
    const labelled = [node('a', { labels: { role: 'x' } }), node('b')];
    const old = pod('agent-old', {
      ns: 'shop',
      owner: ds,
      ownerKind: 'DaemonSet',
      node: 'a',
      phase: 'Running',
      deletionTimestamp: '2026-01-01T00:00:00Z',
    });
    const stray = pod('agent-stray', {
      ns: 'shop',
      owner: ds,
      ownerKind: 'DaemonSet',
      node: 'b',
      phase: 'Running',
    });
    const actions = reconcileDaemonSet(ds, world({ nodes: labelled, pods: [old, stray] }));
    expect(creates(actions)).toEqual([]);
    expect(deletes(actions).map((d) => d.path)).toEqual(['/api/v1/namespaces/shop/pods/agent-stray']);
    expect(actions.find((a) => a.kind === 'patch')).toMatchObject({
      patch: { status: { desiredNumberScheduled: 1, numberMisscheduled: 1 } },
    });
  });
});

describe('garbage collector', () => {
  it('deletes pods and ReplicaSets whose owner is gone, leaves bare pods alone', () => {
    const rs = workload('ReplicaSet', 'web-abc', {});
    const orphan = pod('o', { ns: 'shop', owner: rs });
    const bare = pod('bare', { ns: 'shop' });
    expect(collectGarbage(world({ pods: [orphan, bare] })).map((a) => a.kind === 'delete' && a.path)).toEqual(
      ['/api/v1/namespaces/shop/pods/o'],
    );
    expect(collectGarbage(world({ pods: [orphan, bare], replicasets: [rs] }))).toEqual([]);
  });
});
