import { describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { obj } from '../testing.js';
import { discoveryEgress, workloadIsolation } from './talos.js';
import {
  buildSnapshot,
  clusterConfiguration,
  contextOf,
  daemonSet,
  deployment,
  findings,
  run,
} from './testing-network.js';

describe('talos.discovery-egress', () => {
  it('asks to confirm egress to the public discovery service, per config format', () => {
    const f = findings(discoveryEgress.check(contextOf(buildSnapshot())))[0]!;
    expect(f.message).toContain('https://discovery.talos.dev/');
    expect(f.remediation).toContain('cluster.discovery.enabled: false');
    expect(f.evidence).toEqual([expect.objectContaining({ kind: 'target', field: 'cluster.discovery' })]);
    const v114 = findings(discoveryEgress.check(contextOf(buildSnapshot(), { talosVersion: 'v1.14' })))[0]!;
    expect(v114.remediation).toContain('DiscoveryServiceConfig.endpoint');
  });

  it('points at an image mirror as a sign of restricted egress, and says nothing of it otherwise', () => {
    const mirrored = buildSnapshot({
      cc: clusterConfiguration({ imageRepository: 'harbor.corp.example/k8s' }),
    });
    const f = findings(discoveryEgress.check(contextOf(mirrored)))[0]!;
    expect(f.message).toContain('pulls its images from harbor.corp.example/k8s');
    expect(f.evidence[1]).toMatchObject({ kind: 'file', field: 'imageRepository' });
    const plain = buildSnapshot({ cc: clusterConfiguration({ imageRepository: 'registry.k8s.io' }) });
    expect(findings(discoveryEgress.check(contextOf(plain)))[0]!.message).not.toContain('pulls its images');
  });
});

describe('talos.workload-isolation', () => {
  const csiNode = daemonSet('kube-system', 'csi-node', {
    podSpec: {
      hostPID: true,
      containers: [
        {
          name: 'plugin',
          image: 'csi:1',
          volumeMounts: [
            { name: 'kubelet', mountPath: '/var/lib/kubelet', mountPropagation: 'Bidirectional' },
          ],
        },
      ],
    },
  });
  const iscsiApp = deployment('db', 'oracle', {
    podSpec: {
      containers: [{ name: 'db', image: 'db:1' }],
      volumes: [{ name: 'data', iscsi: { targetPortal: '10.0.5.1:3260', iqn: 'iqn.x', lun: 0 } }],
    },
  });
  const iscsiPv = obj('PersistentVolume', 'pv-iscsi', {
    spec: { iscsi: { targetPortal: '10.0.5.1:3260', iqn: 'iqn.2001-04.com.example:storage' } },
  });
  const driver = obj('CSIDriver', 'org.democratic-csi.iscsi', {});
  const ctx = (target = { talosVersion: 'v1.14' }) =>
    contextOf(
      buildSnapshot({
        resources: {
          daemonsets: [csiNode],
          deployments: [iscsiApp, deployment('web', 'shop')],
          persistentvolumes: [iscsiPv],
          csidrivers: [driver, obj('CSIDriver', 'cinder.csi.openstack.org', {})],
        },
      }),
      target,
    );

  it('does not apply before v1.14', () => {
    expect(run(workloadIsolation, ctx({ talosVersion: 'v1.13' }))).toMatchObject({ kind: 'not-applicable' });
  });

  it('fires on v1.14 for host-namespace workloads, in-tree iSCSI volumes and iSCSI CSI drivers only', () => {
    const fs = findings(run(workloadIsolation, ctx()));
    expect(fs.map((f) => `${f.evidence[0]!.kind === 'object' ? f.evidence[0]!.object.name : ''}`)).toEqual([
      'oracle',
      'csi-node',
      'pv-iscsi',
      'org.democratic-csi.iscsi',
    ]);
    const ds = fs[1]!;
    expect(ds.message).toContain('hostPID; Bidirectional mount propagation at /var/lib/kubelet (plugin)');
    expect(ds.evidence.map((e) => (e.kind === 'object' ? e.field : ''))).toEqual([
      'spec.template.spec.hostPID',
      'spec.template.spec.containers[plugin].volumeMounts[kubelet].mountPropagation',
    ]);
  });

  it('does not fire on v1.14 for workloads that keep to their own namespaces', () => {
    const plain = buildSnapshot({ resources: { deployments: [deployment('web', 'shop')] } });
    expect(run(workloadIsolation, contextOf(plain, { talosVersion: 'v1.14' }))).toEqual([]);
  });

  it('finds the CSI node plugin and Cilium in the example cluster on v1.14', async () => {
    const fs = findings(
      run(workloadIsolation, contextOf(await exampleSnapshot(), { talosVersion: 'v1.14' })),
    );
    expect(fs.map((f) => f.subject?.name).sort()).toEqual(['cilium', 'csi-cinder-nodeplugin']);
  });
});
