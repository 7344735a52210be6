import { describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { obj } from '../testing.js';
import { controlPlaneEndpointMissing, lbBackends, vipOnControlPlane } from './endpoint.js';
import { CONTROL_PLANES } from './testing-etcd.js';
import {
  buildSnapshot,
  clusterConfiguration,
  configMap,
  contextOf,
  controlPlanePods,
  daemonSet,
  etcdPod,
  findings,
  node,
  staticPod,
} from './testing-network.js';

const kubeconfig = (server: string) =>
  `apiVersion: v1\nkind: Config\nclusters:\n- name: ""\n  cluster:\n    server: ${server}\n`;

describe('endpoint.control-plane-endpoint-missing', () => {
  it('does not fire for a load-balanced endpoint (example cluster)', async () => {
    expect(controlPlaneEndpointMissing.check(contextOf(await exampleSnapshot()))).toEqual([]);
    expect(controlPlaneEndpointMissing.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires when kubeadm-config has no controlPlaneEndpoint, quoting what clients use', () => {
    const s = buildSnapshot({
      cc: clusterConfiguration({ controlPlaneEndpoint: undefined }),
      resources: {
        configmaps: [
          configMap('kube-public', 'cluster-info', { kubeconfig: kubeconfig('https://10.0.0.11:6443') }),
        ],
      },
    });
    const f = findings(controlPlaneEndpointMissing.check(contextOf(s)))[0]!;
    expect(f.message).toContain("Clients use https://10.0.0.11:6443 (cp-1's own address)");
    expect(f.evidence[0]).toMatchObject({ kind: 'file', field: 'controlPlaneEndpoint', observed: '(empty)' });
  });

  it("fires when the endpoint is one control plane's address", () => {
    const s = buildSnapshot({ cc: clusterConfiguration({ controlPlaneEndpoint: '10.0.0.12:6443' }) });
    const f = findings(controlPlaneEndpointMissing.check(contextOf(s)))[0]!;
    expect(f.field).toBe('single-node');
    expect(f.message).toContain('control plane cp-2');
  });

  it('fires for a cluster-info copy that points at one node while the endpoint is fine', () => {
    const s = buildSnapshot({
      resources: {
        configmaps: [
          configMap('kube-public', 'cluster-info', { kubeconfig: kubeconfig('https://10.0.0.11:6443') }),
        ],
      },
    });
    const f = findings(controlPlaneEndpointMissing.check(contextOf(s)))[0]!;
    expect(f.subject).toMatchObject({ kind: 'ConfigMap', namespace: 'kube-public', name: 'cluster-info' });
    expect(f.remediation).toContain('https://api.test.example:6443');
  });

  it('is skipped without kubeadm-config', () => {
    expect(controlPlaneEndpointMissing.check(contextOf(buildSnapshot({ cc: null })))).toMatchObject({
      kind: 'skipped',
    });
  });
});

describe('endpoint.vip-on-control-plane', () => {
  const kubeVip = daemonSet('kube-system', 'kube-vip', {
    podSpec: { containers: [{ name: 'kube-vip', image: 'ghcr.io/kube-vip/kube-vip:v0.8.0' }] },
  });
  const vipPod = (nodeName: string) =>
    obj('Pod', `kube-vip-${nodeName}`, {
      namespace: 'kube-system',
      metadata: {
        name: `kube-vip-${nodeName}`,
        namespace: 'kube-system',
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'DaemonSet',
            name: 'kube-vip',
            uid: 'uid-ds-kube-vip',
            controller: true,
          },
        ],
      },
      spec: { nodeName, containers: [{ name: 'kube-vip', image: 'ghcr.io/kube-vip/kube-vip:v0.8.0' }] },
    });

  it('fires for kube-vip pods on the control planes, once per DaemonSet', () => {
    const s = buildSnapshot({
      resources: { daemonsets: [kubeVip], pods: [vipPod('cp-1'), vipPod('cp-2'), vipPod('worker-1')] },
    });
    const fs = findings(vipOnControlPlane.check(contextOf(s)));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.message).toContain(
      'DaemonSet kube-system/kube-vip runs ghcr.io/kube-vip/kube-vip:v0.8.0 on control plane(s) cp-1, cp-2',
    );
    expect(fs[0]!.remediation).toContain('Layer2VIPConfig');
  });

  it('fires for a keepalived manifest copied from a control plane', () => {
    const pods = [
      ...CONTROL_PLANES.flatMap(([n, ip]) => [...controlPlanePods(n, ip), etcdPod(n, ip)]),
      staticPod('keepalived', 'cp-1', [], 'osixia/keepalived:2.0.20'),
    ];
    const fs = findings(vipOnControlPlane.check(contextOf(buildSnapshot({ staticPods: pods }))));
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'file',
      path: 'fixtures/cluster/manifests/cp-1/keepalived.yaml',
    });
  });

  it('is skipped (not passed) when nothing runs as a pod: host services are invisible', async () => {
    const r = vipOnControlPlane.check(contextOf(await exampleSnapshot()));
    expect(r).toMatchObject({ kind: 'skipped' });
    expect((r as { howToProvide: string }).howToProvide).toContain('k8s-api.lab.example');
  });

  it('does not apply when the endpoint is a node address', () => {
    const s = buildSnapshot({ cc: clusterConfiguration({ controlPlaneEndpoint: '10.0.0.11:6443' }) });
    expect(vipOnControlPlane.check(contextOf(s))).toMatchObject({ kind: 'not-applicable' });
  });
});

describe('endpoint.lb-backends', () => {
  it('lists the current backends with their sources', async () => {
    const f = findings(lbBackends.check(contextOf(await exampleSnapshot())))[0]!;
    expect(f.message).toContain('cp-1 10.20.0.11:6443, cp-2 10.20.0.12:6443, cp-3 10.20.0.13:6443');
    expect(f.evidence[0]).toMatchObject({
      kind: 'flag',
      component: 'kube-apiserver',
      flag: 'advertise-address',
    });
  });

  it('falls back to Node addresses and says which control planes have none', () => {
    const s = buildSnapshot({
      staticPods: [],
      resources: {
        nodes: [node('cp-1', { ip: '10.0.0.11', controlPlane: true }), node('cp-2', { controlPlane: true })],
      },
    });
    const f = findings(lbBackends.check(contextOf(s)))[0]!;
    expect(f.message).toContain('cp-1 10.0.0.11:6443');
    expect(f.message).toContain('no address known for cp-2');
  });

  it('does not apply without a load balancer', () => {
    const s = buildSnapshot({ cc: clusterConfiguration({ controlPlaneEndpoint: '10.0.0.11:6443' }) });
    expect(lbBackends.check(contextOf(s))).toMatchObject({ kind: 'not-applicable' });
  });
});
