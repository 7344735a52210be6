import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import { clusterVersions, describeVersions } from './versions.js';

const node = (name: string, kubeletVersion: string, osImage: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { nodeInfo: { kubeletVersion, osImage } },
});

describe('a cluster’s versions from its Nodes', () => {
  it('kubelet versions counted, Talos versions read from osImage, the rest counted as not Talos', () => {
    const v = clusterVersions([
      node('cp-1', 'v1.31.4', 'Talos (v1.9.5)'),
      node('cp-2', 'v1.31.4', 'Talos (v1.9.5)'),
      node('w-10', 'v1.30.9', 'Debian GNU/Linux 12 (bookworm)'),
      node('w-2', 'v1.30.10', 'Talos (v1.10.0-beta.1)'),
    ]);
    expect(v).toEqual({
      kind: 'observed',
      nodes: 4,
      kubernetes: [
        { version: 'v1.30.9', nodes: 1 },
        { version: 'v1.30.10', nodes: 1 },
        { version: 'v1.31.4', nodes: 2 },
      ],
      talos: [
        { version: 'v1.9.5', nodes: 2 },
        { version: 'v1.10.0-beta.1', nodes: 1 },
      ],
      notTalos: 1,
    });
    expect(describeVersions(v)).toBe(
      'kubernetes v1.30.9 (1), v1.30.10 (1), v1.31.4 (2); talos v1.9.5 (2), v1.10.0-beta.1 (1) on 3/4 nodes',
    );
  });

  it('one version each reads plainly; a cluster not on Talos yet says so', () => {
    const talos = clusterVersions([
      node('a', 'v1.32.4', 'Talos (v1.10.3)'),
      node('b', 'v1.32.4', 'Talos (v1.10.3)'),
    ]);
    expect(describeVersions(talos)).toBe('kubernetes v1.32.4; talos v1.10.3 on 2/2 nodes');
    const kubeadm = clusterVersions([node('a', 'v1.29.1', 'Ubuntu 22.04.4 LTS')]);
    expect(describeVersions(kubeadm)).toBe('kubernetes v1.29.1; no Talos node (1 nodes)');
  });

  it('a node without nodeInfo is counted as unknown, not skipped; "Talos" alone is no version', () => {
    const v = clusterVersions([
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'x' } },
      node('y', '', 'Talos'),
    ]);
    expect(v).toMatchObject({
      nodes: 2,
      kubernetes: [{ version: 'unknown', nodes: 2 }],
      talos: [],
      notTalos: 2,
    });
    expect(describeVersions(clusterVersions([]))).toBe('no nodes');
    expect(describeVersions({ kind: 'not-observed', reason: 'connect ECONNREFUSED' })).toBe(
      'versions not observed: connect ECONNREFUSED',
    );
  });
});
