import { describe, expect, it } from 'vitest';
import { selectGraph } from './graph.js';
import type { KubeObject } from './model.js';

let n = 0;
const obj = (
  kind: string,
  name: string,
  extra: Partial<KubeObject['metadata']> = {},
  apiVersion = 'cluster.x-k8s.io/v1beta2',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'ns', uid: `uid-${++n}`, ...extra },
});
const own = (o: KubeObject) => ({
  ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid! }],
});
const secret = (name: string, extra: Partial<KubeObject['metadata']> = {}) =>
  obj('Secret', name, extra, 'v1');

describe('selectGraph', () => {
  const cluster = obj('Cluster', 'c1');
  const md = obj('MachineDeployment', 'c1-md', own(cluster));
  const ms = obj('MachineSet', 'c1-ms', own(md));
  const m = obj('Machine', 'c1-m', own(ms));
  const orphan = obj('Machine', 'stray', { labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } });
  const cls = obj('ClusterClass', 'gold');
  const topo: KubeObject = { ...obj('Cluster', 'c2'), spec: { topology: { classRef: { name: 'gold' } } } };
  const other = obj('ProxmoxMachineTemplate', 'free', {}, 'infrastructure.cluster.x-k8s.io/v1alpha2');
  const labelled = obj(
    'ProxmoxMachineTemplate',
    'kept',
    { labels: { 'clusterctl.cluster.x-k8s.io/move': '' } },
    'infrastructure.cluster.x-k8s.io/v1alpha2',
  );
  const secrets = [
    secret('c1-kubeconfig', own(cluster)),
    secret('c1-ca'),
    secret('c1-talos'),
    secret('c1-something'),
    secret('c1-creds', own(labelled)),
    { ...secret('c1-etcd'), metadata: { ...secret('c1-etcd').metadata, namespace: 'elsewhere' } },
  ];
  const r = selectGraph({
    custom: [cluster, md, ms, m, orphan, cls, topo, other, labelled],
    secrets,
    configMaps: [],
  });
  const reasons = Object.fromEntries(
    r.selected.map((s) => [
      `${s.object.kind} ${s.object.metadata.namespace}/${s.object.metadata.name}`,
      s.reason,
    ]),
  );

  it('follows ownerRef chains from each Cluster to any depth', () => {
    expect(reasons['Machine ns/c1-m']).toBe('owner-chain');
    expect(reasons['MachineSet ns/c1-ms']).toBe('owner-chain');
  });

  it('carries soft-owned Secrets by name suffix, the unowned <cluster>-talos (H14), and moved labels', () => {
    expect(reasons['Secret ns/c1-ca']).toBe('soft-owned-secret');
    expect(reasons['Secret ns/c1-talos']).toBe('talos-secret');
    expect(reasons['Secret ns/c1-kubeconfig']).toBe('soft-owned-secret');
    expect(reasons['ProxmoxMachineTemplate ns/kept']).toBe('move-label');
    expect(reasons['Secret ns/c1-creds']).toBe('owner-chain');
  });

  it('leaves out what no chain reaches, a suffix move does not know, and other namespaces, and says so for CAPI objects', () => {
    expect(reasons['Secret ns/c1-something']).toBeUndefined();
    expect(reasons['Secret elsewhere/c1-etcd']).toBeUndefined();
    expect(reasons['ProxmoxMachineTemplate ns/free']).toBeUndefined();
    expect(r.leftBehind).toEqual([
      'Machine ns/stray (labelled for cluster c1, but no ownerRef chain leads to it)',
      'ProxmoxMachineTemplate ns/free',
    ]);
  });

  it('carries ClusterClasses as roots', () => {
    expect(reasons['ClusterClass ns/gold']).toBe('root');
    expect(reasons['Cluster ns/c2']).toBe('root');
  });
});
