import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import type { FleetCluster, FleetManagement } from './config.js';
import { fleetMembers, foundClusters } from './discover.js';

const mgmt = (name: string, labels: Record<string, string> = {}): FleetManagement => ({
  name,
  kubeconfig: { path: `/k/${name}.conf`, shown: `${name}.conf` },
  labels,
});
const cluster = (namespace: string, name: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { namespace, name, ...(labels && { labels }) },
});
const listed = (name: string): FleetCluster => ({
  name,
  source: { kind: 'snapshot', dir: `/s/${name}`, shown: name },
  labels: {},
});

describe('fleet members from management clusters', () => {
  it("keeps a Cluster's name when it is free, the entry's labels under the Cluster's own", () => {
    const eu = mgmt('mgmt-eu', { provider: 'capi', wave: '3' });
    const members = fleetMembers(
      [listed('lab')],
      [{ kind: 'found', clusters: foundClusters(eu, [cluster('fleet', 'prod-eu-1', { wave: '2' })]) }],
    );
    expect(members).toEqual([
      listed('lab'),
      {
        name: 'prod-eu-1',
        source: { kind: 'capi', management: eu, namespace: 'fleet', cluster: 'prod-eu-1' },
        labels: { provider: 'capi', wave: '2' },
      },
    ]);
  });

  it('puts the namespace, then the management name, in front of a name used twice or already taken', () => {
    const eu = mgmt('eu');
    const us = mgmt('us');
    const members = fleetMembers(
      [listed('lab'), listed('a-lab')],
      [
        {
          kind: 'found',
          clusters: foundClusters(eu, [cluster('b', 'db'), cluster('a', 'db'), cluster('a', 'lab')]),
        },
        { kind: 'found', clusters: foundClusters(us, [cluster('a', 'db'), cluster('c', 'web')]) },
      ],
    );
    expect(members.map((m) => m.name)).toEqual([
      'lab',
      'a-lab',
      'a-db',
      'eu-a-lab',
      'b-db',
      'us-a-db',
      'web',
    ]);
  });

  it('numbers a name that no prefix makes a free DNS label', () => {
    const m = mgmt('m');
    const long = 'x'.repeat(60);
    const members = fleetMembers(
      [listed(long)],
      [{ kind: 'found', clusters: foundClusters(m, [cluster('ns-with-a-long-name', long)]) }],
    );
    expect(members.map((x) => x.name)).toEqual([long, `${'x'.repeat(50)}-2`]);
  });

  it('sorts by namespace, then name, and takes a Cluster without a namespace as in default', () => {
    const m = mgmt('m');
    const noNs: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'z' },
    };
    expect(
      foundClusters(m, [cluster('b', 'a'), noNs, cluster('a', 'b')]).map((f) => `${f.namespace}/${f.name}`),
    ).toEqual(['a/b', 'b/a', 'default/z']);
  });

  it('makes a management cluster that could not be listed one member that says so, its name kept from the Clusters', () => {
    const gone = mgmt('gone', { provider: 'capi' });
    const members = fleetMembers(
      [],
      [
        { kind: 'found', clusters: foundClusters(mgmt('m'), [cluster('x', 'gone')]) },
        { kind: 'unlisted', management: gone, reason: 'connection refused' },
      ],
    );
    expect(members).toEqual([
      expect.objectContaining({ name: 'x-gone' }),
      {
        name: 'gone',
        source: { kind: 'unlisted', management: gone, reason: 'connection refused' },
        labels: { provider: 'capi' },
      },
    ]);
  });
});
