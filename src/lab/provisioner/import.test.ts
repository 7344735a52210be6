import { beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../snapshot/load.js';
import type { Snapshot } from '../../snapshot/model.js';
import { copiedPods, importItems, labNode, labPod, REAL_ADDRESS_ANNOTATION } from './import.js';
import { talosMirrorPods, talosNode } from './talos.js';

let snapshot: Snapshot;
beforeAll(async () => {
  snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
});

describe('snapshot import', () => {
  it('loads namespaces first and workloads without identity, status or owners', () => {
    const items = importItems(snapshot, 'examples/lab-cluster');
    expect(items[0]!.path).toBe('/api/v1/namespaces');
    const checkout = items.find((i) => i.what === 'Deployment shop/checkout');
    expect(checkout?.path).toBe('/apis/apps/v1/namespaces/shop/deployments');
    expect(checkout?.body.metadata).not.toHaveProperty('uid');
    expect(checkout?.body.metadata).not.toHaveProperty('resourceVersion');
    expect(checkout?.body).not.toHaveProperty('status');
    expect(checkout?.body.spec.replicas).toBe(2);
    expect(items.some((i) => i.path.includes('/replicasets'))).toBe(false);
    expect(items.find((i) => i.what === 'PodDisruptionBudget shop/checkout')?.body.spec).toEqual({
      minAvailable: 2,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'checkout' } },
    });
  });

  it('gives nodes their lab address, keeps the real one in an annotation, drops conditions', () => {
    const real = snapshot.resources.nodes.find((n) => n.metadata.name === 'worker-3')!;
    const n = labNode(real, '127.0.33.103', 'x');
    expect(n.status.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.33.103' },
      { type: 'Hostname', address: 'worker-3' },
    ]);
    expect(n.metadata.annotations?.[REAL_ADDRESS_ANNOTATION]).toBe('10.20.0.23');
    expect(n.status.conditions).toBeUndefined();
    expect(n.status.allocatable.cpu).toBe(real.status.allocatable.cpu);
    expect(n.metadata.labels?.['lab.example/pool']).toBe('data');
    // The real address appears once: in the annotation, never as an address to dial.
    expect(JSON.stringify(n).split('10.20.0.23').length - 1).toBe(1);
  });

  it('copies bare and mirror pods only, mirror pods re-owned by the new Node', () => {
    const copied = copiedPods(snapshot).map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
    expect(copied).toContain('default/netshoot');
    expect(copied).toContain('kube-system/kube-apiserver-cp-1');
    expect(copied.some((p) => p.startsWith('shop/api-'))).toBe(false);
    const mirror = snapshot.resources.pods.find((p) => p.metadata.name === 'etcd-cp-1')!;
    expect(labPod(mirror, new Map([['cp-1', 'new-uid']]), 'x')?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Node',
      name: 'cp-1',
      uid: 'new-uid',
    });
    expect(labPod(mirror, new Map(), 'x')).toBeUndefined();
  });
});

describe('Talos nodes', () => {
  it('look like Talos: os image, containerd, control-plane labels and taint', () => {
    const n = talosNode({
      name: 'talos-cp-1',
      role: 'control-plane',
      labAddress: '127.0.33.4',
      realAddress: '10.20.0.31',
      talosVersion: 'v1.13.9',
      kubeletVersion: 'v1.32.4',
    });
    expect(n.status.nodeInfo).toMatchObject({
      osImage: 'Talos (v1.13.9)',
      containerRuntimeVersion: 'containerd://2.2.7',
      kubeletVersion: 'v1.32.4',
    });
    expect(n.metadata.labels).toMatchObject({
      'node-role.kubernetes.io/control-plane': '',
      'node.kubernetes.io/exclude-from-external-load-balancers': '',
    });
    expect(n.spec.taints).toEqual([{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]);
    const w = talosNode({
      name: 'w',
      role: 'worker',
      labAddress: '127.0.33.110',
      realAddress: undefined,
      talosVersion: 'v1.14.0',
      kubeletVersion: 'v1.32.4',
      labels: { 'lab.example/pool': 'data' },
    });
    expect(w.spec.taints).toBeUndefined();
    expect(w.metadata.labels?.['lab.example/pool']).toBe('data');
    expect(w.status.nodeInfo.containerRuntimeVersion).toBe('containerd://2.3.3');
  });

  it('have Talos mirror pods for the control-plane components', () => {
    const n = talosNode({
      name: 't1',
      role: 'control-plane',
      labAddress: '127.0.33.4',
      realAddress: undefined,
      talosVersion: 'v1.13.9',
      kubeletVersion: 'v1.32.4',
    });
    n.metadata.uid = 'u1';
    const pods = talosMirrorPods(n, 'v1.32.4');
    expect(pods.map((p) => p.metadata.name)).toEqual([
      'kube-apiserver-t1',
      'kube-controller-manager-t1',
      'kube-scheduler-t1',
    ]);
    expect(pods[0]!.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Talos');
    expect(pods[0]!.spec.nodeName).toBe('t1');
  });
});
