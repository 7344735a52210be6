import { describe, expect, it } from 'vitest';
import type { Snapshot, SnapshotPart } from '../../snapshot/model.js';
import { runAudit } from '../engine.js';
import {
  cpSchedulable,
  isCarriedLabel,
  labelsTaintsCarryover,
  nameReuse,
  nameReuseFindings,
} from './nodes.js';
import { clusterConfiguration } from './testing-network.js';
import { audit, CP_TAINT, contextOf, findings, merge, node, pod, workload } from './testing-workload.js';

const app = (nodes: string[], spec: Record<string, unknown> = {}) =>
  workload(
    'Deployment',
    'shop',
    'web',
    { containers: [{ name: 'web', image: 'web:1' }], ...spec },
    { pods: nodes },
  );
const agent = (nodes: string[], spec: Record<string, unknown> = {}) =>
  workload(
    'DaemonSet',
    'kube-system',
    'agent',
    { containers: [{ name: 'a', image: 'agent:1' }], ...spec },
    { pods: nodes },
  );

describe('nodes.cp-schedulable', () => {
  it('fires per untainted control plane that runs non-DaemonSet pods, with the pods as evidence', () => {
    const ctx = contextOf(
      merge(
        {
          nodes: [
            node('cp-1', { controlPlane: true }),
            node('cp-2', { controlPlane: true, taints: [CP_TAINT] }),
            node('w1'),
          ],
        },
        app(['cp-1', 'cp-2', 'w1']).objects,
        agent(['cp-1', 'w1']).objects,
      ),
    );
    const fs = audit(ctx, [cpSchedulable]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'Node', name: 'cp-1' });
    expect(fs[0]!.message).toMatch(/runs 1 non-DaemonSet pod/);
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'node',
      node: 'cp-1',
      field: 'spec.taints',
      observed: 'none',
    });
    expect(fs[0]!.evidence[1]).toMatchObject({ kind: 'object', object: { kind: 'Pod', namespace: 'shop' } });
    expect(fs[0]!.remediation).toContain('cluster.allowSchedulingOnControlPlanes: true');
  });

  it('does not fire when untainted control planes run only DaemonSet pods', () => {
    const ctx = contextOf(merge({ nodes: [node('cp-1', { controlPlane: true })] }, agent(['cp-1']).objects));
    expect(findings(cpSchedulable.check(ctx))).toEqual([]);
  });

  it('names KubeNodeConfig on v1.14 and notes a missing exclude-from-LB label', () => {
    const ctx = contextOf(merge({ nodes: [node('cp-1', { controlPlane: true })] }, app(['cp-1']).objects), {
      talosVersion: '1.14',
    });
    const [f] = findings(cpSchedulable.check(ctx));
    expect(f!.remediation).toContain('KubeNodeConfig');
    expect(f!.message).toContain('node.kubernetes.io/exclude-from-external-load-balancers');
  });
});

describe('nodes.labels-taints-carryover', () => {
  it('fires per custom label a workload selects, with each node value', () => {
    const nodes = [
      node('w1', { labels: { 'example.com/pool': 'data' } }),
      node('w2', { labels: { 'example.com/pool': 'web' } }),
      node('w3'),
    ];
    const ctx = contextOf(
      merge({ nodes }, app(['w1'], { nodeSelector: { 'example.com/pool': 'data' } }).objects),
    );
    const fs = audit(ctx, [labelsTaintsCarryover]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'NodeLabel', name: 'example.com/pool' });
    expect(fs[0]!.message).toMatch(/data on w1/);
    expect(fs[0]!.message).toMatch(/web on w2/);
    expect(fs[0]!.evidence).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'object',
          field: 'spec.template.spec.nodeSelector["example.com/pool"]',
        }),
        expect.objectContaining({ kind: 'node', node: 'w2', observed: 'web' }),
      ]),
    );
    expect(fs[0]!.remediation).toContain('machine.nodeLabels');
  });

  it('reads affinities and topology spread, and ignores labels nodes set themselves', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] },
            ],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 1, preference: { matchExpressions: [{ key: 'example.com/ssd', operator: 'Exists' }] } },
          ],
        },
      },
      topologySpreadConstraints: [{ topologyKey: 'example.com/rack', maxSkew: 1 }],
    };
    const nodes = [
      node('w1', {
        labels: { 'topology.kubernetes.io/zone': 'a', 'example.com/ssd': 'true', 'example.com/rack': 'r1' },
      }),
    ];
    const fs = findings(labelsTaintsCarryover.check(contextOf(merge({ nodes }, app(['w1'], spec).objects))));
    expect(fs.map((f) => f.subject?.name).sort()).toEqual(['example.com/rack', 'example.com/ssd']);
  });

  it('does not fire for custom labels no workload uses, but does for custom node roles', () => {
    const nodes = [
      node('w1', { labels: { 'example.com/owner': 'team-a', 'node-role.kubernetes.io/worker': '' } }),
    ];
    const fs = findings(labelsTaintsCarryover.check(contextOf(merge({ nodes }, app(['w1']).objects))));
    expect(fs.map((f) => f.subject?.name)).toEqual(['node-role.kubernetes.io/worker']);
  });

  it('fires per custom taint, naming tolerating workloads, and ignores system taints', () => {
    const gpu = { key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' };
    const nodes = [
      node('cp-1', { controlPlane: true, taints: [CP_TAINT] }),
      node('g1', { taints: [gpu, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] }),
    ];
    const ctx = contextOf(
      merge(
        { nodes },
        app(['g1'], { tolerations: [{ key: 'example.com/gpu', operator: 'Exists' }] }).objects,
      ),
      {
        talosVersion: '1.14',
      },
    );
    const fs = findings(labelsTaintsCarryover.check(ctx));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'NodeTaint', name: 'example.com/gpu:NoSchedule' });
    expect(fs[0]!.message).toMatch(/tolerated by 1 workload\(s\) \(Deployment shop\/web\)/);
    expect(fs[0]!.remediation).toContain('KubeNodeConfig.taints');
  });

  it('classifies labels Talos replacements would not carry', () => {
    expect(isCarriedLabel('example.com/pool')).toBe(true);
    expect(isCarriedLabel('node-role.kubernetes.io/ingress')).toBe(true);
    expect(isCarriedLabel('node-role.kubernetes.io/control-plane')).toBe(false);
    expect(isCarriedLabel('kubernetes.io/hostname')).toBe(false);
    expect(isCarriedLabel('topology.kubernetes.io/zone')).toBe(false);
  });
});

describe('nodes.name-reuse', () => {
  /** A kubeadm ClusterConfiguration naming the cluster (the Cluster API object names derive from it). */
  const named = (clusterName: string) => ({
    parts: ['resources', 'kubeadm'] as SnapshotPart[],
    edit: (s: Snapshot) => {
      s.kubeadm.clusterConfiguration = clusterConfiguration({ clusterName });
    },
  });
  const ctx = () => contextOf({ nodes: [node('cp-1', { controlPlane: true }), node('worker-1')] });

  it('decides on the names ferry generate plans, instead of skipping: fresh names pass', () => {
    const report = runAudit({ ...ctx(), rules: [nameReuse], now: new Date() });
    expect(report.rules[0]!.outcome).toBe('passed');
    expect(report.skipped).toEqual([]);
  });

  it('plans around a Node already named like the planned hostname', () => {
    const c = contextOf({
      nodes: [node('cp-1', { controlPlane: true }), node('talos-cp-1.lab.example'), node('worker-1')],
    });
    expect(findings(nameReuse.check(c)).filter((f) => f.severity === 'blocker')).toEqual([]);
  });

  it('fires (risk) for a Node carrying the "talos-" prefix Talos generates worker names with', () => {
    const c = contextOf({ nodes: [node('cp-1', { controlPlane: true }), node('talos-7mq-zy1')] });
    const fs = findings(nameReuse.check(c));
    expect(fs).toHaveLength(1);
    expect(fs[0]).toMatchObject({ severity: 'risk', subject: { kind: 'Node', name: 'talos-7mq-zy1' } });
    expect(fs[0]!.message).toContain('auto: stable');
  });

  it('with Cluster API, fires for Nodes shaped like the machines it would create', () => {
    const nodes = [
      node('cp-1', { controlPlane: true }),
      node('lab-worker-x7k2p'),
      node('lab-worker-pool-1'),
      node('other-control-plane-abcde'),
    ];
    const c = contextOf({ nodes }, { provisioner: 'capi' }, named('lab'));
    const fs = findings(nameReuse.check(c));
    expect(fs.map((f) => f.subject?.name)).toEqual(['lab-worker-x7k2p']);
    expect(fs[0]!.severity).toBe('risk');
    // The same names without Cluster API: ferry names the control planes, nothing clashes.
    expect(findings(nameReuse.check(contextOf({ nodes }, {}, named('lab'))))).toEqual([]);
    // Without a cluster name the Cluster API names are unknown: skipped, saying what to provide.
    expect(nameReuse.check(contextOf({ nodes }, { provisioner: 'capi' }))).toMatchObject({ kind: 'skipped' });
  });

  it('with Cluster API, also judges the per-pool templates the kit writes, named after the worker groups', () => {
    // worker-2's own label makes a pool "pool-data-1": the kit's template lab-worker-pool-data-1.
    const nodes = [
      node('cp-1', { controlPlane: true }),
      node('worker-1'),
      node('worker-2', { labels: { 'lab.example/pool': 'data' } }),
      node('lab-worker-pool-data-1-q9z8w'),
    ];
    const fs = findings(nameReuse.check(contextOf({ nodes }, { provisioner: 'capi' }, named('lab'))));
    expect(fs.map((f) => f.subject?.name)).toEqual(['lab-worker-pool-data-1-q9z8w']);
    expect(fs[0]!.message).toContain('(lab-worker-pool-data-1-xxxxx');
    // Without the pool (no worker carries its label) the name is no template's.
    const unpooled = nodes.filter((n) => n.metadata.name !== 'worker-2');
    expect(
      findings(nameReuse.check(contextOf({ nodes: unpooled }, { provisioner: 'capi' }, named('lab')))),
    ).toEqual([]);
  });

  it('with Cluster API and a management cluster, also judges the templates its objects reference', () => {
    const nodes = [node('cp-1', { controlPlane: true }), node('lab-md-0-abcde'), node('lab-cp-tmpl-fghij')];
    const mgmt = named('lab');
    const withMgmt = {
      ...mgmt,
      edit: (s: Snapshot) => {
        mgmt.edit(s);
        s.mgmt = {
          source: { kind: 'file', path: 'mgmt' },
          crds: [],
          objects: [
            {
              apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
              kind: 'TalosControlPlane',
              metadata: {
                name: 'lab-cp',
                namespace: 'lab',
                labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
              },
              spec: { infrastructureTemplate: { kind: 'ProxmoxMachineTemplate', name: 'lab-cp-tmpl' } },
            },
            {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'MachineDeployment',
              metadata: {
                name: 'lab-md',
                namespace: 'lab',
                labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
              },
              spec: { clusterName: 'lab', template: { spec: { infrastructureRef: { name: 'lab-md-0' } } } },
            },
          ],
        };
      },
    };
    const fs = findings(nameReuse.check(contextOf({ nodes }, { provisioner: 'capi' }, withMgmt)));
    expect(fs.map((f) => [f.subject?.name, f.message.includes('control planes') ? 'cp' : 'worker'])).toEqual([
      ['lab-md-0-abcde', 'worker'],
      ['lab-cp-tmpl-fghij', 'cp'],
    ]);
    expect(findings(nameReuse.check(contextOf({ nodes }, { provisioner: 'capi' }, named('lab'))))).toEqual(
      [],
    );
  });

  it('finds planned names equal to live Nodes, case-insensitively', () => {
    const fs = nameReuseFindings(ctx(), [{ name: 'Worker-1', replaces: 'worker-1' }, { name: 'talos-cp-a' }]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'Node', name: 'worker-1' });
    expect(fs[0]!.remediation).toMatch(/Delete Node worker-1/);
  });

  it('finds nothing for fresh names', () => {
    expect(nameReuseFindings(ctx(), [{ name: 'talos-cp-a' }, { name: 'talos-w-1' }])).toEqual([]);
  });
});

// A bare pod on a control plane counts as a workload there too.
it('nodes.cp-schedulable counts bare pods but not mirror pods', () => {
  const mirror = pod(
    'kube-system',
    'kube-vip-cp-1',
    { containers: [] },
    { node: 'cp-1', annotations: { 'kubernetes.io/config.mirror': 'x' } },
  );
  const bare = pod('default', 'debug', { containers: [] }, { node: 'cp-1' });
  const base = { nodes: [node('cp-1', { controlPlane: true })] };
  expect(findings(cpSchedulable.check(contextOf({ ...base, pods: [mirror] })))).toEqual([]);
  expect(findings(cpSchedulable.check(contextOf({ ...base, pods: [mirror, bare] })))).toHaveLength(1);
});
