import { describe, expect, it } from 'vitest';
import { audit, contextOf, findings, merge, node, pdb, pod, pv, workload } from './testing-workload.js';
import { nodePinned, pdbBlocking, pdbMissing, undrainablePods } from './workload.js';
import { pdbModel, scaled } from './workload-pdb.js';

const spec = { containers: [{ name: 'c', image: 'c:1' }] };
const web = (pods: string[], replicas = pods.length) =>
  workload('Deployment', 'shop', 'web', spec, { pods, replicas, labels: { app: 'web' } });
const nodes = { nodes: [node('w1'), node('w2'), node('w3')] };

describe('workload.pdb-blocking', () => {
  it('fires when status allows no disruption, naming the nodes whose drain it blocks', () => {
    const b = pdb(
      'shop',
      'web',
      { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
      { disruptionsAllowed: 0, expectedPods: 2, currentHealthy: 2, desiredHealthy: 2 },
    );
    const fs = audit(contextOf(merge(nodes, web(['w1', 'w3']).objects, { poddisruptionbudgets: [b] })), [
      pdbBlocking,
    ]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'PodDisruptionBudget', namespace: 'shop', name: 'web' });
    expect(fs[0]!.message).toMatch(
      /blocks the drain of 2 node\(s\): w1 \(web-7d9f8-p0\), w3 \(web-7d9f8-p1\)/,
    );
    expect(fs[0]!.message).toMatch(/disruptionsAllowed is 0; minAvailable 2 ≥ 2 expected pod\(s\)/);
    expect(fs[0]!.evidence[0]).toMatchObject({
      field: 'status.disruptionsAllowed',
      observed: '0',
      note: 'blocks w1, w3',
    });
  });

  it('judges the spec when the snapshot has no PDB status (maxUnavailable 0, minAvailable 100%)', () => {
    for (const s of [{ maxUnavailable: 0 }, { maxUnavailable: '0%' }, { minAvailable: '100%' }]) {
      const b = pdb('shop', 'web', { ...s, selector: { matchLabels: { app: 'web' } } });
      expect(
        findings(
          pdbBlocking.check(contextOf(merge(web(['w1', 'w2', 'w3']).objects, { poddisruptionbudgets: [b] }))),
        ),
        JSON.stringify(s),
      ).toHaveLength(1);
    }
  });

  it('counts unready pods under the default IfHealthyBudget policy', () => {
    const w = web(['w1', 'w2', 'w3']);
    w.objects.pods![0]!.status.conditions = [{ type: 'Ready', status: 'False' }];
    const b = pdb('shop', 'web', { minAvailable: 2, selector: { matchLabels: { app: 'web' } } });
    const [f] = findings(pdbBlocking.check(contextOf(merge(w.objects, { poddisruptionbudgets: [b] }))));
    expect(f!.message).toMatch(
      /2 healthy pod\(s\) ≤ 2 required \(unhealthyPodEvictionPolicy IfHealthyBudget\)/,
    );
    const always = pdb('shop', 'web', {
      minAvailable: 2,
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
      selector: { matchLabels: { app: 'web' } },
    });
    expect(
      findings(pdbBlocking.check(contextOf(merge(w.objects, { poddisruptionbudgets: [always] })))),
    ).toEqual([]);
  });

  it('does not fire for a PDB that allows a disruption, nor for one selecting no pods', () => {
    const ok = pdb(
      'shop',
      'web',
      { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
      { disruptionsAllowed: 1, expectedPods: 3 },
    );
    const empty = pdb(
      'shop',
      'gone',
      { minAvailable: 1, selector: { matchLabels: { app: 'gone' } } },
      { disruptionsAllowed: 0, expectedPods: 0 },
    );
    expect(
      findings(
        pdbBlocking.check(
          contextOf(merge(web(['w1', 'w2', 'w3']).objects, { poddisruptionbudgets: [ok, empty] })),
        ),
      ),
    ).toEqual([]);
  });

  it('scales int-or-percent values like the disruption controller (rounding up)', () => {
    expect(scaled('50%', 1)).toBe(1);
    expect(scaled('10%', 3)).toBe(1);
    expect(scaled(2, 5)).toBe(2);
    expect(scaled('x', 5)).toBeUndefined();
  });
});

describe('workload.pdb-missing', () => {
  it('fires for a multi-replica workload without a PDB and for a single replica', () => {
    const single = workload('StatefulSet', 'apps', 'wiki', spec, { pods: ['w2'] });
    const fs = audit(contextOf(merge(web(['w1', 'w2']).objects, single.objects)), [pdbMissing]);
    expect(fs.map((f) => `${f.subject.kind} ${f.subject.name}`).sort()).toEqual([
      'Deployment web',
      'StatefulSet wiki',
    ]);
    const wiki = fs.find((f) => f.subject.name === 'wiki')!;
    expect(wiki.message).toMatch(/runs 1 replica \(pods on w2\)/);
    expect(wiki.evidence[0]).toMatchObject({ field: 'spec.replicas', observed: '1' });
    expect(fs.find((f) => f.subject.name === 'web')!.remediation).toContain('app=web');
  });

  it('does not fire for a covered workload, DaemonSets, Jobs or workloads scaled to zero', () => {
    const b = pdb(
      'shop',
      'web',
      { maxUnavailable: 1, selector: { matchLabels: { app: 'web' } } },
      { disruptionsAllowed: 1, expectedPods: 2 },
    );
    const ds = workload('DaemonSet', 'kube-system', 'agent', spec, { pods: ['w1'] });
    const job = workload('Job', 'shop', 'migrate', spec, { pods: ['w1'] });
    const zero = workload('Deployment', 'shop', 'idle', spec, { replicas: 0 });
    expect(
      findings(
        pdbMissing.check(
          contextOf(
            merge(web(['w1', 'w2']).objects, ds.objects, job.objects, zero.objects, {
              poddisruptionbudgets: [b],
            }),
          ),
        ),
      ),
    ).toEqual([]);
  });

  it('fires for a PDB that selects no pods', () => {
    const b = pdb('shop', 'typo', { maxUnavailable: 1, selector: { matchLabels: { app: 'wbe' } } });
    const fs = findings(
      pdbMissing.check(contextOf(merge(web(['w1', 'w2']).objects, { poddisruptionbudgets: [b] }))),
    );
    const typo = fs.find((f) => f.message.includes('shop/typo'))!;
    expect(typo.message).toMatch(/selects no pods/);
    expect(typo.evidence[0]).toMatchObject({ field: 'spec.selector' });
  });
});

describe('workload.undrainable-pods', () => {
  it('fires per bare pod, not for mirror or finished pods', () => {
    const bare = pod('default', 'netshoot', spec, { node: 'w2' });
    const done = pod('default', 'once', spec, { node: 'w2', phase: 'Succeeded' });
    const mirror = pod('kube-system', 'kube-vip-cp-1', spec, {
      node: 'cp-1',
      annotations: { 'kubernetes.io/config.mirror': 'x' },
    });
    const fs = audit(contextOf({ pods: [bare, done, mirror] }), [undrainablePods]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'Pod', namespace: 'default', name: 'netshoot' });
    expect(fs[0]!.message).toMatch(/on w2 has no controller/);
  });

  it('fires once per controller for emptyDir data, not for DaemonSets', () => {
    const withCache = {
      ...spec,
      volumes: [
        { name: 'cache', emptyDir: { sizeLimit: '1Gi' } },
        { name: 'shm', emptyDir: { medium: 'Memory' } },
      ],
    };
    const dep = workload('Deployment', 'shop', 'frontend', withCache, { pods: ['w1', 'w2', 'w3'] });
    const ds = workload('DaemonSet', 'kube-system', 'agent', withCache, { pods: ['w1'] });
    const fs = audit(contextOf(merge(dep.objects, ds.objects)), [undrainablePods]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'Deployment', name: 'frontend' });
    expect(fs[0]!.message).toMatch(/cache, shm \(memory\)/);
    expect(fs[0]!.evidence).toHaveLength(2);
  });

  it('fires for pods on node-local PersistentVolumes, not for network volumes', () => {
    const claimSpec = {
      ...spec,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }],
    };
    const db = workload('StatefulSet', 'shop', 'db', claimSpec, { pods: ['w3'] });
    const local = pv('local-w3', {
      local: { path: '/var/mnt/disk1' },
      claimRef: { namespace: 'shop', name: 'data-db-0' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['w3'] }] },
          ],
        },
      },
    });
    const [f] = findings(undrainablePods.check(contextOf(merge(db.objects, { persistentvolumes: [local] }))));
    expect(f!.message).toMatch(/1 pod\(s\) on node-local PersistentVolumes \(local-w3\) on w3/);
    expect(f!.subject).toMatchObject({ kind: 'StatefulSet', name: 'db', group: 'apps' });
    const network = pv('cinder-1', {
      csi: { driver: 'cinder.csi.openstack.org' },
      claimRef: { namespace: 'shop', name: 'data-db-0' },
    });
    expect(
      findings(undrainablePods.check(contextOf(merge(db.objects, { persistentvolumes: [network] })))),
    ).toEqual([]);
  });
});

describe('workload.node-pinned', () => {
  it('fires for a hostname nodeSelector naming an existing node', () => {
    const w = workload(
      'Deployment',
      'shop',
      'pinned',
      { ...spec, nodeSelector: { 'kubernetes.io/hostname': 'w1' } },
      { pods: ['w1'] },
    );
    const [f] = findings(nodePinned.check(contextOf(merge(nodes, w.objects))));
    expect(f!.evidence[0]).toMatchObject({
      field: 'spec.template.spec.nodeSelector["kubernetes.io/hostname"]',
      observed: 'w1',
    });
  });

  it('fires for required affinity when every term names nodes, and for a template nodeName', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['w1', 'w2'] }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['w3'] }] },
          ],
        },
      },
    };
    const a = workload('Deployment', 'shop', 'a', { ...spec, affinity });
    const b = workload('Deployment', 'shop', 'b', { ...spec, nodeName: 'w2' });
    const fs = findings(nodePinned.check(contextOf(merge(nodes, a.objects, b.objects))));
    expect(fs.map((f) => f.evidence[0]!.observed)).toEqual(['w1, w2, w3', 'w2']);
  });

  it('does not fire for a term that also admits other nodes, unknown node names or a scheduled bare pod', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['w1'] }] },
            { matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: ['data'] }] },
          ],
        },
      },
    };
    const a = workload('Deployment', 'shop', 'a', { ...spec, affinity });
    const ghost = workload('Deployment', 'shop', 'ghost', {
      ...spec,
      nodeSelector: { 'kubernetes.io/hostname': 'gone-7' },
    });
    const bare = pod('default', 'debug', spec, { node: 'w1' });
    expect(
      findings(nodePinned.check(contextOf(merge(nodes, a.objects, ghost.objects, { pods: [bare] })))),
    ).toEqual([]);
  });
});

describe('PDB matching (indexed by one required label)', () => {
  it('matches In with several values, Exists-only selectors and empty selectors, within the namespace', () => {
    const api = workload('Deployment', 'shop', 'api', spec, {
      pods: ['w1'],
      labels: { app: 'api', tier: 'back' },
    });
    const other = workload('Deployment', 'other', 'api', spec, {
      pods: ['w2'],
      labels: { app: 'api', tier: 'back' },
    });
    const pdbs = [
      pdb('shop', 'multi', {
        selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
      }),
      pdb('shop', 'exists', { selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] } }),
      pdb('shop', 'all', { selector: {} }),
      pdb('shop', 'none', { selector: { matchLabels: { app: 'api', tier: 'front' } } }),
    ];
    const ctx = contextOf(merge(api.objects, other.objects, { poddisruptionbudgets: pdbs }));
    const model = pdbModel(ctx.index);
    const names = (labels: Record<string, string>, ns = 'shop') =>
      model
        .pdbsFor(ns, labels)
        .map((b) => b.pdb.metadata.name)
        .sort();
    expect(names({ app: 'api', tier: 'back' })).toEqual(['all', 'exists', 'multi']);
    expect(names({ app: 'web' })).toEqual(['all', 'multi']);
    expect(names({ app: 'api', tier: 'back' }, 'other')).toEqual([]);
    expect(
      model.podsOf(model.all.find((b) => b.pdb.metadata.name === 'exists')!).map((p) => p.metadata.namespace),
    ).toEqual(['shop']);
  });
});
